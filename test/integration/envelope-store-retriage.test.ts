import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEnvelope, type EnvelopeWrite } from '#inventory/envelope.js';
import { createEnvelopeStore, type StoredEnvelope } from '#inventory/envelope-store.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';

const DLQ = 'arn:aws:sqs:us-east-1:111122223333:retriage-dlq';
const N = 260;

/** A document client that counts the calls it sends, by command name. */
function countingClient() {
  const calls: Record<string, number> = {};
  const base = new DynamoDBClient({});
  base.middlewareStack.add(
    (next, context) => async (args) => {
      const name = String(context.commandName);
      calls[name] = (calls[name] ?? 0) + 1;
      return next(args);
    },
    { step: 'initialize', name: 'count-calls' },
  );
  return {
    client: DynamoDBDocumentClient.from(base),
    calls,
    total: () => Object.values(calls).reduce((a, b) => a + b, 0),
  };
}

function writes(
  seenAt: number,
  ctx: { incidentId?: string; inventory?: { id: string; step: number }; receiveCount: number },
): EnvelopeWrite[] {
  return Array.from({ length: N }, (_, i) =>
    buildEnvelope(
      {
        MessageId: `m-${i}`,
        Body: JSON.stringify({ orderId: `o-${i}` }),
        Attributes: { SentTimestamp: '1767330000000', ApproximateReceiveCount: String(ctx.receiveCount) },
      },
      {
        dlqArn: DLQ,
        fifo: false,
        retentionPeriodSeconds: 1_209_600,
        now: seenAt,
        registration: {},
        ...(ctx.incidentId ? { incidentId: ctx.incidentId } : {}),
        ...(ctx.inventory ? { inventory: ctx.inventory } : {}),
      },
    ),
  );
}

async function byId(): Promise<Map<string, StoredEnvelope>> {
  const out = new Map<string, StoredEnvelope>();
  for await (const e of createEnvelopeStore().listEnvelopes(DLQ)) out.set(e.messageId, e);
  return out;
}

describe('envelope store: a second sight of envelopes that exist', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('updates only the observation fields, batched at no more than 0.1 DynamoDB calls per message, and counts a repeat of the same inventory as duplicates', async () => {
    const store = createEnvelopeStore();
    const first = writes(Date.parse('2026-01-02T10:00:00Z'), { receiveCount: 1 });
    // One envelope stored without an incident (an older triage): the second sight gives it one.
    const firstIncident = first.map((w, i) =>
      i === 0 ? w : { ...w, envelope: { ...w.envelope, incidentId: 'inc-1' } },
    );
    expect((await store.putEnvelopes(firstIncident, { deadlineMs: 30_000 })).created).toBe(N);
    await store.setState(DLQ, 'm-1', 'REDRIVEN');
    await store.setState(DLQ, 'm-2', 'PARKED', 'poison (run inc-1)');
    const before = await byId();

    const counting = countingClient();
    const again = createEnvelopeStore({ client: counting.client });
    const seenAt = Date.parse('2026-01-02T11:00:00Z');
    const second = await again.putEnvelopes(
      writes(seenAt, { incidentId: 'inc-2', inventory: { id: 'inv-2', step: 1 }, receiveCount: 4 }),
      { deadlineMs: 30_000 },
    );
    expect(second).toMatchObject({ written: N, created: 0, unprocessed: 0, duplicates: 0 });
    expect(counting.total() / N).toBeLessThanOrEqual(0.1);
    expect(counting.calls.UpdateItemCommand ?? 0).toBe(0);

    const after = await byId();
    expect(after.size).toBe(N);
    for (const [id, e] of after) {
      const old = before.get(id) as StoredEnvelope;
      expect(e.firstSeenAt).toBe(old.firstSeenAt);
      expect(e.lastSeenAt).toBe(new Date(seenAt).toISOString());
      expect(e.receiveCount).toBe(4);
      expect(e.inventoryId).toBe('inv-2');
      expect(e.state).toBe(old.state);
      expect(e.stateReason).toBe(old.stateReason);
    }
    expect(after.get('m-0')?.incidentId).toBe('inc-2');
    expect(after.get('m-5')?.incidentId).toBe('inc-1');
    expect(after.get('m-1')?.state).toBe('REDRIVEN');
    expect(after.get('m-2')?.stateReason).toBe('poison (run inc-1)');

    // The same inventory receiving them again (a duplicate delivery across invocations).
    const writesBefore = counting.calls.BatchExecuteStatementCommand ?? 0;
    const third = await again.putEnvelopes(
      writes(seenAt + 60_000, { incidentId: 'inc-2', inventory: { id: 'inv-2', step: 2 }, receiveCount: 5 }),
      { deadlineMs: 30_000 },
    );
    expect(third).toMatchObject({ written: N, created: 0, duplicates: N });
    expect(counting.calls.BatchExecuteStatementCommand ?? 0).toBe(writesBefore);
    expect((await byId()).get('m-7')?.receiveCount).toBe(4);
  });
});
