/**
 * DLQs with their own RedrivePolicy (a DLQ that dead-letters onward to a next DLQ): every receive
 * of the pipeline's, peeks included, counts toward that policy's maxReceiveCount, and a message
 * received past it leaves for the next DLQ, out of this pipeline's reach. So the pipeline counts
 * the receives it can still afford per message and never makes one more.
 *
 * The rule: after any pipeline peek, a message's receive count stays at most
 * `maxReceiveCount - 1`. A peek costs one receive (its release, a visibility change, is not a
 * receive; the receive that would take the count past maxReceiveCount moves the message instead
 * of returning it, so this leaves one receive spare for a person polling in the console).
 *
 * A message's count is the envelope's `receiveCount` (ApproximateReceiveCount at the pipeline's
 * last receive, which includes the pipeline's own peeks: the envelope says so in
 * `dlqRedrivePolicy`); a message not inventoried yet is taken at 0.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html
 */
import type { QueueInfo } from '#platform/sqs-queues.js';
import type { Envelope } from './model.js';

/** Receives one pipeline peek costs toward a RedrivePolicy. */
export const PEEK_COST = 1;

/**
 * Peeks a message with this receive count can still take, never below 0.
 * @param receiveCount - ApproximateReceiveCount at the pipeline's last receive.
 * @param maxReceiveCount - the DLQ's own RedrivePolicy maxReceiveCount.
 * @param cost - receives per peek ({@link PEEK_COST}).
 */
export function peeksLeft(receiveCount: number, maxReceiveCount: number, cost: number): number {
  // The count now: the last receive, plus what any release beyond it cost.
  const now = receiveCount + (receiveCount > 0 ? cost - 1 : 0);
  return Math.max(0, Math.floor((maxReceiveCount - 1 - now) / cost));
}

/** How many peeks a DLQ with its own RedrivePolicy can afford, and which message limits it. */
export interface ReceiveBudget {
  maxReceiveCount: number;
  deadLetterTargetArn: string;
  /** Receives per peek. */
  cost: number;
  /** Peeks every message in the DLQ can still take (the least of them). */
  peeksLeft: number;
  /** The most-received message, or null when none is inventoried yet. */
  limitedBy: { messageId: string; receiveCount: number } | null;
}

/**
 * The receive budget of a DLQ, from its IN_DLQ envelopes; null for a DLQ without its own
 * RedrivePolicy (no limit).
 */
export function receiveBudget(
  dlq: Pick<QueueInfo, 'redrivePolicy'>,
  envelopes: Iterable<Pick<Envelope, 'messageId' | 'receiveCount' | 'state'>>,
  cost = PEEK_COST,
): ReceiveBudget | null {
  const policy = dlq.redrivePolicy;
  if (!policy) return null;
  let limitedBy: ReceiveBudget['limitedBy'] = null;
  for (const e of envelopes)
    if (e.state === 'IN_DLQ' && (limitedBy === null || e.receiveCount > limitedBy.receiveCount))
      limitedBy = { messageId: e.messageId, receiveCount: e.receiveCount };
  return {
    maxReceiveCount: policy.maxReceiveCount,
    deadLetterTargetArn: policy.deadLetterTargetArn,
    cost,
    peeksLeft: peeksLeft(limitedBy?.receiveCount ?? 0, policy.maxReceiveCount, cost),
    limitedBy,
  };
}

/** One sentence naming the DLQ's limit, the message that limits it and what is left. */
export function describeBudget(dlqName: string, budget: ReceiveBudget): string {
  const next = budget.deadLetterTargetArn.split(':').pop() ?? budget.deadLetterTargetArn;
  const by = budget.limitedBy
    ? `its most-received message ${budget.limitedBy.messageId} has been received ${budget.limitedBy.receiveCount} time(s), the pipeline's peeks included`
    : 'no message of it is inventoried yet';
  return `${dlqName} has its own RedrivePolicy (maxReceiveCount ${budget.maxReceiveCount} to ${next}): every receive counts toward it; ${by}, so each message can afford ${budget.peeksLeft} more pipeline peek(s) (${budget.cost} receive(s) each) before one would move it to ${next}`;
}

/**
 * Peeks of one workflow run, each receiving every message of the DLQ at most once (a scan holds
 * what it received until it ends), by step: the recheck's inventory of late arrivals (1), Park's
 * scans until found (1 + 2 rescans, when something is parked), SampleRedrive's (1 + 1 rescan),
 * VerifySample's attempts (3), the ramp gate's inventory per ramp step (1 each), Reconcile's final
 * inventory (1). A bound, not a forecast: most runs take fewer.
 */
export function runPeeks(run: {
  toPark: number;
  sampleSize: number;
  rampSteps: number;
  sampleOnly: boolean;
}): {
  total: number;
  steps: string;
} {
  const parts: Array<[string, number]> = [
    ['recheck', 1],
    ['Park', run.toPark > 0 ? 3 : 0],
    ['SampleRedrive', run.sampleSize > 0 ? 2 : 0],
    ['VerifySample', run.sampleSize > 0 ? 3 : 0],
    ['ramp gates', run.sampleOnly ? 0 : run.rampSteps],
    ['Reconcile', 1],
  ];
  const used = parts.filter(([, n]) => n > 0);
  return {
    total: used.reduce((sum, [, n]) => sum + n, 0),
    steps: used.map(([name, n]) => `${name} ${n}`).join(', '),
  };
}
