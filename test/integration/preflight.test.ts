import { SetQueueAttributesCommand, StartMessageMoveTaskCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIncidentStore, type Incident } from '#incident/incident-store.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sqsClient } from '#platform/clients.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { createMoveTasks } from '#transfer/move-tasks.js';
import { createPreflightDeps } from '../../functions/preflight/deps.js';
import { handler } from '../../functions/preflight/handler.js';
import { type PreflightDeps, type PreflightResult, preflight } from '../../functions/preflight/preflight.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { createQueue, drain, lambdaContext, planFor, seedAndInventory } from '../support/redrive-fixtures.js';
import { queueDepth, seedDlq } from '../support/seed-dlq.js';

/** Real ports, with every AWS call counted. */
function countingDeps(): PreflightDeps & { calls: string[] } {
  const calls: string[] = [];
  const count = <T extends object>(target: T, prefix: string): T =>
    new Proxy(target, {
      get(obj, prop, receiver) {
        const value = Reflect.get(obj, prop, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push(`${prefix}.${String(prop)}`);
          return value.apply(obj, args);
        };
      },
    });
  return {
    queues: count(createSqsQueues(), 'sqs'),
    moveTasks: count(createMoveTasks(), 'moveTasks'),
    envelopes: count(createEnvelopeStore(), 'dynamodb'),
    now: Date.now,
    calls,
  };
}

const run = (event: unknown) => handler(event as never, lambdaContext) as Promise<PreflightResult>;

describe('Preflight against the local stack', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('C06 refuses while a move task is RUNNING on the DLQ and names its handle', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'c06-active-dlq',
      sourceNames: ['c06-active-src'],
      messages: Array.from({ length: 30 }, (_, i) => ({ body: `{"n":${i}}` })),
      incidentId: 'inc-c06-active',
    });
    const started = await sqsClient().send(
      new StartMessageMoveTaskCommand({ SourceArn: dlq.dlqArn, MaxNumberOfMessagesPerSecond: 1 }),
    );
    const result = await run({ action: 'preflight', plan: planFor(dlq) });
    expect(result.ok).toBe(false);
    expect(result.refusal).toBe(`redrive refused: task ${started.TaskHandle} already active`);
    expect(result.activeMoveTask).toBe(started.TaskHandle);
    await createMoveTasks().cancel(started.TaskHandle as string);
  });

  it('N02 the recheck after the approval inventories and classifies messages that dead-lettered after triage', async () => {
    const names = { dlqName: 'n02-recheck-dlq', sourceNames: ['n02-recheck-src'] };
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      ...names,
      messages: Array.from({ length: 4 }, (_, i) => ({ body: `{"n":${i}}` })),
      incidentId: 'inc-n02-recheck',
    });
    // The alarm is already in ALARM: these three make no new transition and get no triage.
    const oom = { 'error-class': { DataType: 'String', StringValue: 'OutOfMemoryError' } };
    await seedDlq({
      sqs: sqsClient(),
      ...names,
      messages: [1, 2, 3].map((i) => ({ body: `{"late":${i}}`, attributes: oom })),
    });
    const parking = await createQueue(sqsClient(), 'n02-recheck-parking');
    const result = await run({
      action: 'recheck',
      plan: planFor(dlq, { parkingQueueUrl: parking }),
      executionName: 'exec-n02',
    });
    expect([result.ok, result.dlqDepth, result.lateArrivals]).toEqual([true, 7, 3]);
    expect(result.warnings).toContain(
      '3 message(s) reached the DLQ after triage: inventoried and classified now (3 to park before the bulk move)',
    );
    const late = [];
    for await (const e of createEnvelopeStore().listEnvelopes(dlq.dlqArn)) if (e.lateArrival) late.push(e);
    expect(late.map((e) => e.classification)).toEqual(['poison', 'poison', 'poison']);
    expect(late.every((e) => e.incidentId === 'inc-n02-recheck')).toBe(true);
  });

  it('C06 rejects a ramp step above 500 msg/s before any API call', async () => {
    const deps = countingDeps();
    const plan = planFor({
      dlqArn: 'arn:aws:sqs:us-east-1:123456789012:x-dlq',
      dlqUrl: 'http://x',
      incidentId: 'i',
    });
    const result = await preflight(
      { action: 'preflight', plan: { ...plan, rampRates: [10, 100, 600] } },
      deps,
    );
    expect(result.ok).toBe(false);
    expect(result.refusal).toBe('redrive refused: rampRates[2]: 600 exceeds max 500 msg/s');
    expect(deps.calls).toEqual([]);
  });

  it('C08 accepts FIFO -> FIFO and reports the DLQ as FIFO', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'c08-orders-dlq.fifo',
      sourceNames: ['c08-orders-queue.fifo'],
      messages: [{ body: '{"orderId":"o-7","step":2}', groupId: 'customer-42' }],
      incidentId: 'inc-c08-fifo',
    });
    const result = await run({
      action: 'preflight',
      plan: planFor(dlq, { destinationArn: dlq.sources[0]?.arn as string }),
    });
    expect(result.refusal).toBeNull();
    expect([result.ok, result.fifo, result.sourceArns]).toEqual([true, true, [dlq.sources[0]?.arn]]);
  });

  it('C08 refuses FIFO DLQ -> standard destination and standard DLQ -> FIFO destination before any API call', async () => {
    const fifoDlq = 'arn:aws:sqs:us-east-1:123456789012:orders-dlq.fifo';
    const stdDlq = 'arn:aws:sqs:us-east-1:123456789012:orders-dlq';
    const deps = countingDeps();
    const plans = [
      planFor(
        { dlqArn: fifoDlq, dlqUrl: 'http://x/orders-dlq.fifo', incidentId: 'i' },
        {
          destinationArn: 'arn:aws:sqs:us-east-1:123456789012:orders-replay',
        },
      ),
      planFor(
        { dlqArn: stdDlq, dlqUrl: 'http://x/orders-dlq', incidentId: 'i' },
        {
          destinationArn: 'arn:aws:sqs:us-east-1:123456789012:orders-queue.fifo',
        },
      ),
    ];
    const results = await Promise.all(plans.map((plan) => preflight({ action: 'preflight', plan }, deps)));
    for (const r of results) {
      expect(r.ok).toBe(false);
      expect(r.refusal).toMatch(/^redrive refused: queue types differ \(FIFO vs standard\)/);
    }
    expect(deps.calls).toEqual([]);
  });

  it('C07 refuses a single custom destination for a DLQ shared by two sources, naming the other source', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'c07-shared-dlq',
      sourceNames: ['c07-orders-queue', 'c07-payments-queue'],
      messages: [
        { body: '{"orderId":"o-1"}', source: 0 },
        { body: '{"paymentId":"p-9"}', source: 1 },
      ],
      incidentId: 'inc-c07',
    });
    const orders = dlq.sources[0]?.arn as string;
    const refused = await run({ action: 'preflight', plan: planFor(dlq, { destinationArn: orders }) });
    expect(refused.ok).toBe(false);
    expect(refused.refusal).toContain('c07-payments-queue messages would be delivered to c07-orders-queue');

    const overridden = await run({
      action: 'preflight',
      plan: planFor(dlq, { destinationArn: orders, allowCustomDestinationForSharedDlq: true }),
    });
    expect(overridden.ok).toBe(true);

    const ownSources = await run({ action: 'preflight', plan: planFor(dlq) });
    expect(ownSources.ok).toBe(true);
    expect([...ownSources.sourceArns].sort()).toEqual(dlq.sources.map((s) => s.arn).sort());
  });

  it('sizes the verification window as visibility timeout x maxReceiveCount + margin and reports retention headroom', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'window-dlq',
      sourceNames: ['window-src'],
      messages: [{ body: 'a' }, { body: 'b' }],
      maxReceiveCount: 3,
      incidentId: 'inc-window',
    });
    await sqsClient().send(
      new SetQueueAttributesCommand({
        QueueUrl: dlq.sources[0]?.url,
        Attributes: { VisibilityTimeout: '7' },
      }),
    );
    const result = await run({ action: 'preflight', plan: planFor(dlq, { verifyMarginSeconds: 30 }) });
    expect(result.verifyWindowSeconds).toBe(7 * 3 + 30);
    expect(result.dlqDepth).toBe(2);
    // Standard DLQ: deadline = SentTimestamp + the DLQ's retention (default 4 days).
    expect(result.retentionHeadroomSeconds).toBeGreaterThan(4 * 86_400 - 120);
    expect(result.retentionHeadroomSeconds).toBeLessThanOrEqual(4 * 86_400);
  });

  it('a new run of an incident sets its status back to WORKFLOW_STARTED as it starts, not the previous run s end', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'rerun-status-dlq',
      sourceNames: ['rerun-status-src'],
      messages: [{ body: 'a' }],
      incidentId: 'inc-rerun-status',
    });
    const incidents = createIncidentStore();
    await incidents.putIncident({
      incidentId: dlq.incidentId,
      dlqArn: dlq.dlqArn,
      dlqUrl: dlq.dlqUrl,
      sourceArns: dlq.sources.map((s) => s.arn),
      status: 'STOPPED',
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
    } as unknown as Incident);
    const plan = planFor(dlq);
    await run({ action: 'preflight', plan: { ...plan, mode: 'dry-run' }, executionName: 'dry-1' });
    expect((await incidents.getIncident(dlq.incidentId))?.status).toBe('STOPPED');
    const result = await run({ action: 'preflight', plan, executionName: 'rerun-2' });
    expect(result.dlqDepth).toBe(1);
    expect((await incidents.getIncident(dlq.incidentId))?.status).toBe('WORKFLOW_STARTED');
  });

  it('names the messages the sample cannot copy (no room for its attributes, too large with them) so the approval says the move task carries them unsampled (F3)', async () => {
    const attrs = (n: number) =>
      Object.fromEntries(
        Array.from({ length: n }, (_, i) => [`a${i}`, { DataType: 'String', StringValue: `v${i}` }]),
      );
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'uncopyable-dlq',
      sourceNames: ['uncopyable-src'],
      messages: [
        { body: '{"n":"crowded"}', attributes: attrs(8) },
        { body: `{"n":"big","pad":"${'x'.repeat(990)}"}` },
        { body: '{"n":"plain-1"}' },
        { body: '{"n":"plain-2"}', attributes: attrs(7) },
      ],
      incidentId: 'inc-uncopyable',
    });
    // The smallest MaximumMessageSize SQS allows: the big body fits alone, not with our attributes.
    await sqsClient().send(
      new SetQueueAttributesCommand({
        QueueUrl: dlq.sources[0]?.url,
        Attributes: { MaximumMessageSize: '1024' },
      }),
    );
    const ids = new Map<string, string>();
    for await (const e of createEnvelopeStore().listEnvelopes(dlq.dlqArn)) {
      const n = Object.keys(e.messageAttributes).length;
      ids.set(n === 8 ? 'crowded' : e.bodyBytes > 900 ? 'big' : n === 7 ? 'plain-2' : 'plain-1', e.messageId);
    }
    expect(ids.size).toBe(4);

    const result = await run({ action: 'preflight', plan: planFor(dlq, { incidentId: 'inc-uncopyable' }) });

    expect(result.ok).toBe(true);
    const warning = result.warnings.find((w) => w.includes('cannot be copied by the sample'));
    expect(warning).toMatch(
      /^2 message\(s\) cannot be copied by the sample \(1 with no room for the pipeline's 3 attributes \(SQS allows 10 per message\), 1 larger than the destination's MaximumMessageSize with them\): the sample is drawn from the others, and the move task carries them unsampled and unchanged: /,
    );
    expect(warning).toContain(ids.get('crowded'));
    expect(warning).toContain(ids.get('big'));
    expect(warning).not.toContain(ids.get('plain-1'));
    expect(warning).not.toContain(ids.get('plain-2'));
  });

  it('N01 refuses before approval when a message to park is larger than the parking queue takes, naming it, and nothing moves', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'n01-pf-dlq',
      sourceNames: ['n01-pf-src'],
      messages: [{ body: '{"orderId":"o-1"}' }],
      sendStraightToDlq: [{ body: `not json ${'z'.repeat(1100)}` }, { body: 'not json either' }],
      incidentId: 'inc-n01-pf',
    });
    const parking = await createQueue(sqsClient(), 'n01-pf-parking');
    const plan = planFor(dlq, { incidentId: 'inc-n01-pf', parkingQueueUrl: parking });
    // 1 MiB: both fit, the run may go on. The size check and the KMS check both read the parking
    // queue's attributes: one GetQueueAttributes for the two.
    const described: string[] = [];
    const deps = createPreflightDeps(lambdaContext);
    const queues = deps.queues;
    const counting: PreflightDeps = {
      ...deps,
      queues: {
        ...queues,
        describe: (url: string) => {
          described.push(url);
          return queues.describe(url);
        },
      },
    };
    const fits = await preflight({ action: 'preflight', plan }, counting);
    expect(fits.ok).toBe(true);
    expect(described.filter((url) => url === parking)).toEqual([parking]);
    await sqsClient().send(
      new SetQueueAttributesCommand({ QueueUrl: parking, Attributes: { MaximumMessageSize: '1024' } }),
    );
    let big = '';
    for await (const e of createEnvelopeStore().listEnvelopes(dlq.dlqArn))
      if (e.bodyBytes > 1024) big = e.messageId;
    expect(big).not.toBe('');
    const result = await run({ action: 'recheck', plan });
    expect(result.ok).toBe(false);
    expect(result.refusal).toBe(
      `redrive refused: 1 message(s) to park are larger than the parking queue's MaximumMessageSize (1024 bytes) and would stay in the DLQ, where a move task would carry them back to their source: ${big}; raise the parking queue's MaximumMessageSize or set discardPoison`,
    );
    expect((await queueDepth(sqsClient(), dlq.dlqUrl)).visible).toBe(3);
    expect((await queueDepth(sqsClient(), parking)).visible).toBe(0);
    // discardPoison deletes instead of parking: the size does not matter.
    const discard = await run({ action: 'recheck', plan: { ...plan, discardPoison: true } });
    expect(discard.ok).toBe(true);
  });

  it('C04 recheck reports an emptied DLQ as dlqDepth 0', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'c04-dlq',
      sourceNames: ['c04-src'],
      messages: [{ body: 'x' }],
      incidentId: 'inc-c04',
    });
    const { DeleteMessageCommand } = await import('@aws-sdk/client-sqs');
    for (const m of await drain(sqsClient(), dlq.dlqUrl))
      await sqsClient().send(
        new DeleteMessageCommand({ QueueUrl: dlq.dlqUrl, ReceiptHandle: m.ReceiptHandle }),
      );
    const result = await run({ action: 'recheck', plan: planFor(dlq) });
    expect([result.ok, result.dlqDepth]).toEqual([true, 0]);
  });

  it('C07 refuses before approval when do-not-redrive messages have nowhere to go, and warns when they will be parked', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'c07-pf-dlq',
      sourceNames: ['c07-pf-src'],
      messages: [{ body: '{"orderId":"o-1"}' }],
      sendStraightToDlq: [{ body: 'not json at all' }],
      incidentId: 'inc-c07-pf',
    });
    const refused = await run({ action: 'preflight', plan: planFor(dlq) });
    expect(refused.ok).toBe(false);
    expect(refused.refusal).toContain('1 message(s) must not be redriven');
    const parking = await createQueue(sqsClient(), 'c07-pf-parking');
    const ok = await run({ action: 'preflight', plan: planFor(dlq, { parkingQueueUrl: parking }) });
    expect(ok.ok).toBe(true);
    expect(ok.warnings).toContain(
      '1 do-not-redrive message(s) will be moved to the parking queue before the bulk move (a move task cannot skip messages)',
    );
  });

  it('refuses a DLQ that no queue names in its RedrivePolicy', async () => {
    const url = await createQueue(sqsClient(), 'orphan-dlq');
    const plan = planFor({
      dlqArn: 'arn:aws:sqs:us-east-1:123456789012:orphan-dlq',
      dlqUrl: url,
      incidentId: 'i',
    });
    const result = await run({ action: 'preflight', plan });
    expect(result.ok).toBe(false);
    expect(result.refusal).toContain('orphan-dlq is not the DLQ of any queue');
  });

  it('refuses a run whose parking queue is one of the DLQ s source queues: parked poison would go back to its consumer', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'park-is-source-dlq',
      sourceNames: ['park-is-source-src'],
      messages: [{ body: '{"p":1}' }],
      incidentId: 'inc-park-is-source',
    });
    const source = dlq.sources[0]?.url as string;
    const result = await run({ action: 'preflight', plan: planFor(dlq, { parkingQueueUrl: source }) });
    expect(result.ok).toBe(false);
    expect(result.refusal).toBe(
      `redrive refused: the parking queue ${source} is a source queue of this DLQ: parked poison would go back to its consumer; register another parkingQueueArn`,
    );
  });
});
