/**
 * Retention deadlines (DESIGN.md "Retention is a deadline").
 *
 * - Standard DLQ: SQS keeps the original enqueue time when it dead-letters a message, so the
 *   message expires at `SentTimestamp + MessageRetentionPeriod` of the DLQ, often much sooner
 *   than the DLQ's period suggests.
 * - FIFO DLQ: the retention clock restarts when the message enters the DLQ. SQS does not report
 *   that time, so the deadline is an estimate from the best evidence available and is marked
 *   approximate: an explicit `enteredDlqAt` (e.g. the time an earlier scan first saw the message),
 *   else `ApproximateFirstReceiveTimestamp` (first receive in the source queue, which is before the
 *   move: the estimate errs early, never late), else `SentTimestamp`.
 *
 * Deadlines are epoch milliseconds, stored as `retentionDeadline`, never as the table's TTL.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 */

/** 24 hours in milliseconds: the "expires soon" threshold used in summaries and approvals. */
export const EXPIRY_WARNING_MS = 24 * 60 * 60 * 1000;

/** Input of {@link retentionDeadline}. */
export interface RetentionInput {
  /** True for a FIFO DLQ (name ends in `.fifo`). */
  fifo: boolean;
  /** The DLQ's MessageRetentionPeriod, seconds. */
  retentionPeriodSeconds: number;
  /** System attributes as SQS returned them (SentTimestamp, ApproximateFirstReceiveTimestamp, ...). */
  systemAttributes: Record<string, string | undefined>;
  /** Best known time the message entered the DLQ, epoch ms (FIFO only). */
  enteredDlqAt?: number;
  /** Fallback when SQS gave no timestamp at all, epoch ms. */
  now: number;
}

/** A retention deadline, epoch milliseconds, and whether it is an estimate. */
export interface RetentionDeadline {
  deadline: number;
  approximate: boolean;
}

function epochMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/**
 * When the message expires from the DLQ.
 *
 * @returns `{ deadline, approximate }`; `approximate` is always true for FIFO, and true for a
 *   standard queue only when SQS did not return `SentTimestamp`.
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 */
export function retentionDeadline(input: RetentionInput): RetentionDeadline {
  const periodMs = input.retentionPeriodSeconds * 1000;
  const sent = epochMs(input.systemAttributes.SentTimestamp);
  if (!input.fifo) {
    return sent !== undefined
      ? { deadline: sent + periodMs, approximate: false }
      : { deadline: input.now + periodMs, approximate: true };
  }
  const entered =
    input.enteredDlqAt ??
    epochMs(input.systemAttributes.ApproximateFirstReceiveTimestamp) ??
    sent ??
    input.now;
  return { deadline: entered + periodMs, approximate: true };
}

/** True when `deadline` (epoch ms) is less than `windowMs` (default 24 h) after `now`. */
export function expiresWithin(deadline: number, now: number, windowMs: number = EXPIRY_WARNING_MS): boolean {
  return deadline - now < windowMs;
}
