import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionPlan } from '#incident/execution-input.js';
import { createIncidentStore, type Incident } from '#incident/incident-store.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sqsClient } from '#platform/clients.js';
import { sleep } from '#platform/sleep.js';
import { handler as moveTaskHandler } from '../../functions/move-task/handler.js';
import type { RampResult } from '../../functions/move-task/move-task.js';
import { handler as parkHandler } from '../../functions/park/handler.js';
import { handler as reconcileHandler } from '../../functions/reconcile/handler.js';
import type { ReconcileResult } from '../../functions/reconcile/reconcile.js';
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

describe('Reconcile against the local stack', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('accounts for every envelope after park, sample and move task: the counts add up and nothing is lost', async () => {
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
      lost: 0,
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
    expect(result).toMatchObject({
      inventoried: 4,
      redriven: 1,
      inDlq: 3,
      returned: 1,
      lost: 0,
      balanced: true,
    });
    const withKey = await createEnvelopeStore().findByIdempotencyKey(sample.keys[0] as string);
    expect(withKey.map((e) => e.state).sort()).toEqual(['IN_DLQ', 'REDRIVEN']);
  });

  it('counts a message removed outside the pipeline as lost and reports the run unbalanced', async () => {
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
    expect(result).toMatchObject({ inventoried: 2, inDlq: 1, lost: 1, expired: 0, balanced: false });
  });
});
