import type { Message } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import type { StoredEnvelope } from '#inventory/envelope-store.js';
import type { QueueInfo } from '#platform/sqs-queues.js';
import { type ParkDeps, park } from '../../functions/park/park.js';
import { planFor } from '../support/redrive-fixtures.js';

// Real SQS FIFO: while messages of a group are in flight, no later message of that group is
// returned (the local stand-in does not model this, so this is a plain fake of the queue port).
// Group "a" holds 11 redrivable messages, then a poison one: a scan that holds what it does not
// park can never receive it.
const DLQ = 'arn:aws:sqs:us-east-1:123456789012:orders-dlq.fifo';
const plan = planFor(
  { dlqArn: DLQ, dlqUrl: 'http://sqs/orders-dlq.fifo', incidentId: 'inc-fifo' },
  { parkingQueueUrl: 'http://sqs/parking.fifo' },
);
const messages: Message[] = Array.from({ length: 12 }, (_, n) => ({
  MessageId: `m${n}`,
  ReceiptHandle: `r${n}`,
  Body: n === 11 ? 'bad' : `{"n":${n}}`,
  Attributes: { MessageGroupId: 'a' },
}));

function fifoDeps(
  inDlq: Message[] = messages,
  extra: StoredEnvelope[] = [],
): { deps: ParkDeps; calls: string[] } {
  const calls: string[] = [];
  let served = false;
  const envelope = (m: Message) =>
    ({
      messageId: m.MessageId,
      idempotencyKey: `k-${m.MessageId}`,
      classification: m.Body === 'bad' ? 'poison' : 'transient',
      redriveCount: 0,
      sourceArn: 'arn:aws:sqs:us-east-1:123456789012:orders.fifo',
      state: 'IN_DLQ',
    }) as StoredEnvelope;
  const deps: ParkDeps = {
    queues: {
      // The first 10 of group "a"; then nothing while they are in flight.
      receive: async () => {
        if (served) return [];
        served = true;
        return inDlq.slice(0, 10);
      },
      changeVisibility: async () => 0,
      describe: async () => ({ visible: inDlq.length, inFlight: 0 }) as QueueInfo,
    },
    envelopes: {
      listEnvelopes: async function* () {
        for (const m of inDlq) yield envelope(m);
        yield* extra;
      },
    },
    envelopeStates: {
      setStates: async (_dlq, changes) => {
        for (const c of changes) calls.push(`setState ${c.messageId} ${c.state}`);
      },
    },
    ledgerBatch: {
      begin: async (requests) =>
        requests.map((request) => ({
          outcome: 'new' as const,
          entry: {
            ...request,
            status: 'IN_PROGRESS' as const,
            sentMessageId: null,
            dlqDeleted: false,
            duplicatePrevented: false,
            resent: false,
            takenOverFrom: [],
            updatedAt: '',
          },
        })),
      markSent: async () => new Set<string>(),
      markDeleted: async () => {},
    },
    ledger: { abandon: async () => {}, list: async () => [] },
    sqs: {
      sendBatch: async (_url, batch) => {
        calls.push('send');
        return batch.map(() => ({ ok: true as const, sentId: 'x' }));
      },
      deleteBatch: async () => {
        calls.push('delete');
        return new Set<string>();
      },
    },
    sleep: async () => {},
  };
  return { deps, calls };
}

describe('Park on a FIFO DLQ', () => {
  it('C08 refuses rather than report success when a do-not-redrive message is stuck behind ten others of its message group', async () => {
    const { deps, calls } = fifoDeps();
    await expect(park({ plan }, deps)).rejects.toMatchObject({
      name: 'Redrive.Refused',
      message: expect.stringContaining('message group'),
    });
    expect(calls).toEqual([]);
  });

  it('an envelope an earlier run parked, whose message is gone, neither blocks a run without a parking queue nor counts as skipped', async () => {
    const old = {
      messageId: 'm-old',
      idempotencyKey: 'k-old',
      classification: 'poison',
      redriveCount: 0,
      sourceArn: 'arn:aws:sqs:us-east-1:123456789012:orders.fifo',
      state: 'PARKED',
      stateReason: 'classified poison: do not redrive (run inc-older)',
    } as StoredEnvelope;
    const { deps, calls } = fifoDeps(messages.slice(0, 3), [old]);
    const result = await park({ plan: { ...plan, parkingQueueUrl: null } }, deps);
    expect(result).toEqual({ parked: 0, discarded: 0, skipped: 0, duplicateSendsPrevented: 0 });
    expect(calls).toEqual([]);
  });
});
