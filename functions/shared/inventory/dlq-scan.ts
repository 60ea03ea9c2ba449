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
import { sleep as realSleep } from '#platform/sleep.js';
import type { SqsQueues } from '#platform/sqs-queues.js';

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
  /**
   * A message received again in this scan (its visibility timeout ended first), with its new
   * receipt handle. Returns true when the caller keeps that handle (a message it consumed but has
   * not deleted yet: SQS deletes a message only with its latest receipt handle); otherwise the
   * scan holds it.
   */
  receivedAgain?: (message: Message) => boolean;
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
          if (!options.receivedAgain?.(m)) held.push(m.ReceiptHandle as string);
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

/** Options of {@link scanUntilFound}. */
export interface ScanUntilFoundOptions extends ScanOptions {
  /** Extra scans after waiting out a visibility timeout. @default 2 */
  rescans?: number;
  sleep?: (ms: number) => Promise<void>;
  /**
   * Called when each scan ends without an error, before `pending()` is read: a visitor that
   * answered `'consumed'` for messages it keeps to handle together (Park's batches of 10) handles
   * the rest of them here, before the scan's end counts what is still missing or sleeps.
   */
  settle?: () => Promise<void>;
}

/** What {@link scanUntilFound} saw: the scans' totals, what is still pending and the DLQ's in-flight count. */
export interface ScanUntilFoundResult extends ScanResult {
  /** `pending()` after the last scan. */
  pending: number;
  /** ApproximateNumberOfMessagesNotVisible after the last scan (0 when nothing was pending). */
  inFlight: number;
  /** ApproximateNumberOfMessages after the last scan (0 when nothing was pending). */
  visible: number;
}

/**
 * {@link scanDlq} for steps that must find particular messages (Park's do-not-redrive messages,
 * SampleRedrive's unfinished ledger entries). A scan can miss one for two reasons, and neither
 * means the message is gone: another receiver holds it invisible (a crashed attempt's receive, an
 * SRE polling in the console), or SQS's short poll answered empty while messages remained. So the
 * scans long-poll (1 s) before calling the DLQ empty, and while `pending()` is above 0 and the
 * DLQ reports messages in flight, wait one visibility timeout and scan again (`rescans` times).
 * The caller decides what a message still pending with messages in flight means (it must not
 * be left for the bulk move).
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-short-and-long-polling.html
 */
export async function scanUntilFound(
  queues: Pick<SqsQueues, 'receive' | 'changeVisibility' | 'describe'>,
  options: ScanUntilFoundOptions,
  visit: (batch: Message[]) => Promise<{ results: Map<string, VisitResult>; stop?: boolean }>,
  pending: () => number,
): Promise<ScanUntilFoundResult> {
  const sleep = options.sleep ?? realSleep;
  const total: ScanUntilFoundResult = {
    received: 0,
    consumed: 0,
    released: 0,
    truncated: false,
    pending: 0,
    inFlight: 0,
    visible: 0,
  };
  const scanOptions: ScanOptions = { waitTimeSeconds: 1, emptyReceives: 1, ...options };
  for (let pass = 0; ; pass++) {
    const scan = await scanDlq(queues, scanOptions, visit);
    await options.settle?.();
    total.received += scan.received;
    total.consumed += scan.consumed;
    total.released += scan.released;
    total.truncated = scan.truncated;
    total.pending = pending();
    if (total.pending === 0 || scan.truncated) return { ...total, inFlight: 0, visible: 0 };
    const depth = await queues.describe(options.queueUrl);
    total.inFlight = depth.inFlight;
    total.visible = depth.visible;
    if (total.inFlight === 0 || pass >= (options.rescans ?? 2)) return total;
    await sleep(options.visibilityTimeoutSeconds * 1000 + 250);
  }
}
