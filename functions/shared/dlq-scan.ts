/**
 * A bounded walk over a DLQ for the workflow's per-message steps (Park, SampleRedrive, VerifySample,
 * CheckProgress peeks): receive 10 at a time, hand each batch to a visitor, and release every
 * message the visitor did not consume (ChangeMessageVisibilityBatch 0) in a `finally`, so a failed
 * step leaves the DLQ as it found it. The number of messages held invisible at once is capped
 * (`maxHeld`) far below SQS's ~120,000 in-flight limit.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html
 */
import type { Message } from '@aws-sdk/client-sqs';
import type { SqsQueues } from './sqs-queues.js';

/** What the visitor did with one message. */
export type VisitResult = 'consumed' | 'hold' | 'release';

/** Options of {@link scanDlq}. */
export interface ScanOptions {
  queueUrl: string;
  /** Visibility timeout of each receive, seconds: how long a crashed step keeps messages hidden. */
  visibilityTimeoutSeconds: number;
  /** Most messages received in total. */
  maxMessages: number;
  /** Most messages held invisible at once (released ones do not count). @default 1000 */
  maxHeld?: number;
  /** Stop after this many consecutive empty receives. @default 2 */
  emptyReceives?: number;
  /** Long-poll wait per receive, seconds. @default 0 */
  waitTimeSeconds?: number;
}

/** What {@link scanDlq} saw. */
export interface ScanResult {
  received: number;
  consumed: number;
  released: number;
  /** True when the scan stopped on a budget rather than on an empty DLQ or the visitor. */
  truncated: boolean;
}

/**
 * Walks the DLQ. The visitor returns `'consumed'` (it deleted the message), `'hold'` (keep it
 * invisible until the end so it is not received again in this scan) or `'release'`, and may return
 * `stop: true` to end the scan.
 */
export async function scanDlq(
  queues: Pick<SqsQueues, 'receive' | 'changeVisibility'>,
  options: ScanOptions,
  visit: (batch: Message[]) => Promise<{ results: Map<string, VisitResult>; stop?: boolean }>,
): Promise<ScanResult> {
  const maxHeld = options.maxHeld ?? 1000;
  const emptyLimit = options.emptyReceives ?? 2;
  const held: string[] = [];
  const seen = new Set<string>();
  const result: ScanResult = { received: 0, consumed: 0, released: 0, truncated: false };
  let empty = 0;
  try {
    while (result.received < options.maxMessages) {
      if (held.length >= maxHeld) {
        result.truncated = true;
        break;
      }
      const batch = await queues.receive(options.queueUrl, {
        visibilityTimeoutSeconds: options.visibilityTimeoutSeconds,
        waitTimeSeconds: options.waitTimeSeconds ?? 0,
      });
      if (batch.length === 0) {
        empty += 1;
        if (empty >= emptyLimit) break;
        continue;
      }
      empty = 0;
      // At-least-once delivery: a message can come twice in one scan; hold the copy, skip the visit.
      const fresh = batch.filter((m) => {
        if (seen.has(m.MessageId as string)) {
          held.push(m.ReceiptHandle as string);
          return false;
        }
        seen.add(m.MessageId as string);
        return true;
      });
      result.received += fresh.length;
      const { results, stop } = await visit(fresh);
      for (const m of fresh) {
        const r = results.get(m.MessageId as string) ?? 'hold';
        if (r === 'consumed') result.consumed += 1;
        else held.push(m.ReceiptHandle as string);
      }
      if (stop) break;
      if (result.received >= options.maxMessages) result.truncated = true;
    }
  } finally {
    if (held.length > 0) {
      const failed = await queues.changeVisibility(options.queueUrl, held, 0);
      result.released += held.length - failed;
    }
  }
  return result;
}
