/**
 * Who owns the DLQ's move task: item `DLQ#<dlqArn>` / `MOVETASK`, written by the ramp around each
 * StartMessageMoveTask, so a task is the pipeline's by record, never by a timing guess:
 *
 * 1. before the call, the **intent**: the run (incident, execution), which start of the run it is
 *    (`seq`: 1 for the first, +1 per step-up or resume), the rate, the destination and when it was
 *    asked for (`requestedAt`);
 * 2. after the call, the **handle** SQS returned.
 *
 * A retried step (a Lambda crash or timeout between the call and its result) finds its own intent
 * (same run, same `seq`) and adopts the task by the recorded handle, or, when it crashed between
 * the call and the record, the single task whose start follows the intent and whose rate and
 * destination match it. Any other task (a console redrive, another tool) is someone else's: the
 * run refuses and names it. The record also outlives the execution: whoever finds it after the
 * execution ended (RecordFailure, the execution-ended function, the next run's Preflight) knows
 * which run started the task.
 *
 * The per-DLQ workflow lease already keeps other runs away, so the writes are plain puts and
 * updates conditioned on the owner, not a lock.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { asTransient, isConditionalCheckFailed } from '#platform/errors.js';
import { recordFields, shapeOf } from '#platform/record-shapes.js';
import { keys } from '#platform/table.js';
import type { MoveTask, MoveTasks } from './move-tasks.js';

/** The run that asked for a task. */
export interface MoveTaskOwner {
  incidentId: string;
  /** `$$.Execution.Name` (the incident id on a direct invocation). */
  executionName: string;
}

/** `DLQ#<dlqArn>` / `MOVETASK`. */
export interface MoveTaskRecord extends MoveTaskOwner {
  dlqArn: string;
  /** Which start of the run: 1 for the first, +1 per step-up or resume. */
  seq: number;
  /** MaxNumberOfMessagesPerSecond asked for, and its index in the plan's `rampRates`. */
  rate: number;
  rateIndex: number;
  destinationArn: string | null;
  /** When the step asked for the task (before calling SQS), epoch milliseconds. */
  requestedAt: number;
  /** The handle SQS returned; null until the call came back. */
  taskHandle: string | null;
  /** ISO-8601. */
  updatedAt: string;
}

/** The record port. */
export interface MoveTaskRecords {
  get(dlqArn: string): Promise<MoveTaskRecord | undefined>;
  /** Records the intent of one start (replaces the previous start's record). */
  recordIntent(record: Omit<MoveTaskRecord, 'taskHandle' | 'updatedAt'>): Promise<void>;
  /** Records the handle of the start `seq` of `owner`; a no-op when the record is another start's. */
  recordHandle(dlqArn: string, owner: MoveTaskOwner, seq: number, taskHandle: string): Promise<void>;
}

/** True when `record` is the intent of start `seq` of `owner` (a retry of the same step). */
export function isOwnIntent(record: MoveTaskRecord | undefined, owner: MoveTaskOwner, seq: number): boolean {
  return (
    record !== undefined &&
    record.incidentId === owner.incidentId &&
    record.executionName === owner.executionName &&
    record.seq === seq
  );
}

/**
 * The DynamoDB-backed record store.
 * @param options.tableName - @default the configured table (`TABLE_NAME`)
 */
export function createMoveTaskRecords(
  options: { client?: DynamoDBDocumentClient; tableName?: string; now?: () => Date } = {},
): MoveTaskRecords {
  const client = () => options.client ?? documentClient();
  const table = () => options.tableName ?? pipelineConfig().tableName;
  const now = () => (options.now ? options.now() : new Date()).toISOString();
  const key = (dlqArn: string) => ({ pk: keys.dlq(dlqArn), sk: keys.moveTask });
  return {
    async get(dlqArn) {
      try {
        const out = await client().send(
          new GetCommand({ TableName: table(), Key: key(dlqArn), ConsistentRead: true }),
        );
        if (!out.Item) return undefined;
        return recordFields<MoveTaskRecord>('move-task-record', out.Item, `move task record of ${dlqArn}`);
      } catch (error) {
        throw asTransient('dynamodb:GetItem (move task record)', error);
      }
    },
    async recordIntent(record) {
      try {
        await client().send(
          new PutCommand({
            TableName: table(),
            Item: {
              ...key(record.dlqArn),
              entity: 'moveTaskRecord',
              ...shapeOf('move-task-record'),
              ...record,
              taskHandle: null,
              updatedAt: now(),
            },
          }),
        );
      } catch (error) {
        throw asTransient('dynamodb:PutItem (move task intent)', error);
      }
    },
    async recordHandle(dlqArn, owner, seq, taskHandle) {
      try {
        await client().send(
          new UpdateCommand({
            TableName: table(),
            Key: key(dlqArn),
            UpdateExpression: 'SET taskHandle = :h, updatedAt = :now',
            ConditionExpression: 'incidentId = :i AND executionName = :e AND seq = :seq',
            ExpressionAttributeValues: {
              ':h': taskHandle,
              ':now': now(),
              ':i': owner.incidentId,
              ':e': owner.executionName,
              ':seq': seq,
            },
          }),
        );
      } catch (error) {
        if (isConditionalCheckFailed(error)) return;
        throw asTransient('dynamodb:UpdateItem (move task handle)', error);
      }
    },
  };
}

/**
 * The task among `tasks` that the record attributes to its run: by the recorded handle (SQS lists a
 * handle only while a task is RUNNING); a task listed without a handle (CANCELLING, ended), or any
 * task when the run crashed between the call and the record, by the record's rate and destination
 * and a start that follows the intent.
 */
export function recordedTask(record: MoveTaskRecord, tasks: readonly MoveTask[]): MoveTask | undefined {
  const matches = (t: MoveTask) =>
    t.rate === record.rate &&
    (t.destinationArn ?? null) === record.destinationArn &&
    (t.startedAt ?? 0) >= record.requestedAt - 2000;
  return tasks.find((t) =>
    t.taskHandle && record.taskHandle ? t.taskHandle === record.taskHandle : matches(t),
  );
}

/** A task that outlived the run that started it, and what was done with it. */
export interface OrphanedTask {
  taskHandle: string;
  /** ApproximateNumberOfMessagesMoved when it was cancelled. */
  moved: number;
  /** False when SQS no longer let it be cancelled (it ended meanwhile). */
  cancelled: boolean;
}

/**
 * Cancels the move task a run started if it is still running after the run ended without
 * supervising it (RecordFailure, an aborted or timed-out execution): no health gate watches it
 * any more, so it must not go on moving messages into a consumer nobody checks. Only a task the
 * record attributes to `owner` is touched; a task someone else started is left alone.
 *
 * @returns the task cancelled, or null when the record names no running task of `owner`.
 */
export async function cancelOrphanedTask(
  dlqArn: string,
  owner: MoveTaskOwner,
  ports: { records: Pick<MoveTaskRecords, 'get'>; moveTasks: Pick<MoveTasks, 'list' | 'cancel'> },
): Promise<OrphanedTask | null> {
  const record = await ports.records.get(dlqArn);
  if (!record || record.incidentId !== owner.incidentId || record.executionName !== owner.executionName)
    return null;
  const tasks = await ports.moveTasks.list(dlqArn);
  const running = recordedTask(
    record,
    tasks.filter((t) => t.status === 'RUNNING'),
  );
  if (!running?.taskHandle) return null;
  const result = await ports.moveTasks.cancel(running.taskHandle);
  return {
    taskHandle: running.taskHandle,
    moved: result.moved ?? running.moved,
    cancelled: result.cancelled,
  };
}
