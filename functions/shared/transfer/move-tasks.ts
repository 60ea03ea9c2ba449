/**
 * Adapters for SQS message move tasks (the API behind "Start DLQ redrive"): ListMessageMoveTasks,
 * StartMessageMoveTask and CancelMessageMoveTask, with SDK errors turned into data at this boundary
 *:
 *
 * - only one task may be active per source (DLQ) ARN; `RUNNING` and `CANCELLING` both count as
 *   active, so {@link activeTask} looks at every non-terminal status, not only RUNNING;
 * - a Start that fails with `InvalidParameterValue` while a task is active becomes the same refusal
 *   as the pre-check ("redrive refused: task <handle> already active"), matched on the error code,
 *   never the message text, and is returned as data so the workflow does not retry it;
 * - `CancelMessageMoveTask` only works on a RUNNING task; a running task's rate cannot change, so a
 *   step-up is cancel then start;
 * - a task's `TaskHandle` is only returned while it is RUNNING.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ListMessageMoveTasks.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CancelMessageMoveTask.html
 */
import {
  CancelMessageMoveTaskCommand,
  ListMessageMoveTasksCommand,
  type ListMessageMoveTasksResultEntry,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { sqsClient } from '#platform/clients.js';
import { asTransient, awsErrorName, errorMessage } from '#platform/errors.js';
import { MAX_MOVE_TASK_RATE } from './redrive-plan.js';

/** Status values of a move task as SQS reports them. */
export type MoveTaskStatus = 'RUNNING' | 'COMPLETED' | 'CANCELLING' | 'CANCELLED' | 'FAILED';

/** Statuses in which a task still blocks a new Start on the same source. */
export const ACTIVE_MOVE_TASK_STATUSES: readonly MoveTaskStatus[] = ['RUNNING', 'CANCELLING'];

/** One move task, as {@link MoveTasks.list} returns it. */
export interface MoveTask {
  /** Present only while RUNNING (SQS omits it otherwise). */
  taskHandle: string | null;
  status: MoveTaskStatus | string;
  sourceArn: string;
  destinationArn: string | null;
  /** MaxNumberOfMessagesPerSecond, messages per second (null when SQS chose it). */
  rate: number | null;
  /** ApproximateNumberOfMessagesMoved. */
  moved: number;
  /** ApproximateNumberOfMessagesToMove (count at task start). */
  toMove: number | null;
  /** e.g. `AWS.SimpleQueueService.NonExistentQueue` when FAILED. */
  failureReason: string | null;
  /** StartedTimestamp, epoch milliseconds. */
  startedAt: number | null;
}

/** Result of {@link MoveTasks.start}: a handle, or a refusal as data. */
export type StartMoveTaskResult =
  | { ok: true; taskHandle: string }
  | { ok: false; code: 'TASK_ACTIVE' | 'REJECTED' | 'NOT_FOUND' | 'RATE_ABOVE_MAX'; refusal: string };

/** The move-task port. */
export interface MoveTasks {
  /** The most recent tasks of a source, newest first (ListMessageMoveTasks, up to 10). */
  list(sourceArn: string): Promise<MoveTask[]>;
  /**
   * Starts a task at `rate` messages per second. `destinationArn` omitted: each message returns to
   * its own DeadLetterQueueSourceArn. A rate above 500 is refused before the call.
   */
  start(input: {
    sourceArn: string;
    destinationArn?: string | null;
    rate: number;
  }): Promise<StartMoveTaskResult>;
  /**
   * Cancels a RUNNING task. Returns `{ cancelled: false }` when the task is no longer RUNNING.
   * @returns messages moved so far, when SQS reports it.
   */
  cancel(taskHandle: string): Promise<{ cancelled: boolean; moved: number | null }>;
}

/** The first active (RUNNING or CANCELLING) task, or undefined. */
export function activeTask(tasks: readonly MoveTask[]): MoveTask | undefined {
  return tasks.find((t) => (ACTIVE_MOVE_TASK_STATUSES as readonly string[]).includes(t.status));
}

/** The refusal text for an active task, shared by the pre-check and the Start error mapping. */
export function activeTaskRefusal(task: MoveTask | undefined): string {
  const handle =
    task?.taskHandle ?? (task ? `${task.status.toLowerCase()} since ${task.startedAt ?? '?'}` : 'unknown');
  return `redrive refused: task ${handle} already active`;
}

/** Maps one ListMessageMoveTasks result entry. */
export function toMoveTask(entry: ListMessageMoveTasksResultEntry): MoveTask {
  return {
    taskHandle: entry.TaskHandle ?? null,
    status: entry.Status ?? 'UNKNOWN',
    sourceArn: entry.SourceArn ?? '',
    destinationArn: entry.DestinationArn ?? null,
    rate: entry.MaxNumberOfMessagesPerSecond ?? null,
    moved: Number(entry.ApproximateNumberOfMessagesMoved ?? 0),
    toMove:
      entry.ApproximateNumberOfMessagesToMove === undefined
        ? null
        : Number(entry.ApproximateNumberOfMessagesToMove),
    failureReason: entry.FailureReason ?? null,
    startedAt: entry.StartedTimestamp === undefined ? null : Number(entry.StartedTimestamp),
  };
}

/** The SQS error code of an SDK error (query-compatible `Code` first, then the error name). */
export function sqsErrorCode(error: unknown): string | undefined {
  const code = (error as { Code?: unknown } | null)?.Code;
  if (typeof code === 'string') return code;
  const name = awsErrorName(error);
  return name?.replace(/Exception$/, '');
}

/**
 * Creates the move-task port.
 * @param options.client - @default the shared SQS client
 */
export function createMoveTasks(options: { client?: SQSClient } = {}): MoveTasks {
  const client = () => options.client ?? sqsClient();

  const list = async (sourceArn: string): Promise<MoveTask[]> => {
    try {
      const out = await client().send(
        new ListMessageMoveTasksCommand({ SourceArn: sourceArn, MaxResults: 10 }),
      );
      return (out.Results ?? []).map(toMoveTask);
    } catch (error) {
      throw asTransient('sqs:ListMessageMoveTasks', error);
    }
  };

  return {
    list,
    async start({ sourceArn, destinationArn, rate }) {
      if (!Number.isInteger(rate) || rate < 1 || rate > MAX_MOVE_TASK_RATE) {
        return { ok: false, code: 'RATE_ABOVE_MAX', refusal: `rate ${rate} is outside 1..max 500 msg/s` };
      }
      try {
        const out = await client().send(
          new StartMessageMoveTaskCommand({
            SourceArn: sourceArn,
            MaxNumberOfMessagesPerSecond: rate,
            ...(destinationArn ? { DestinationArn: destinationArn } : {}),
          }),
        );
        return { ok: true, taskHandle: out.TaskHandle ?? '' };
      } catch (error) {
        const code = sqsErrorCode(error);
        if (code === 'InvalidParameterValue') {
          const active = activeTask(await list(sourceArn));
          if (active) return { ok: false, code: 'TASK_ACTIVE', refusal: activeTaskRefusal(active) };
          return {
            ok: false,
            code: 'REJECTED',
            refusal: `redrive refused: StartMessageMoveTask rejected the request (${errorMessage(error)})`,
          };
        }
        if (code === 'ResourceNotFound')
          return { ok: false, code: 'NOT_FOUND', refusal: `redrive refused: ${errorMessage(error)}` };
        throw asTransient('sqs:StartMessageMoveTask', error);
      }
    },
    async cancel(taskHandle) {
      try {
        const out = await client().send(new CancelMessageMoveTaskCommand({ TaskHandle: taskHandle }));
        return { cancelled: true, moved: out.ApproximateNumberOfMessagesMoved ?? null };
      } catch (error) {
        // Only a RUNNING task can be cancelled: one that just completed or failed is not an error here.
        if (sqsErrorCode(error) === 'InvalidParameterValue') return { cancelled: false, moved: null };
        throw asTransient('sqs:CancelMessageMoveTask', error);
      }
    },
  };
}
