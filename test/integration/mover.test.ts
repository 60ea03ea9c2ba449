/**
 * The recording mover (functions/mover) on the local stack: the real handler, SQS stand-in,
 * DynamoDB Local and the SNS/Lambda stand-ins. Selection, un-park, a crash between the steps, exact
 * re-inflow, and targets by origin.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { createAuditTrail } from '#incident/audit-trail.js';
import { Selection, Transform } from '#incident/execution-input.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sha256Hex } from '#inventory/idempotency-key.js';
import { inventoryDlq } from '#inventory/inventory.js';
import { QueueRegistration } from '#inventory/model.js';
import { sqsClient } from '#platform/clients.js';
import { sleep } from '#platform/sleep.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { setTransferFaultHook } from '#transfer/message-transfer.js';
import { createRedriveLedger } from '#transfer/redrive-ledger.js';
import { handler } from '../../functions/mover/handler.js';
import type { MoverSampleResult, MoverState } from '../../functions/mover/mover.js';
import { handler as parkHandler } from '../../functions/park/handler.js';
import { handler as reconcileHandler } from '../../functions/reconcile/handler.js';
import type { ReconcileResult } from '../../functions/reconcile/reconcile.js';
import {
  createQueue,
  drain,
  lambdaContext,
  planFor,
  runMover,
  seedAndInventory,
} from '../support/redrive-fixtures.js';
import { queueDepth, seedDlq } from '../support/seed-dlq.js';
import { useTransferStack } from '../support/transfer-stack.js';

const invoke = (event: unknown) => handler(event as never, lambdaContext) as Promise<unknown>;
const preflight = (fifo = false) => ({ verifyWindowSeconds: 1, fifo });

const errorClass = (value: string) => ({ 'error-class': { DataType: 'String', StringValue: value } });

async function statesOf(dlqArn: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for await (const e of createEnvelopeStore().listEnvelopes(dlqArn)) {
    const list = out[e.state] ?? [];
    list.push(e.failure.errorClass ?? '<none>');
    out[e.state] = list;
  }
  return out;
}

describe('the recording mover against the local stack', () => {
  const stack = useTransferStack();

  it('moves exactly the selected cause group of three, each copy with its idempotency key; the rest stays in the DLQ with its envelopes', async () => {
    const classes = ['UpstreamTimeout', 'InventoryLocked', 'PricingUnavailable'];
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'mover-selective-dlq',
      sourceNames: ['mover-selective-src'],
      messages: Array.from({ length: 12 }, (_, i) => ({
        body: JSON.stringify({ orderId: `o-${i}` }),
        attributes: errorClass(classes[i % 3] as string),
      })),
      incidentId: 'inc-mover-selective',
    });
    const plan = planFor(dlq, {
      sampleSize: 2,
      rampRates: [50, 100],
      selection: Selection.parse({ causes: ['InventoryLocked'] }),
    });
    const { sample, state } = await runMover(plan);

    expect([sample.sent, state.decision, state.moved]).toEqual([2, 'done', 4]);
    const delivered = await drain(sqsClient(), dlq.sources[0]?.url as string);
    expect(delivered.map((m) => m.MessageAttributes?.['error-class']?.StringValue)).toEqual(
      Array(4).fill('InventoryLocked'),
    );
    const envelopes = [];
    for await (const e of createEnvelopeStore().listEnvelopes(dlq.dlqArn)) envelopes.push(e);
    const keysOfGroup = envelopes
      .filter((e) => e.failure.errorClass === 'InventoryLocked')
      .map((e) => e.idempotencyKey);
    expect(delivered.map((m) => m.MessageAttributes?.['idempotency-key']?.StringValue).sort()).toEqual(
      keysOfGroup.sort(),
    );
    const states = await statesOf(dlq.dlqArn);
    expect([states.REDRIVEN?.length, states.IN_DLQ?.length]).toEqual([4, 8]);
    expect(new Set(states.REDRIVEN)).toEqual(new Set(['InventoryLocked']));
    expect((await queueDepth(sqsClient(), dlq.dlqUrl)).visible).toBe(8);
  });

  it('holds an extended-client pointer it sees for the first time (no HeadObject yet) in the DLQ with its envelope recorded, and moves the plain late arrival beside it', async () => {
    const timeout = errorClass('UpstreamTimeout');
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'mover-late-pointer-dlq',
      sourceNames: ['mover-late-pointer-src'],
      messages: Array.from({ length: 4 }, (_, i) => ({
        body: JSON.stringify({ orderId: `p-${i}` }),
        attributes: timeout,
      })),
      incidentId: 'inc-mover-late-pointer',
    });
    // Two more dead-letter after the inventory: one a plain body, one an extended-client pointer.
    const pointerBody = JSON.stringify([
      'software.amazon.payloadoffloading.PayloadS3Pointer',
      { s3BucketName: 'orders-large-payloads', s3Key: 'late-unchecked' },
    ]);
    await seedDlq({
      sqs: sqsClient(),
      dlqName: 'mover-late-pointer-dlq',
      sourceNames: ['mover-late-pointer-src'],
      messages: [
        { body: JSON.stringify({ orderId: 'p-late' }), attributes: timeout },
        { body: pointerBody, attributes: timeout },
      ],
    });

    const { state } = await runMover(planFor(dlq, { sampleSize: 2, rampRates: [50, 100] }));

    expect([state.decision, state.moved]).toEqual(['done', 5]);
    expect(state.leftBehind['payload-unchecked']).toBe(1);
    const delivered = await drain(sqsClient(), dlq.sources[0]?.url as string);
    expect(delivered.map((m) => m.Body)).not.toContain(pointerBody);
    expect(delivered).toHaveLength(5);
    const left = await drain(sqsClient(), dlq.dlqUrl);
    expect(left.map((m) => m.Body)).toEqual([pointerBody]);
    const recorded = [];
    for await (const e of createEnvelopeStore().listEnvelopes(dlq.dlqArn)) if (e.payload) recorded.push(e);
    expect(recorded.map((e) => [e.state, e.lateArrival, e.payload?.key])).toEqual([
      ['IN_DLQ', true, 'late-unchecked'],
    ]);
  });

  it('after a crash between send and delete, the retried step deletes without a second send: a recorded duplicate prevented, nothing lost', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'mover-crash-dlq',
      sourceNames: ['mover-crash-src'],
      messages: Array.from({ length: 6 }, (_, i) => ({
        body: `{"n":${i}}`,
        attributes: errorClass('UpstreamTimeout'),
      })),
      incidentId: 'inc-mover-crash',
    });
    const plan = planFor(dlq, {
      sampleSize: 1,
      rampRates: [100],
      selection: Selection.parse({ classifications: ['transient', 'systemic'] }),
    });
    let crashed: string | undefined;
    setTransferFaultHook((at, key) => {
      if (at === 'after-send' && crashed === undefined) {
        crashed = key;
        throw new Error('simulated crash after-send');
      }
    });
    await expect(invoke({ action: 'sample', plan, preflight: preflight() })).rejects.toThrow(
      'simulated crash',
    );
    const entryOf = async (key: string | undefined) =>
      (await createRedriveLedger().list(dlq.dlqArn)).find((e) => e.key === key);
    expect((await entryOf(crashed))?.status).toBe('SENT');
    // The receive's visibility timeout (2 s in these tests) must pass before the step sees it again.
    await sleep(2_500);
    const { state } = await runMover(plan);
    // The crashed message counts once, in the retried sample.
    expect([state.decision, state.moved]).toEqual(['done', 6]);
    const delivered = await drain(sqsClient(), dlq.sources[0]?.url as string);
    const keys = delivered.map((m) => m.MessageAttributes?.['idempotency-key']?.StringValue);
    expect([delivered.length, new Set(keys).size]).toEqual([6, 6]);
    expect((await entryOf(crashed))?.duplicatePrevented).toBe(true);
    expect((await queueDepth(sqsClient(), dlq.dlqUrl)).visible).toBe(0);
  });

  it('counts a message it leaves in the DLQ once, however many steps pass over it', async () => {
    const bodies = [
      '{"orderId":"j-1"}',
      'not json 1',
      '{"orderId":"j-2"}',
      'not json 2',
      '{"orderId":"j-3"}',
    ];
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'mover-left-once-dlq',
      sourceNames: ['mover-left-once-src'],
      messages: bodies.map((body) => ({ body, attributes: errorClass('SchemaRejected') })),
      incidentId: 'inc-mover-left-once',
    });
    const plan = planFor(dlq, {
      sampleSize: 1,
      rampRates: [100],
      selection: Selection.parse({ causes: ['SchemaRejected'] }),
      transform: Transform.parse({ mergePatch: { schema: 2 }, reason: 'schema v2 (test)' }),
    });
    const { state } = await runMover(plan);
    // The sample, at least one moving step, the drain and the final step each see the two bodies
    // that are not JSON (a merge patch cannot apply): still two messages.
    expect(state.steps).toBeGreaterThanOrEqual(2);
    expect([state.decision, state.moved, state.leftBehind['not-json']]).toEqual(['done', 3, 2]);
    expect(state.why).toMatchObject({ code: 'mover-done', moved: 3, left: { 'not-json': 2 } });
    expect((await queueDepth(sqsClient(), dlq.dlqUrl)).visible).toBe(2);
  });

  it('retried at once after a crash between send and delete (the receives of the dead invocation still invisible), waits them out instead of ending done: every message moved, the one sent before the crash not sent again', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'mover-fast-retry-dlq',
      sourceNames: ['mover-fast-retry-src'],
      messages: Array.from({ length: 4 }, (_, i) => ({
        body: JSON.stringify({ orderId: `r-${i}` }),
        attributes: errorClass('UpstreamTimeout'),
      })),
      incidentId: 'inc-mover-fast-retry',
    });
    const plan = planFor(dlq, { sampleSize: 1, rampRates: [100] });
    let crashed = false;
    setTransferFaultHook((at) => {
      if (at === 'after-send' && !crashed) {
        crashed = true;
        throw new Error('simulated crash after-send');
      }
    });
    try {
      await expect(invoke({ action: 'sample', plan, preflight: preflight() })).rejects.toThrow(
        'simulated crash',
      );
    } finally {
      setTransferFaultHook(undefined);
    }

    const { state } = await runMover(plan); // no pause: the workflow retries within seconds

    expect([state.decision, state.moved, state.possibleDuplicateSends]).toEqual(['done', 4, 0]);
    expect(await queueDepth(sqsClient(), dlq.dlqUrl)).toEqual({ visible: 0, inFlight: 0 });
    const delivered = await drain(sqsClient(), dlq.sources[0]?.url as string);
    expect(delivered.map((m) => JSON.parse(m.Body as string).orderId).sort()).toEqual([
      'r-0',
      'r-1',
      'r-2',
      'r-3',
    ]);
  });

  it('halts at once when a copy it sent comes back to the DLQ (matched by its idempotency key), naming the source', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'mover-reinflow-dlq',
      sourceNames: ['mover-reinflow-src'],
      messages: Array.from({ length: 8 }, (_, i) => ({
        body: `{"r":${i}}`,
        attributes: errorClass('UpstreamTimeout'),
      })),
      incidentId: 'inc-mover-reinflow',
    });
    const plan = planFor(dlq, {
      sampleSize: 2,
      rampRates: [1, 100],
      selection: Selection.parse({ classifications: ['transient', 'systemic'] }),
    });
    const sample = (await invoke({ action: 'sample', plan, preflight: preflight() })) as MoverSampleResult;
    expect(sample.sent).toBe(2);
    // The consumer fails a copy again: it dead-letters back, carrying its idempotency-key attribute.
    const [copy] = await drain(sqsClient(), dlq.sources[0]?.url as string);
    await sqsClient().send(
      new SendMessageCommand({
        QueueUrl: dlq.dlqUrl,
        MessageBody: copy?.Body,
        MessageAttributes: copy?.MessageAttributes,
      }),
    );
    const state = (await invoke({ action: 'step', plan, preflight: preflight(), sample })) as MoverState;
    expect([state.decision, state.reinflow]).toEqual(['halt', 1]);
    expect(state.why).toMatchObject({ code: 'reinflow', returned: 1, moved: 2 });
    // The batch that held the returned copy sent nothing: the rest stays in the DLQ.
    expect(state.moved).toBe(2);
    expect(await createEnvelopeStore().countEnvelopes(dlq.dlqArn, 'IN_DLQ')).toBe(6);
  });

  it('un-parks: parked messages go from the parking queue back to their source with their keys, envelopes REDRIVEN, and Reconcile keeps them REDRIVEN', async () => {
    const sqs = sqsClient();
    const parkingUrl = await createQueue(sqs, 'mover-unpark-parking');
    const dlq = await seedAndInventory({
      sqs,
      dlqName: 'mover-unpark-dlq',
      sourceNames: ['mover-unpark-src'],
      messages: [
        ...Array.from({ length: 3 }, (_, i) => ({
          body: `{"bad":${i}}`,
          attributes: errorClass('ValidationError'),
        })),
        { body: '{"ok":1}', attributes: errorClass('UpstreamTimeout') },
      ],
      incidentId: 'inc-mover-unpark',
    });
    await parkHandler({ plan: planFor(dlq, { parkingQueueUrl: parkingUrl }) } as never, lambdaContext);
    expect((await statesOf(dlq.dlqArn)).PARKED).toHaveLength(3);
    const parkedKeys: string[] = [];
    const parkedIds: string[] = [];
    for await (const e of createEnvelopeStore().listEnvelopes(dlq.dlqArn))
      if (e.state === 'PARKED') {
        parkedKeys.push(e.idempotencyKey);
        parkedIds.push(e.messageId);
      }

    // The same incident that parked them, as `dlq unpark INCIDENT` starts it.
    const plan = planFor(dlq, {
      parkingQueueUrl: parkingUrl,
      unpark: true,
      sampleSize: 1,
      rampRates: [100],
    });
    const { state } = await runMover(plan);
    expect([state.decision, state.moved]).toEqual(['done', 3]);
    const delivered = await drain(sqs, dlq.sources[0]?.url as string);
    expect(delivered.map((m) => m.MessageAttributes?.['idempotency-key']?.StringValue).sort()).toEqual(
      parkedKeys.sort(),
    );
    const states = await statesOf(dlq.dlqArn);
    expect([states.REDRIVEN?.length, states.PARKED, states.IN_DLQ?.length]).toEqual([3, undefined, 1]);
    expect((await queueDepth(sqs, parkingUrl)).visible).toBe(0);
    // Each un-park entry names the envelope it settles, beside Park's entry for the same envelope.
    const entries = await createRedriveLedger().list(dlq.dlqArn);
    const unparked = entries.filter((e) => e.kind === 'redrive');
    expect(unparked.map((e) => e.envelopeMessageId).sort()).toEqual([...parkedIds].sort());
    expect(unparked.map((e) => [e.status, e.dlqDeleted, parkedKeys.includes(e.key)])).toEqual(
      Array(3).fill(['SENT', true, true]),
    );
    // Reconcile reads the later un-park entry, not Park's: the envelopes stay REDRIVEN.
    const report = (await reconcileHandler(
      { plan, outcome: 'completed' } as never,
      lambdaContext,
    )) as ReconcileResult;
    expect([report.redriven, report.parked, report.inDlq]).toEqual([3, 0, 1]);
    expect((await statesOf(dlq.dlqArn)).PARKED).toBeUndefined();
  });

  it('edits and resubmits: the selected copies carry the patched body and a link to the original, the envelopes keep the original bytes, the incident holds the audit record', async () => {
    const sqs = sqsClient();
    const bodies = [
      '{"orderId":"c-1","currency":"eur","total":10}',
      '{"orderId":"c-2","currency":"eur","total":20}',
      '{"orderId":"c-3","currency":"USD","total":30}',
    ];
    const dlq = await seedAndInventory({
      sqs,
      dlqName: 'mover-edit-dlq',
      sourceNames: ['mover-edit-src'],
      messages: bodies.map((body) => ({ body, attributes: errorClass('CurrencyRejected') })),
      incidentId: 'inc-mover-edit',
    });
    const transform = Transform.parse({
      mergePatch: { currency: 'EUR' },
      setAttributes: [{ name: 'schema-version', value: '2' }],
      reason: 'producer sent lower-case currency codes (INC-4711)',
    });
    const plan = planFor(dlq, {
      sampleSize: 1,
      rampRates: [100],
      selection: Selection.parse({ body: [{ jsonPath: '$.currency', equals: 'eur' }] }),
      transform,
      requestedBy: 'jane.doe',
    });
    const { state } = await runMover(plan);
    expect([state.decision, state.moved, state.edited]).toEqual(['done', 2, 2]);

    const delivered = await drain(sqs, dlq.sources[0]?.url as string);
    expect(delivered.map((m) => JSON.parse(m.Body as string)).sort((a, b) => a.total - b.total)).toEqual([
      { orderId: 'c-1', currency: 'EUR', total: 10 },
      { orderId: 'c-2', currency: 'EUR', total: 20 },
    ]);
    expect(delivered.map((m) => m.MessageAttributes?.['schema-version']?.StringValue)).toEqual(['2', '2']);
    const envelopes = [];
    for await (const e of createEnvelopeStore().listEnvelopes(dlq.dlqArn)) envelopes.push(e);
    const redriven = envelopes.filter((e) => e.state === 'REDRIVEN');
    // The envelope keeps the original bytes; the copy links to them by MessageId and hash.
    expect(
      redriven.map((e) => Buffer.from(e.inlineBody ?? new Uint8Array()).toString('utf8')).sort(),
    ).toEqual(bodies.slice(0, 2));
    expect(delivered.map((m) => m.MessageAttributes?.['redrive-edit-of']?.StringValue).sort()).toEqual(
      redriven.map((e) => `${e.messageId} sha256:${e.bodySha256}`).sort(),
    );
    expect(envelopes.filter((e) => e.state === 'IN_DLQ')).toHaveLength(1);
    const audit = (await createAuditTrail().list('inc-mover-edit')).filter(
      (e) => e.kind === 'messages-edited',
    );
    const edits = audit.flatMap((e) => (e as { edits?: Array<Record<string, string>> }).edits ?? []);
    expect(audit.every((e) => e.by === 'jane.doe')).toBe(true);
    expect(edits.map((e) => [e.originalSha256, e.editedSha256]).sort()).toEqual(
      redriven
        .map((e) => [
          e.bodySha256,
          sha256Hex(
            JSON.stringify({
              ...JSON.parse(Buffer.from(e.inlineBody ?? new Uint8Array()).toString('utf8')),
              currency: 'EUR',
            }),
          ),
        ])
        .sort(),
    );
  });

  it('sends an SNS-subscription DLQ back to its topic: the payload once per message, with its idempotency key', async () => {
    const sqs = sqsClient();
    const sns = new SNSClient({});
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'mover-orders-topic' }));
    const dlqUrl = await createQueue(sqs, 'mover-sns-dlq');
    const deliveredUrl = await createQueue(sqs, 'mover-sns-delivered');
    const queues = createSqsQueues({ client: sqs });
    const dlqInfo = await queues.describe(dlqUrl);
    const ok = await queues.describe(deliveredUrl);
    const registration = QueueRegistration.parse({
      dlqArn: dlqInfo.arn,
      origin: { kind: 'sns', topicArn: TopicArn as string },
    });
    await createQueueRegistry().putRegistration(registration);
    // What an SNS subscription dead-letters: the raw payload with the subscription's failure attributes.
    for (let i = 0; i < 5; i += 1)
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: dlqUrl,
          MessageBody: JSON.stringify({ orderId: `s-${i}` }),
          MessageAttributes: {
            RequestID: { DataType: 'String', StringValue: `req-${i}` },
            ErrorCode: { DataType: 'String', StringValue: '503' },
            ErrorMessage: { DataType: 'String', StringValue: 'endpoint returned HTTP 503' },
          },
        }),
      );
    await inventoryDlq(
      { dlq: dlqInfo, registration, incidentId: 'inc-mover-sns', waitTimeSeconds: 0 },
      { queues, envelopes: createEnvelopeStore(), remainingTimeMs: () => 60_000, now: Date.now },
    );
    await sns.send(
      new SubscribeCommand({
        TopicArn,
        Protocol: 'sqs',
        Endpoint: ok.arn,
        Attributes: { RawMessageDelivery: 'true' },
      }),
    );
    const plan = planFor(
      { dlqArn: dlqInfo.arn, dlqUrl, incidentId: 'inc-mover-sns' },
      { sampleSize: 1, rampRates: [100] },
    );
    const { state } = await runMover(plan);
    expect([state.decision, state.moved]).toEqual(['done', 5]);
    const delivered = await drain(sqs, deliveredUrl);
    expect(delivered.map((m) => JSON.parse(m.Body as string).orderId).sort()).toEqual([
      's-0',
      's-1',
      's-2',
      's-3',
      's-4',
    ]);
    const keys = delivered.map((m) => m.MessageAttributes?.['idempotency-key']?.StringValue);
    expect(new Set(keys).size).toBe(5);
    // The failure's attributes are SNS's, not the message's: not published again.
    expect(delivered.some((m) => m.MessageAttributes?.ErrorCode !== undefined)).toBe(false);
    sns.destroy();
  });

  it('sends a Lambda async-invocation DLQ back to its function, each event invoked once asynchronously', async () => {
    const sqs = sqsClient();
    const dlqUrl = await createQueue(sqs, 'mover-lambda-dlq');
    const queues = createSqsQueues({ client: sqs });
    const dlqInfo = await queues.describe(dlqUrl);
    let broken = true;
    const handled: string[] = [];
    const functionArn = stack().standins.lambda.defineFunction({
      name: 'mover-ship-order',
      deadLetterArn: dlqInfo.arn,
      maximumRetryAttempts: 0,
      handler: (event) => {
        if (broken)
          throw Object.assign(new Error('carrier API returned 503'), { name: 'CarrierUnavailableError' });
        handled.push((event as { orderId: string }).orderId);
      },
    });
    const lambda = new LambdaClient({});
    for (let i = 0; i < 4; i += 1)
      await lambda.send(
        new InvokeCommand({
          FunctionName: functionArn,
          InvocationType: 'Event',
          Payload: Buffer.from(`{"orderId":"l-${i}"}`),
        }),
      );
    lambda.destroy();
    await stack().standins.deliveries.idle();
    const registration = QueueRegistration.parse({
      dlqArn: dlqInfo.arn,
      origin: { kind: 'lambda', functionArn },
    });
    await createQueueRegistry().putRegistration(registration);
    await inventoryDlq(
      { dlq: dlqInfo, registration, incidentId: 'inc-mover-lambda', waitTimeSeconds: 0 },
      { queues, envelopes: createEnvelopeStore(), remainingTimeMs: () => 60_000, now: Date.now },
    );
    const failures = [];
    for await (const e of createEnvelopeStore().listEnvelopes(dlqInfo.arn))
      failures.push(e.failure.errorClass);
    expect(failures).toEqual(Array(4).fill('CarrierUnavailableError'));
    broken = false;
    const plan = planFor(
      { dlqArn: dlqInfo.arn, dlqUrl, incidentId: 'inc-mover-lambda' },
      { sampleSize: 1, rampRates: [100] },
    );
    const { state } = await runMover(plan);
    await stack().standins.deliveries.idle();
    expect([state.decision, state.moved]).toEqual(['done', 4]);
    expect(handled.sort()).toEqual(['l-0', 'l-1', 'l-2', 'l-3']);
    expect((await queueDepth(sqs, dlqUrl)).visible).toBe(0);
  });
});
