import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createIncidentStore } from '#incident/incident-store.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createEnvelopeStore, type StoredEnvelope } from '#inventory/envelope-store.js';
import { sha256Hex } from '#inventory/idempotency-key.js';
import { createInventorySessionStore } from '#inventory/inventory-session.js';
import { sqsClient } from '#platform/clients.js';
import { type RedriveError, TransientError } from '#platform/errors.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { normaliseAlarmEvent } from '../../functions/triage/alarm-event.js';
import { createTriageHandler } from '../../functions/triage/handler.js';
import { type TriageDeps, type TriageResult, triage } from '../../functions/triage/triage.js';
import type { WorkflowStarter } from '../../functions/triage/workflow-starter.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { createMemoryNotifier } from '../support/memory-notifier.js';
import { queueDepth, type SeedMessage, seedDlq } from '../support/seed-dlq.js';
import { tableKeys } from '../support/table-keys.js';
import { scaled } from '../support/timeouts.js';

const ACCOUNT = '111122223333';
const load = (path: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../events/${path}`, import.meta.url), 'utf8'));

/** Records starts; a second start of the same incident is "already started", as Step Functions says. */
function recordingStarter(): WorkflowStarter & { starts: Array<{ incidentId: string; input: string }> } {
  const starts: Array<{ incidentId: string; input: string }> = [];
  return {
    starts,
    async startWorkflow({ incidentId, input }) {
      const executionArn = `arn:aws:states:us-east-1:${ACCOUNT}:execution:redrive:${incidentId}`;
      if (starts.some((s) => s.incidentId === incidentId)) return { executionArn, alreadyStarted: true };
      starts.push({ incidentId, input: JSON.stringify(input) });
      return { executionArn, alreadyStarted: false };
    },
  };
}

const NEAR_1_MIB = `{"blob":"${'A'.repeat(1_040_000)}"}`;
const ORDERS_MESSAGES: SeedMessage[] = [
  { body: '{"orderId":"o-1","amount":12.5}' },
  { body: 'plain text: order o-2 could not be parsed' },
  {
    body: 'H4sIAAAAAAAA/ytJLS4BAGVX8+8EAAAA',
    attributes: {
      'content-encoding': { DataType: 'String', StringValue: 'gzip+base64' },
      sig: { DataType: 'Binary', BinaryValue: Buffer.from('3q2+7w==', 'base64') },
      retries: { DataType: 'Number.int', StringValue: '3' },
    },
  },
  { body: NEAR_1_MIB },
  { body: 'café – 😀 emoji and accents' },
  {
    body: '{"orderId":"o-6"}',
    attributes: {
      'error-class': { DataType: 'String', StringValue: 'TimeoutError' },
      'error-message': { DataType: 'String', StringValue: 'inventory service timed out after 3000 ms' },
    },
  },
  {
    body: '{"paymentId":"p-9"}',
    source: 1,
    attributes: {
      'error-class': { DataType: 'String', StringValue: 'ValidationError' },
      'error-message': { DataType: 'String', StringValue: 'amount must be positive, got -4' },
    },
  },
  { body: '{"paymentId":"p-10"}', source: 1 },
  // C12: a non-raw SNS-to-SQS delivery (the body is the SNS notification JSON).
  {
    body: '{"Type": "Notification", "MessageId": "9a1c7e55-0000-4000-8000-000000000001", "TopicArn": "arn:aws:sns:us-east-1:111122223333:order-events", "Subject": null, "Message": "{\\"orderId\\":\\"o-8\\"}", "Timestamp": "2026-01-02T08:00:00.000Z", "MessageAttributes": {"tenant": {"Type": "String", "Value": "acme"}}}',
  },
];

async function all(dlqArn: string): Promise<StoredEnvelope[]> {
  const out: StoredEnvelope[] = [];
  for await (const e of createEnvelopeStore().listEnvelopes(dlqArn)) out.push(e);
  return out;
}

describe('triage on the local stack', () => {
  let stack: LocalStack;
  let ordersDlq: Awaited<ReturnType<typeof seedDlq>>;
  const workflow = recordingStarter();
  const sqsCalls: string[] = [];
  const notifier = createMemoryNotifier();
  const handler = createTriageHandler({ overrides: { workflow, notifier } });
  const invoke = (event: unknown) =>
    handler(
      event,
      lambdaContext({ functionName: 'triage', timeoutMs: scaled(120_000), accountId: ACCOUNT }),
    ) as Promise<TriageResult>;

  // Each test asserts only the notices its own deliveries produce.
  beforeEach(() => {
    notifier.sent.splice(0);
  });

  beforeAll(async () => {
    stack = await startLocalStack({ accountId: ACCOUNT });
    // Every SQS call the handlers make goes through the shared client: record the command names.
    sqsClient().middlewareStack.add(
      (next, context) => async (args) => {
        sqsCalls.push(String(context.commandName));
        return next(args);
      },
      { step: 'initialize', name: 'recordSqsCalls' },
    );
    ordersDlq = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'orders-dlq',
      sourceNames: ['orders-queue', 'payments-queue'],
      messages: ORDERS_MESSAGES,
      maxReceiveCount: 3,
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('C01 C07 C12 C14 stores one byte-exact envelope per dead-lettered message, opens one incident and leaves the DLQ as it was', async () => {
    const before = await queueDepth(sqsClient(), ordersDlq.dlqUrl);

    const result = await invoke(load('cloudwatch/alarm-state-change.json'));

    expect(result.outcome).toBe('triaged');
    expect(result.queues.map((q) => [q.queueName, q.outcome])).toEqual([['orders-dlq', 'triaged']]);
    const envelopes = await all(ordersDlq.dlqArn);
    expect(envelopes).toHaveLength(ORDERS_MESSAGES.length);
    const store = createEnvelopeStore();
    const bySha = new Map(envelopes.map((e) => [e.bodySha256, e]));
    for (const sent of ORDERS_MESSAGES) {
      const bytes = new Uint8Array(Buffer.from(sent.body, 'utf8'));
      const envelope = bySha.get(sha256Hex(bytes));
      expect(envelope, sent.body.slice(0, 40)).toBeDefined();
      expect(Buffer.from(await store.readBody(envelope as StoredEnvelope)).equals(Buffer.from(bytes))).toBe(
        true,
      );
      expect(envelope?.sourceArn).toBe(ordersDlq.sources[sent.source ?? 0]?.arn);
    }
    const big = bySha.get(sha256Hex(NEAR_1_MIB)) as StoredEnvelope;
    expect([big.bodyChunked, big.bodyBytes]).toEqual([true, Buffer.byteLength(NEAR_1_MIB)]);
    const binary = envelopes.find((e) => e.messageAttributes.sig) as StoredEnvelope;
    expect(binary.messageAttributes).toEqual({
      'content-encoding': { dataType: 'String', stringValue: 'gzip+base64' },
      sig: { dataType: 'Binary', binaryValueBase64: '3q2+7w==' },
      retries: { dataType: 'Number.int', stringValue: '3' },
    });
    const sns = envelopes.find((e) => e.bodyFormat === 'sns-notification');
    expect([sns?.idempotencyKey, sns?.sns?.topicArn, sns?.sns?.messageAttributes]).toEqual([
      '9a1c7e55-0000-4000-8000-000000000001',
      'arn:aws:sns:us-east-1:111122223333:order-events',
      { tenant: { dataType: 'String', stringValue: 'acme' } },
    ]);
    const timeout = envelopes.find((e) => e.failure.errorClass === 'TimeoutError');
    expect(timeout?.classification).toBe('transient');

    expect(await queueDepth(sqsClient(), ordersDlq.dlqUrl)).toEqual(before);
    expect(before).toEqual({ visible: ORDERS_MESSAGES.length, inFlight: 0 });

    const incidentId = result.queues[0]?.incidentId as string;
    const incident = await createIncidentStore().getIncident(incidentId);
    expect(incident?.summary.messageCount).toBe(ORDERS_MESSAGES.length);
    expect(incident?.summary.countBySource).toEqual({
      [ordersDlq.sources[0]?.arn as string]: 7,
      [ordersDlq.sources[1]?.arn as string]: 2,
    });
    expect(incident?.sourceArns).toEqual(ordersDlq.sources.map((s) => s.arn).sort());
    expect(incident?.summary.partial).toBe(false);
    expect(incident?.status).toBe('WORKFLOW_STARTED');
    expect(workflow.starts).toEqual([
      {
        incidentId,
        input: JSON.stringify({ dlqArn: ordersDlq.dlqArn, incidentId, requestedBy: 'triage' }),
      },
    ]);
  });

  it('C05 a second delivery of the same event and the SNS copy are duplicates that change nothing', async () => {
    const envelopesBefore = await all(ordersDlq.dlqArn);
    const rowsBefore = await tableKeys();

    const again = await invoke(load('cloudwatch/alarm-state-change.json'));
    const viaSns = await invoke(load('sns/alarm-notification.json'));

    expect([again.outcome, again.message]).toEqual(['duplicate', 'duplicate alarm transition']);
    expect([viaSns.outcome, viaSns.message]).toEqual(['duplicate', 'duplicate alarm transition']);
    expect(await tableKeys()).toEqual(rowsBefore);
    const after = await all(ordersDlq.dlqArn);
    expect(after.map((e) => [e.messageId, e.lastSeenAt]).sort()).toEqual(
      envelopesBefore.map((e) => [e.messageId, e.lastSeenAt]).sort(),
    );
    expect(workflow.starts).toHaveLength(1);
    expect((await queueDepth(sqsClient(), ordersDlq.dlqUrl)).visible).toBe(ORDERS_MESSAGES.length);
  });

  it('C01 C04 configuration changes and OK / INSUFFICIENT_DATA transitions are acknowledged without touching the DLQ or the table', async () => {
    const rowsBefore = await tableKeys();
    sqsCalls.length = 0;
    const results = await Promise.all(
      [
        'cloudwatch/alarm-configuration-change.json',
        'cloudwatch/alarm-state-change-insufficient-data.json',
        'cloudwatch/alarm-state-change-ok-from-insufficient-data.json',
        'cloudwatch/alarm-state-change-ok-from-alarm.json',
      ].map((path) => invoke(load(path))),
    );

    expect(results.map((r) => r.outcome)).toEqual([
      'not-a-state-change',
      'ignored-transition',
      'ignored-transition',
      'ignored-transition',
    ]);
    expect(await tableKeys()).toEqual(rowsBefore);
    expect(sqsCalls.filter((c) => c !== 'GetQueueAttributesCommand')).toEqual([]);
    // ALARM -> OK tells the incident the first test opened 'alarm cleared', and nothing more (C04).
    expect(notifier.sent.splice(0).map((n) => n.kind)).toEqual(['alarm-cleared']);
  });

  it('a malformed event and an unknown queue are rejected with an error naming what is wrong, and nothing is written', async () => {
    const rowsBefore = await tableKeys();
    const broken = load('cloudwatch/alarm-state-change.json') as { detail: Record<string, unknown> };
    delete broken.detail.state;
    const notJson = load('sns/alarm-notification.json') as { Records: Array<{ Sns: { Message: string } }> };
    (notJson.Records[0] as { Sns: { Message: string } }).Sns.Message = '{"AlarmName": ';
    const unknownQueue = JSON.parse(
      JSON.stringify(load('cloudwatch/alarm-state-change.json')).replaceAll('orders-dlq', 'no-such-dlq'),
    );

    const errors = (await Promise.all(
      [broken, notJson, unknownQueue].map((e) =>
        invoke(e).then(
          () => undefined,
          (error: unknown) => error,
        ),
      ),
    )) as RedriveError[];

    expect(errors.map((e) => e.name)).toEqual([
      'Redrive.InvalidInput',
      'Redrive.InvalidInput',
      'Redrive.QueueNotFound',
    ]);
    expect(errors[0]?.message).toContain('detail.state');
    expect(errors[1]?.message).toContain('Records.0.Sns.Message: is not JSON');
    expect(errors[2]?.message).toBe('queue not found: no-such-dlq');
    expect(await tableKeys()).toEqual(rowsBefore);
  });

  it('C02 a metric-math alarm over two DLQs triages each queue separately; a SEARCH alarm is unresolvable and peeks nothing', async () => {
    const payments = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'payments-dlq',
      sourceNames: ['payments-main'],
      messages: [{ body: '{"paymentId":"p-1"}' }, { body: '{"paymentId":"p-2"}' }],
    });
    const rowsBefore = await tableKeys();
    sqsCalls.length = 0;

    const search = await invoke(load('sns/alarm-notification-search-expression.json'));
    expect([search.outcome, search.message]).toEqual([
      'unresolvable',
      'unresolvable alarm: no QueueName dimension',
    ]);
    expect(sqsCalls).toEqual([]);
    expect(notifier.sent.map((n) => [n.kind, n.incidentId])).toEqual([
      [
        'unresolvable-alarm',
        'arn:aws:cloudwatch:us-east-1:111122223333:alarm:any-dlq-search@2026-01-02T10:35:00.000+0000',
      ],
    ]);
    expect(await tableKeys()).toEqual(rowsBefore);

    const math = await invoke(load('sns/alarm-notification-metric-math.json'));
    expect(math.queues.map((q) => [q.queueName, q.outcome, q.summary?.messageCount])).toEqual([
      ['orders-dlq', 'triaged', ORDERS_MESSAGES.length],
      ['payments-dlq', 'triaged', 2],
    ]);
    expect(new Set(math.queues.map((q) => q.incidentId)).size).toBe(2);
    expect(await all(payments.dlqArn)).toHaveLength(2);
    expect(await all(ordersDlq.dlqArn)).toHaveLength(ORDERS_MESSAGES.length);
  });

  it('C05 a retry after a partial envelope write completes the set without duplicates and starts one workflow', async () => {
    const retryDlq = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'retry-dlq',
      sourceNames: ['retry-queue'],
      messages: Array.from({ length: 10 }, (_, i) => ({ body: `{"n":${i}}` })),
    });
    const event = JSON.parse(
      JSON.stringify(load('cloudwatch/alarm-state-change.json')).replaceAll('orders-dlq', 'retry-dlq'),
    );
    const starter = recordingStarter();
    const realStore = createEnvelopeStore();
    let throttle = true;
    const deps = (): TriageDeps => ({
      queues: createSqsQueues(),
      envelopes: {
        ...realStore,
        async putEnvelopes(items, opts) {
          if (!throttle) return realStore.putEnvelopes(items, opts);
          await realStore.putEnvelopes(items.slice(0, 3), opts);
          throw new TransientError('simulated DynamoDB throttle after 3 of 10 envelopes');
        },
      },
      sessions: createInventorySessionStore(),
      incidents: createIncidentStore(),
      registry: createQueueRegistry(),
      workflow: starter,
      now: () => Date.now(),
      remainingTimeMs: () => 60_000,
      config: {
        budgets: { messageBudget: 5000, pageBudget: 10_000, safetyMarginMs: 5_000 },
        alarmQueueMap: {},
      },
      log: { info: () => undefined, warn: () => undefined },
    });

    const first = await triage(normaliseAlarmEvent(event), deps()).catch((e: unknown) => e);
    expect((first as Error).name).toBe('Redrive.Transient');
    expect(await all(retryDlq.dlqArn)).toHaveLength(3);
    const firstSeen = new Map((await all(retryDlq.dlqArn)).map((e) => [e.messageId, e.firstSeenAt]));
    expect((await queueDepth(sqsClient(), retryDlq.dlqUrl)).visible).toBe(10);

    throttle = false;
    const second = await triage(normaliseAlarmEvent(event), deps());
    const third = await triage(normaliseAlarmEvent(event), deps());

    expect(second.queues[0]?.summary?.messageCount).toBe(10);
    expect(third.outcome).toBe('duplicate');
    const envelopes = await all(retryDlq.dlqArn);
    expect(envelopes).toHaveLength(10);
    for (const e of envelopes)
      if (firstSeen.has(e.messageId)) expect(e.firstSeenAt).toBe(firstSeen.get(e.messageId));
    expect(starter.starts).toHaveLength(1);
  });

  it('C05 the EventBridge and SNS copies arriving at the same time inventory the DLQ once and start one workflow', async () => {
    const raced = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'raced-dlq',
      sourceNames: ['raced-queue'],
      messages: Array.from({ length: 12 }, (_, i) => ({ body: `{"r":${i}}` })),
    });
    const rename = (event: unknown) =>
      JSON.parse(JSON.stringify(event).replaceAll('orders-dlq', 'raced-dlq')) as Record<string, unknown>;
    const startsBefore = workflow.starts.length;

    const results = await Promise.all([
      invoke(rename(load('cloudwatch/alarm-state-change.json'))),
      invoke(rename(load('sns/alarm-notification.json'))),
    ]);

    expect(results.map((r) => r.outcome).sort()).toEqual(['duplicate', 'triaged']);
    expect(results.find((r) => r.outcome === 'triaged')?.queues[0]?.summary?.messageCount).toBe(12);
    expect(await all(raced.dlqArn)).toHaveLength(12);
    expect(workflow.starts.length - startsBefore).toBe(1);
    expect(await queueDepth(sqsClient(), raced.dlqUrl)).toEqual({ visible: 12, inFlight: 0 });
  });
});
