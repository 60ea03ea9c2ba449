/**
 * Step Functions callback port for the approval task token, and its adapter over the SDK.
 *
 * A task token completes its task once. `SendTaskSuccess` on a token whose state timed out, whose
 * execution ended or that was already used fails with `TaskTimedOut` ("Provided task does not
 * exist anymore") or `TaskDoesNotExist`; a garbled token fails with `InvalidToken`. The
 * adapter turns those three into {@link TaskClosedError} so the caller closes the approval
 * instead of retrying.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_SendTaskSuccess.html
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/connect-to-resource.html#connect-wait-token
 */
import { SendTaskSuccessCommand, type SFNClient } from '@aws-sdk/client-sfn';
import type { ApprovalDecision } from '#approval/approval-store.js';
import { awsErrorName, TaskClosedError, type TaskClosedReason } from '#platform/errors.js';

/** The RequestApproval task's output, `$.approval` in the execution (see docs/contracts.md). */
export interface ApprovalOutput {
  decision: ApprovalDecision;
  /** Slack username of whoever decided (also for a rejection). */
  approvedBy: string | null;
  reason: string | null;
}

/** The callback port: a fake records calls in tests; the local runner resolves its own token. */
export interface TaskCallbacks {
  /**
   * Completes the waiting task with `output`.
   * @throws TaskClosedError when the task no longer exists (timed out, already completed, bad token).
   */
  sendTaskSuccess(taskToken: string, output: ApprovalOutput): Promise<void>;
}

const CLOSED: Record<string, TaskClosedReason> = {
  TaskTimedOut: 'task-timed-out',
  TaskDoesNotExist: 'task-does-not-exist',
  InvalidToken: 'invalid-token',
};

/** Maps an SDK error to {@link TaskClosedError} when it says the task is gone; else returns it unchanged. */
export function asTaskClosed(error: unknown): unknown {
  const name = awsErrorName(error) ?? (error as { name?: string } | null)?.name;
  const reason = name ? CLOSED[name] : undefined;
  return reason ? new TaskClosedError(reason, error) : error;
}

/**
 * The Step Functions adapter.
 *
 * @param sfn - a Step Functions client (the shared one in Lambda).
 * @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_SendTaskSuccess.html
 */
export function createTaskCallbacks(sfn: SFNClient): TaskCallbacks {
  return {
    async sendTaskSuccess(taskToken, output) {
      try {
        await sfn.send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify(output) }));
      } catch (error) {
        throw asTaskClosed(error);
      }
    },
  };
}
