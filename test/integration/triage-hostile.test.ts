/**
 * Triage against hostile and broken deliveries on the local stack: alarms from another region or
 * account, odd QueueName values, huge strings, and a run that dies between steps.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIncidentStore, incidentIdOf } from '#incident/incident-store.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { createInventorySessionStore } from '#inventory/inventory-session.js';
import { sqsClient } from '#platform/clients.js';
import { TransientError } from '#platform/errors.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import type { NormalisedAlarmEvent } from '../../functions/triage/alarm-event.js';
import { normaliseAlarmEvent } from '../../functions/triage/alarm-event.js';
import { createTriageHandler } from '../../functions/triage/handler.js';
import { type TriageDeps, type TriageResult, triage } from '../../functions/triage/triage.js';
import type { WorkflowStarter } from '../../functions/triage/workflow-starter.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { createMemoryNotifier } from '../support/memory-notifier.js';
import { queueDepth, seedDlq } from '../support/seed-dlq.js';
import { tableKeys } from '../support/table-keys.js';
import { scaled } from '../support/timeouts.js';

const ACCOUNT = '111122223333';
const load = (path: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../events/${path}`, import.meta.url), 'utf8'));
const renamed = (path: string, from: string, to: string) =>
  JSON.parse(JSON.stringify(load(path)).replaceAll(from, to)) as Record<string, unknown>;

function recordingStarter(): WorkflowStarter & { starts: string[] } {
  const starts: string[] = [];
  return {
    starts,
    async startWorkflow({ incidentId }) {
      const executionArn = `arn:aws:states:us-east-1:${ACCOUNT}:execution:redrive:${incidentId}`;
      if (starts.includes(incidentId)) return { executionArn, alreadyStarted: true };
      starts.push(incidentId);
      return { executionArn, alreadyStarted: false };
    },
  };
}

function stateChange(raw: unknown): Extract<NormalisedAlarmEvent, { kind: 'state-change' }> {
  const event = normaliseAlarmEvent(raw);
  if (event.kind !== 'state-change') throw new Error('not a state change');
  return event;
}

function createIncidentStoreId(event: Extract<NormalisedAlarmEvent, { kind: 'state-change' }>): string {
  const r = event.record;
  return incidentIdOf(
    r.alarmArn,
    r.stateTimestamp,
    `arn:aws:sqs:${r.region}:${r.account}:${r.queueNames[0]}`,
  );
}

describe('triage under hostile deliveries', () => {
  let stack: LocalStack;
  const sqsCalls: string[] = [];
  const workflow = recordingStarter();
  const handler = createTriageHandler({ overrides: { workflow } });
  const invoke = (event: unknown) =>
    handler(
      event,
      lambdaContext({ functionName: 'triage', timeoutMs: scaled(120_000), accountId: ACCOUNT }),
    ) as Promise<TriageResult>;
  const failure = (event: unknown) =>
    invoke(event).then(
      (r) => r as unknown as Error,
      (e: unknown) => e as Error,
    );

  beforeAll(async () => {
    stack = await startLocalStack({ accountId: ACCOUNT });
    sqsClient().middlewareStack.add(
      (next, context) => async (args) => {
        sqsCalls.push(String(context.commandName));
        return next(args);
      },
      { step: 'initialize', name: 'recordSqsCalls' },
    );
    await seedDlq({
      sqs: sqsClient(),
      dlqName: 'orders-dlq',
      sourceNames: ['orders-queue'],
      messages: [{ body: '{"orderId":"o-1"}' }, { body: '{"orderId":"o-2"}' }],
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('an alarm from another region is refused naming the alarm ARN, and the same-named DLQ of this region is not touched', async () => {
    const rowsBefore = await tableKeys();
    sqsCalls.length = 0;
    const eb = renamed('cloudwatch/alarm-state-change.json', 'us-east-1', 'eu-west-1');
    const sns = renamed('sns/alarm-notification.json', 'us-east-1', 'eu-west-1');

    const errors = await Promise.all([failure(eb), failure(sns)]);

    expect(errors.map((e) => e.name)).toEqual(['Redrive.InvalidInput', 'Redrive.InvalidInput']);
    expect(errors[0]?.message).toContain('resources.0: alarm is in eu-west-1');
    expect(errors[1]?.message).toContain('Records.0.Sns.Message.AlarmArn: alarm is in eu-west-1');
    expect(sqsCalls.filter((c) => c === 'ReceiveMessageCommand')).toEqual([]);
    expect(await tableKeys()).toEqual(rowsBefore);
  });

  it('an alarm of another account is refused naming the alarm ARN when the queue resolves elsewhere, nothing written', async () => {
    const rowsBefore = await tableKeys();
    sqsCalls.length = 0;
    const eb = renamed('cloudwatch/alarm-state-change.json', ACCOUNT, '444455556666');

    const error = await failure(eb);

    // Either SQS refuses the lookup in the other account, or triage refuses the mismatch: never a triage.
    expect(['Redrive.InvalidInput', 'Redrive.QueueNotFound', 'Redrive.AccessDenied']).toContain(error.name);
    expect(sqsCalls.filter((c) => c === 'ReceiveMessageCommand')).toEqual([]);
    expect(await tableKeys()).toEqual(rowsBefore);
  });

  it('QueueName values SQS can never hold are refused naming the dimension, before any SQS call', async () => {
    const rowsBefore = await tableKeys();
    sqsCalls.length = 0;
    const withQueueName = (name: string) =>
      JSON.parse(
        JSON.stringify(load('cloudwatch/alarm-state-change.json')).replace(
          '"orders-dlq"',
          JSON.stringify(name),
        ),
      );
    const bad = [
      'orders dlq',
      '../orders-dlq',
      'q'.repeat(81),
      'orders-dlq\u0000',
      'https://sqs.us-east-1.amazonaws.com/111122223333/orders-dlq',
    ];

    const errors = await Promise.all(bad.map((name) => failure(withQueueName(name))));

    expect(errors.map((e) => e.name)).toEqual(bad.map(() => 'Redrive.InvalidInput'));
    for (const e of errors)
      expect(e.message).toContain('detail.configuration.metrics.0.metricStat.metric.dimensions.QueueName');
    expect(sqsCalls).toEqual([]);
    expect(await tableKeys()).toEqual(rowsBefore);
  });

  it('huge alarm names and state timestamps are refused naming the field, nothing written', async () => {
    const rowsBefore = await tableKeys();
    const hugeTimestamp = load('cloudwatch/alarm-state-change.json') as {
      detail: { state: { timestamp: string } };
    };
    hugeTimestamp.detail.state.timestamp = `2026-01-02T10:35:00.000+0000${'9'.repeat(4000)}`;
    const hugeName = renamed('cloudwatch/alarm-state-change.json', 'orders-dlq-not-empty', 'n'.repeat(3000));

    const errors = await Promise.all([failure(hugeTimestamp), failure(hugeName)]);

    expect(errors.map((e) => e.name)).toEqual(['Redrive.InvalidInput', 'Redrive.InvalidInput']);
    expect(errors[0]?.message).toContain('detail.state.timestamp');
    expect(errors[1]?.message).toMatch(/resources\.0|detail\.alarmName/);
    expect(await tableKeys()).toEqual(rowsBefore);
  });

  it('a run that dies after opening the incident, before the workflow start and before it can mark FAILED, is completed by its Lambda retry; another delivery inside the lease stays a duplicate', async () => {
    const crashed = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'crashed-dlq',
      sourceNames: ['crashed-queue'],
      messages: Array.from({ length: 4 }, (_, i) => ({ body: `{"c":${i}}` })),
    });
    const event = stateChange(renamed('cloudwatch/alarm-state-change.json', 'orders-dlq', 'crashed-dlq'));
    const starter = recordingStarter();
    const realIncidents = createIncidentStore();
    let dynamoDown = true;
    const deps = (requestId: string): TriageDeps => ({
      queues: createSqsQueues(),
      envelopes: createEnvelopeStore(),
      sessions: createInventorySessionStore(),
      incidents: {
        ...realIncidents,
        claimTransition: (claim, now) => realIncidents.claimTransition(claim, now),
        async finishTransition(key, status, details) {
          if (dynamoDown) throw new TransientError('simulated DynamoDB outage while marking FAILED');
          return realIncidents.finishTransition(key, status, details);
        },
      },
      registry: createQueueRegistry(),
      workflow: {
        async startWorkflow(request) {
          if (dynamoDown) throw new TransientError('simulated crash before StartExecution');
          return starter.startWorkflow(request);
        },
      },
      now: () => Date.now(),
      // A 15-minute function: the lease of the dead run outlives both async retries (1 and 3 min).
      remainingTimeMs: () => 900_000,
      config: {
        budgets: { messageBudget: 5000, pageBudget: 10_000, safetyMarginMs: 5_000 },
        alarmQueueMap: {},
      },
      log: { info: () => undefined, warn: () => undefined },
      requestId,
    });

    const first = await triage(event, deps('req-original')).catch((e: unknown) => e as Error);
    expect((first as Error).name).toBe('Redrive.Transient');
    const incidentId = createIncidentStoreId(event);
    expect((await realIncidents.getIncident(incidentId))?.status).toBe('OPEN');
    expect((await realIncidents.getTransition(event.record.dedupeKey))?.status).toBe('IN_PROGRESS');

    dynamoDown = false;
    const otherDelivery = await triage(event, deps('req-sns-copy'));
    expect([otherDelivery.outcome, starter.starts.length]).toEqual(['duplicate', 0]);

    const retry = await triage(event, deps('req-original'));
    expect(retry.queues.map((q) => [q.outcome, q.summary?.messageCount])).toEqual([['triaged', 4]]);
    expect(starter.starts).toEqual([incidentId]);
    expect((await realIncidents.getIncident(incidentId))?.status).toBe('WORKFLOW_STARTED');
    expect((await realIncidents.getTransition(event.record.dedupeKey))?.status).toBe('HANDLED');
    expect(await queueDepth(sqsClient(), crashed.dlqUrl)).toEqual({ visible: 4, inFlight: 0 });
  });

  it('C14 bodies at the inline and chunk boundaries, 1 MiB, and 4-byte characters split across chunks come back byte for byte; messages sent straight to the DLQ have source unknown', async () => {
    // SQS counts the attributes in the 1 MiB too: leave them 200 bytes.
    const emoji = `x${'\u{1F600}'.repeat(262_093)}`; // 1,048,373 bytes: every chunk boundary cuts a character
    const bodies = [
      'a',
      'b'.repeat(64 * 1024),
      'c'.repeat(64 * 1024 + 1),
      'd'.repeat(300 * 1024),
      'e'.repeat(300 * 1024 + 1),
      'f'.repeat(1024 * 1024 - 200),
      emoji,
      '\u00e9'.repeat(32 * 1024 + 1), // 2-byte characters: 65,538 bytes, first chunked size
    ];
    const boundary = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'boundary-dlq',
      sourceNames: ['boundary-queue'],
      messages: [],
      sendStraightToDlq: bodies.map((body) => ({
        body,
        attributes: {
          s: { DataType: 'String.custom', StringValue: 'x' },
          n: { DataType: 'Number.float', StringValue: '-1.5e3' },
          b: { DataType: 'Binary.gzip', BinaryValue: new Uint8Array([0, 255, 1]) },
        },
      })),
    });
    const result = await invoke(renamed('cloudwatch/alarm-state-change.json', 'orders-dlq', 'boundary-dlq'));

    expect(result.queues.map((q) => [q.outcome, q.summary?.messageCount])).toEqual([
      ['triaged', bodies.length],
    ]);
    const store = createEnvelopeStore();
    const stored = [];
    for await (const e of store.listEnvelopes(boundary.dlqArn)) stored.push(e);
    const byLength = new Map(stored.map((e) => [e.bodyBytes, e]));
    for (const body of bodies) {
      const bytes = Buffer.from(body, 'utf8');
      const envelope = byLength.get(bytes.byteLength);
      expect(envelope, `${bytes.byteLength} bytes`).toBeDefined();
      if (!envelope) continue;
      expect(envelope.bodyChunked).toBe(bytes.byteLength > 64 * 1024);
      expect(Buffer.from(await store.readBody(envelope)).equals(bytes), `${bytes.byteLength} bytes`).toBe(
        true,
      );
      expect(envelope.sourceArn).toBe('unknown');
      expect(envelope.messageAttributes).toEqual({
        s: { dataType: 'String.custom', stringValue: 'x' },
        n: { dataType: 'Number.float', stringValue: '-1.5e3' },
        b: { dataType: 'Binary.gzip', binaryValueBase64: 'AP8B' },
      });
    }
    expect(await queueDepth(sqsClient(), boundary.dlqUrl)).toEqual({ visible: bodies.length, inFlight: 0 });
  });

  it('an inventory stopped by its message budget tells a person, not just the log: one partial-inventory notification naming the reason, and the workflow that continues it', async () => {
    const deep = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'deep-dlq',
      sourceNames: ['deep-queue'],
      messages: Array.from({ length: 12 }, (_, i) => ({ body: `{"d":${i}}` })),
    });
    const notifier = createMemoryNotifier();
    const starter = recordingStarter();
    const event = stateChange(renamed('cloudwatch/alarm-state-change.json', 'orders-dlq', 'deep-dlq'));

    const result = await triage(event, {
      queues: createSqsQueues(),
      envelopes: createEnvelopeStore(),
      sessions: createInventorySessionStore(),
      incidents: createIncidentStore(),
      registry: createQueueRegistry(),
      workflow: starter,
      now: () => Date.now(),
      remainingTimeMs: () => 60_000,
      config: { budgets: { messageBudget: 5, pageBudget: 10_000, safetyMarginMs: 5_000 }, alarmQueueMap: {} },
      log: { info: () => undefined, warn: () => undefined },
      notifier,
    });

    const queue = result.queues[0];
    expect(queue?.outcome).toBe('continuing');
    expect(starter.starts).toEqual([queue?.incidentId]);
    expect(notifier.sent.map((n) => [n.kind, n.incidentId, n.fields.stopReason])).toEqual([
      ['partial-inventory', queue?.incidentId, 'message-budget'],
    ]);
    expect(notifier.sent[0]?.text).toMatch(
      /^deep-dlq: inventory continues in the workflow: 10 of about 12 messages so far \(message-budget\)/,
    );
    // What it saw stays held for the workflow's ContinueInventory: 10 of the 12 in flight
    // (queueDepth corrects for the local stand-in counting them inside ApproximateNumberOfMessages).
    expect(await queueDepth(sqsClient(), deep.dlqUrl)).toEqual({ visible: 2, inFlight: 10 });
  });

  it('two alarms of one DLQ (depth and oldest-age) firing together inventory it once: one complete incident and one workflow, the other run says busy; the lease is released after', async () => {
    const twin = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'twin-dlq',
      sourceNames: ['twin-queue'],
      messages: Array.from({ length: 40 }, (_, i) => ({ body: `{"t":${i}}` })),
    });
    const depth = renamed('cloudwatch/alarm-state-change.json', 'orders-dlq', 'twin-dlq');
    const age = JSON.parse(
      JSON.stringify(depth).replaceAll('twin-dlq-not-empty', 'twin-dlq-oldest-age'),
    ) as Record<string, unknown>;
    const before = workflow.starts.length;

    const results = await Promise.all([invoke(depth), invoke(age)]);

    const outcomes = results.flatMap((r) =>
      r.queues.map((q) => [q.outcome, q.summary?.messageCount ?? null]),
    );
    expect(outcomes.sort()).toEqual([
      ['busy', null],
      ['triaged', 40],
    ]);
    expect(results.find((r) => r.queues[0]?.outcome === 'busy')?.queues[0]?.reason).toMatch(
      /^another alarm transition \(arn:aws:cloudwatch:us-east-1:111122223333:alarm:twin-dlq-(not-empty|oldest-age)@/,
    );
    expect(workflow.starts.length - before).toBe(1);
    expect(await queueDepth(sqsClient(), twin.dlqUrl)).toEqual({ visible: 40, inFlight: 0 });

    // A later transition of the same DLQ is not locked out.
    const later = JSON.parse(
      JSON.stringify(depth).replaceAll('2026-01-02T10:35:00.000+0000', '2026-01-03T10:35:00.000+0000'),
    ) as Record<string, unknown>;
    const next = await invoke(later);
    expect(next.queues.map((q) => [q.outcome, q.summary?.messageCount])).toEqual([['triaged', 40]]);
  });
});
