/**
 * Redrive history per idempotency key: how many times a message with this key left the DLQ
 * for its source, across incidents, sample copies and move-task moves alike.
 *
 * SQS keeps no such counter, and the `redrive-count` attribute only grows on copies the pipeline
 * sends itself: StartMessageMoveTask moves messages unchanged, so a message that keeps coming back
 * through bulk moves would carry 0 for ever. The evidence is already kept: every DLQ message gets an
 * envelope (same DLQ partition for every incident), and an envelope ends REDRIVEN only with a
 * ledger entry (sample) or within what a move task reported moved (Reconcile). A message that
 * fails again comes back under a new MessageId, so it gets a new envelope with the same key. The
 * history of a key is therefore the number of distinct REDRIVEN envelopes carrying it, and a
 * message's redrive count is the larger of that and its own `redrive-count` attribute (the two
 * count the same sample copies, so they are not added).
 *
 * Read from the envelopes a step lists anyway (Park lists the DLQ's envelopes): no extra item and
 * no extra DynamoDB call. Scope: one DLQ; a content-hash key names its source queue, and a source
 * queue has one DLQ.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html
 */
import type { Envelope, EnvelopeState } from '#inventory/model.js';

/** Counts REDRIVEN envelopes per idempotency key; feed it every envelope of the DLQ. */
export interface RedriveHistory {
  /** Takes one envelope into the history (only REDRIVEN ones count, each MessageId once). */
  add(envelope: Pick<Envelope, 'idempotencyKey' | 'messageId'> & { state: EnvelopeState }): void;
  /** Times this envelope's message was redriven: max(history of its key, its `redrive-count`). */
  redrivesOf(envelope: Pick<Envelope, 'idempotencyKey' | 'redriveCount'>): number;
}

/** An empty history. */
export function createRedriveHistory(): RedriveHistory {
  const redriven = new Map<string, Set<string>>();
  return {
    add(envelope) {
      if (envelope.state !== 'REDRIVEN') return;
      const ids = redriven.get(envelope.idempotencyKey) ?? new Set<string>();
      ids.add(envelope.messageId);
      redriven.set(envelope.idempotencyKey, ids);
    },
    redrivesOf(envelope) {
      return Math.max(envelope.redriveCount, redriven.get(envelope.idempotencyKey)?.size ?? 0);
    },
  };
}
