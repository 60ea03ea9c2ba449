import { randomUUID } from 'node:crypto';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { createProcessedKeyStore } from '@dlq-redrive/consumer-idempotency';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionPlan } from '#incident/execution-input.js';
import { createIncidentStore, type Incident } from '#incident/incident-store.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createEnvelopeStates } from '#inventory/envelope-states.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { dynamoClient, sqsClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { sleep } from '#platform/sleep.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { createMoveTasks, type MoveTask } from '#transfer/move-tasks.js';
import { createRedriveLedger } from '#transfer/redrive-ledger.js';
import { handler as moveTaskHandler } from '../../functions/move-task/handler.js';
import type { RampResult } from '../../functions/move-task/move-task.js';
import { handler as parkHandler } from '../../functions/park/handler.js';
import { handler as reconcileHandler } from '../../functions/reconcile/handler.js';
import { type ReconcileDeps, type ReconcileResult, reconcile } from '../../functions/reconcile/reconcile.js';
import { handler as sampleHandler } from '../../functions/sample-redrive/handler.js';
import type { SampleRedriveResult } from '../../functions/sample-redrive/sample-redrive.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import {
  createQueue,
  drain,
  type InventoriedDlq,
  lambdaContext,
  planFor,
  seedAndInventory,
} from '../support/redrive-fixtures.js';

const badPayload = { 'error-class': { DataType: 'String', StringValue: 'SyntaxError' } };
const call = <T>(h: (e: never, c: typeof lambdaContext) => unknown, event: unknown) =>
  h(event as never, lambdaContext) as Promise<T>;

async function openIncident(dlq: InventoriedDlq): Promise<void> {
  await createIncidentStore().putIncident({
    incidentId: dlq.incidentId,
    dlqArn: dlq.dlqArn,
    dlqUrl: dlq.dlqUrl,
    sourceArns: dlq.sources.map((s) => s.arn),
    status: 'OPEN',
    createdAt: new Date().toISOString(),
    updatedAt: new Date().toISOString(),
  } as unknown as Incident);
}

async function bulkMove(plan: ExecutionPlan, sourceArns: string[]): Promise<RampResult> {
  const preflight = { sourceArns };
  let ramp = await call<RampResult>(moveTaskHandler, { action: 'start', plan, preflight });
  for (let i = 0; i < 20 && ramp.decision === 'hold'; i++) {
    await sleep(600);
    ramp = await call<RampResult>(moveTaskHandler, { action: 'check', plan, preflight, ramp });
  }
  return ramp;
}

/** The source's consumer fails every message until SQS dead-letters it again. */
async function failConsumerUntilDeadLettered(url: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const out = await sqsClient().send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }),
    );
    if ((out.Messages ?? []).length === 0 && i > 3) return;
    await sleep(20);
  }
}

/** The source's consumer takes every message and records its key as processed, as the middleware does. */
async function consumeAndRecord(dlq: InventoriedDlq): Promise<void> {
  const keyOfBody = new Map<string, string>();
  for await (const e of createEnvelopeStore().listEnvelopes(dlq.dlqArn)) {
    const body = new TextDecoder().decode(await createEnvelopeStore().readBody(e));
    keyOfBody.set(body, e.idempotencyKey);
  }
  const consumer = createProcessedKeyStore({ tableName: pipelineConfig().tableName, client: dynamoClient() });
  for (const m of await drain(sqsClient(), dlq.sources[0]?.url as string)) {
    const now = Math.floor(Date.now() / 1000);
    const claim = {
      consumer: 'rc-consumer',
      key: keyOfBody.get(m.Body as string) as string,
      keySource: 'hash' as const,
      lineage: null,
      messageId: m.MessageId as string,
      token: randomUUID(),
      until: now + 60,
    };
    expect((await consumer.claim(claim, now)).status).toBe('claimed');
    expect(await consumer.complete(claim, new Date(), now + 3600)).toBe(true);
  }
}

/** Messages taken out of the DLQ by hand: `moved` sent to the source queue first, then every one deleted; the rest made visible again. */
async function handle(dlq: InventoriedDlq, counts: { moved: number; deleted: number }) {
  const held = await drain(sqsClient(), dlq.dlqUrl);
  const moved = held.slice(0, counts.moved);
  const deleted = held.slice(counts.moved, counts.moved + counts.deleted);
  for (const m of moved)
    await sqsClient().send(new SendMessageCommand({ QueueUrl: dlq.sources[0]?.url, MessageBody: m.Body }));
  for (const m of [...moved, ...deleted])
    await sqsClient().send(
      new DeleteMessageCommand({ QueueUrl: dlq.dlqUrl, ReceiptHandle: m.ReceiptHandle }),
    );
  for (const m of held.slice(counts.moved + counts.deleted))
    await sqsClient().send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: dlq.dlqUrl,
        ReceiptHandle: m.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
  return { moved, deleted };
}

describe('Reconcile against the local stack', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('accounts for every envelope after park, sample and move task: the counts add up and nothing is missing', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'rc-dlq',
      sourceNames: ['rc-orders', 'rc-payments'],
      messages: [
        { body: 'o-1', source: 0 },
        { body: 'o-2', source: 0 },
        { body: 'p-1', source: 1 },
        { body: 'o-bad', source: 0, attributes: badPayload },
      ],
      sendStraightToDlq: [{ body: 'no source' }],
      incidentId: 'inc-rc',
    });
    await openIncident(dlq);
    const parking = await createQueue(sqsClient(), 'rc-parking');
    const plan = planFor(dlq, { sampleSize: 1, rampRates: [100], parkingQueueUrl: parking });
    await call(parkHandler, { plan });
    const sample = await call<SampleRedriveResult>(sampleHandler, {
      plan,
      preflight: { verifyWindowSeconds: 0, fifo: false },
    });
    expect(sample.sent).toBe(1);
    const ramp = await bulkMove(
      plan,
      dlq.sources.map((s) => s.arn),
    );
    expect(ramp.decision).toBe('done');

    const result = await call<ReconcileResult>(reconcileHandler, { plan, outcome: 'completed' });
    expect(result).toMatchObject({
      inventoried: 5,
      redriven: 3,
      parked: 2,
      discarded: 0,
      inDlq: 0,
      missing: 0,
      movedByTask: 2,
      movedReported: 2,
      duplicateSendsPrevented: 0,
      balanced: true,
    });
    const states: string[] = [];
    for await (const e of createEnvelopeStore().listEnvelopes(dlq.dlqArn)) states.push(e.state);
    expect(states.sort()).toEqual(['PARKED', 'PARKED', 'REDRIVEN', 'REDRIVEN', 'REDRIVEN']);
    const incident = (await createIncidentStore().getIncident(dlq.incidentId)) as unknown as {
      reconcile?: ReconcileResult;
    };
    expect(incident.reconcile?.redriven).toBe(3);

    // A second reconcile (a retry after a crash, a restart's) finds the moved envelopes settled
    // already: they are still the task's, within its count, not late moves unclassified.
    const again = await call<ReconcileResult>(reconcileHandler, { plan, outcome: 'completed' });
    expect(again).toMatchObject({
      redriven: 3,
      movedByTask: 2,
      movedReported: 2,
      lateMovedUnclassified: 0,
      balanced: true,
    });
  });

  it('links a sample that came back to the DLQ to its envelope by key and keeps the rest IN_DLQ', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'rc-return-dlq',
      sourceNames: ['rc-return-src'],
      messages: [{ body: 'r-1' }, { body: 'r-2' }, { body: 'r-3' }],
      incidentId: 'inc-rc-return',
    });
    const plan = planFor(dlq, { sampleSize: 1 });
    const sample = await call<SampleRedriveResult>(sampleHandler, {
      plan,
      preflight: { verifyWindowSeconds: 0, fifo: false },
    });
    await failConsumerUntilDeadLettered(dlq.sources[0]?.url as string);
    const back = await drain(sqsClient(), dlq.dlqUrl);
    expect(back.map((m) => m.MessageAttributes?.['idempotency-key']?.StringValue)).toContain(sample.keys[0]);
    // drain() hid them for 60 s: make them visible again for the inventory.
    const { ChangeMessageVisibilityBatchCommand } = await import('@aws-sdk/client-sqs');
    await sqsClient().send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: dlq.dlqUrl,
        Entries: back.map((m, i) => ({
          Id: String(i),
          ReceiptHandle: m.ReceiptHandle,
          VisibilityTimeout: 0,
        })),
      }),
    );

    const result = await call<ReconcileResult>(reconcileHandler, { plan, outcome: 'sample-failed' });
    // The returned copy is a new DLQ message, first stored now: `returned`, in its own row.
    expect(result).toMatchObject({
      inventoried: 3,
      lateArrivals: 0,
      redriven: 1,
      inDlq: 3,
      returned: 1,
      missing: 0,
      balanced: true,
    });
    const withKey = await createEnvelopeStore().findByIdempotencyKey(sample.keys[0] as string);
    expect(withKey.map((e) => e.state).sort()).toEqual(['IN_DLQ', 'REDRIVEN']);
  });

  it('counts a message removed outside the pipeline as missing, names it and reports the run unbalanced', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'rc-lost-dlq',
      sourceNames: ['rc-lost-src'],
      messages: [{ body: 'l-1' }, { body: 'l-2' }],
      incidentId: 'inc-rc-lost',
    });
    const [victim, other] = await drain(sqsClient(), dlq.dlqUrl);
    await sqsClient().send(
      new DeleteMessageCommand({ QueueUrl: dlq.dlqUrl, ReceiptHandle: victim?.ReceiptHandle }),
    );
    await sqsClient().send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: dlq.dlqUrl,
        ReceiptHandle: other?.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    const result = await call<ReconcileResult>(reconcileHandler, {
      plan: planFor(dlq),
      outcome: 'sample-failed',
    });
    expect(result).toMatchObject({
      inventoried: 2,
      inDlq: 1,
      redriven: 0,
      missing: 1,
      expired: 0,
      missingExact: true,
      balanced: false,
    });
    expect(result.missingMessages.map((m) => m.messageId)).toEqual([victim?.MessageId]);
  });

  it('bounds redriven by what the move task reports as moved: 5 messages deleted by hand are missing, named once consumers recorded the moved keys', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'rc-hand-dlq',
      sourceNames: ['rc-hand-src'],
      messages: Array.from({ length: 12 }, (_, i) => ({ body: `{"h":${i}}` })),
      incidentId: 'inc-rc-hand',
    });
    const held = await drain(sqsClient(), dlq.dlqUrl);
    const deleted = held.slice(0, 5);
    for (const m of deleted)
      await sqsClient().send(
        new DeleteMessageCommand({ QueueUrl: dlq.dlqUrl, ReceiptHandle: m.ReceiptHandle }),
      );
    for (const m of held.slice(5))
      await sqsClient().send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: dlq.dlqUrl,
          ReceiptHandle: m.ReceiptHandle,
          VisibilityTimeout: 0,
        }),
      );
    const plan = planFor(dlq, { rampRates: [100] });
    expect((await bulkMove(plan, [dlq.sources[0]?.arn as string])).decision).toBe('done');

    // Nothing says which 7 of the 12 gone messages the task moved: the candidates are named.
    const blind = await call<ReconcileResult>(reconcileHandler, { plan, outcome: 'completed' });
    expect(blind).toMatchObject({
      inventoried: 12,
      redriven: 7,
      movedByTask: 7,
      movedReported: 7,
      missing: 5,
      missingExact: false,
      balanced: false,
    });
    expect(blind.missingMessages).toHaveLength(12);

    // The consumer of the source queue records each key it processed (the middleware does).
    await consumeAndRecord(dlq);
    const named = await call<ReconcileResult>(reconcileHandler, { plan, outcome: 'completed' });
    expect(named).toMatchObject({ redriven: 7, missing: 5, missingExact: true, balanced: false });
    expect(named.missingMessages.map((m) => m.messageId).sort()).toEqual(
      deleted.map((m) => m.MessageId).sort(),
    );
    const states: string[] = [];
    for await (const e of createEnvelopeStore().listEnvelopes(dlq.dlqArn)) states.push(e.state);
    expect(states.filter((st) => st === 'REDRIVEN')).toHaveLength(7);
  });

  it('names messages moved by hand to the source queue that a consumer processed as redriven outside the pipeline, and only the deleted ones as missing', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'rc-byhand-dlq',
      sourceNames: ['rc-byhand-src'],
      messages: Array.from({ length: 10 }, (_, i) => ({ body: `{"m":${i}}` })),
      incidentId: 'inc-rc-byhand',
    });
    const { moved, deleted } = await handle(dlq, { moved: 3, deleted: 2 });
    const plan = planFor(dlq, { rampRates: [100] });
    expect((await bulkMove(plan, [dlq.sources[0]?.arn as string])).decision).toBe('done');
    await consumeAndRecord(dlq);

    const result = await call<ReconcileResult>(reconcileHandler, { plan, outcome: 'completed' });
    expect(result).toMatchObject({
      inventoried: 10,
      redriven: 8,
      movedByTask: 5,
      movedReported: 5,
      redrivenOutside: 3,
      missing: 2,
      missingExact: true,
      balanced: false,
    });
    expect(result.missingMessages.map((m) => m.messageId).sort()).toEqual(
      deleted.map((m) => m.MessageId).sort(),
    );
    const reasons: string[] = [];
    for await (const e of createEnvelopeStore().listEnvelopes(dlq.dlqArn))
      reasons.push(`${e.state} ${e.stateReason}`);
    expect(reasons.filter((r) => r.includes('moved outside the pipeline'))).toHaveLength(moved.length);

    // A later reconcile keeps both sub-counts from the envelopes it settled.
    const again = await call<ReconcileResult>(reconcileHandler, { plan, outcome: 'completed' });
    expect(again).toMatchObject({
      redriven: 8,
      movedByTask: 5,
      redrivenOutside: 3,
      missing: 2,
      missingExact: true,
    });
  });

  it('writes the states of a deep DLQ in bulk, 25 a call, so 95,000 REDRIVEN updates fit its 300 s timeout; a failed write fails the step and its retry writes them all', async () => {
    const n = 60;
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'rc-wide-dlq',
      sourceNames: ['rc-wide-src'],
      messages: Array.from({ length: n }, (_, i) => ({ body: `w-${i}` })),
      incidentId: 'inc-rc-wide',
    });
    // The move task took every message; it reports them moved (no ledger entries).
    await handle(dlq, { moved: n, deleted: 0 });
    const task: MoveTask = {
      taskHandle: null,
      status: 'COMPLETED',
      sourceArn: dlq.dlqArn,
      destinationArn: null,
      rate: 50,
      moved: n,
      toMove: n,
      failureReason: null,
      startedAt: Date.now(),
    };
    const store = createEnvelopeStore();
    const states = createEnvelopeStates();
    const calls: number[] = [];
    let failOn: string | undefined;
    const envelopeStates: ReconcileDeps['envelopeStates'] = {
      setStates: async (dlqArn, changes) => {
        calls.push(changes.length);
        if (changes.some((c) => c.messageId === failOn)) {
          const error = new Error('throttled');
          error.name = 'Redrive.Transient';
          throw error;
        }
        await states.setStates(dlqArn, changes);
      },
    };
    const deps = (): ReconcileDeps => ({
      queues: createSqsQueues(),
      envelopes: store,
      envelopeStates,
      ledger: createRedriveLedger(),
      moveTasks: { list: async () => [task] },
      registrations: createQueueRegistry(),
      incidents: createIncidentStore(),
      remainingTimeMs: () => 60_000,
      now: Date.now,
    });
    const plan = planFor(dlq);

    // One envelope's write fails: Reconcile fails with it (the workflow retries the step).
    const ids: string[] = [];
    for await (const e of store.listEnvelopes(dlq.dlqArn)) ids.push(e.messageId);
    expect(ids).toHaveLength(n);
    failOn = ids[7];
    await expect(reconcile({ plan, outcome: 'completed' }, deps())).rejects.toThrow('throttled');

    failOn = undefined;
    calls.length = 0;
    const result = await reconcile({ plan, outcome: 'completed' }, deps());
    expect(result).toMatchObject({ inventoried: n, redriven: n, movedByTask: n, missing: 0, balanced: true });
    // Every change of the run in one bulk write (the store sends it 25 statements a call).
    expect(calls).toEqual([n]);
    const stored: string[] = [];
    for await (const e of store.listEnvelopes(dlq.dlqArn)) stored.push(`${e.state} ${e.stateReason}`);
    expect(stored).toEqual(Array(n).fill('REDRIVEN moved by the move task (run inc-rc-wide)'));
  });

  it('counts a message another receiver still holds at the end as in flight, never as redriven', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'rc-inflight-dlq',
      sourceNames: ['rc-inflight-src'],
      messages: [{ body: 'f-1' }, { body: 'f-2' }, { body: 'f-3' }],
      incidentId: 'inc-rc-inflight',
    });
    // Someone polls the DLQ in the console and holds one message for two minutes.
    const out = await sqsClient().send(
      new ReceiveMessageCommand({ QueueUrl: dlq.dlqUrl, MaxNumberOfMessages: 1, VisibilityTimeout: 120 }),
    );
    expect(out.Messages).toHaveLength(1);
    const end = Date.now() + 18_000;
    const result = await reconcile(
      { plan: planFor(dlq), outcome: 'completed' },
      {
        queues: createSqsQueues(),
        envelopes: createEnvelopeStore(),
        envelopeStates: createEnvelopeStates(),
        ledger: createRedriveLedger(),
        moveTasks: createMoveTasks(),
        registrations: createQueueRegistry(),
        incidents: createIncidentStore(),
        remainingTimeMs: () => end - Date.now(),
        now: Date.now,
      },
    );
    expect(result).toMatchObject({
      inventoried: 3,
      inDlq: 2,
      inFlight: 1,
      redriven: 0,
      missing: 0,
      balanced: true,
    });
    const held = await createEnvelopeStore().getEnvelope(dlq.dlqArn, out.Messages?.[0]?.MessageId as string);
    expect(held?.state).toBe('IN_DLQ');
  });
});
