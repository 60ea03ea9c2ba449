import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIncidentStore } from '#incident/incident-store.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sqsClient } from '#platform/clients.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { normaliseAlarmEvent } from '../../functions/triage/alarm-event.js';
import { createTriageHandler } from '../../functions/triage/handler.js';
import { type TriageConfig, type TriageDeps, triage } from '../../functions/triage/triage.js';
import type { WorkflowStarter } from '../../functions/triage/workflow-starter.js';
import { createAlarmEvaluator } from '../../local/alarm-evaluator.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { queueDepth, seedDlq } from '../support/seed-dlq.js';

const ACCOUNT = '111122223333';

function recordingStarter(): WorkflowStarter & { starts: string[] } {
  const starts: string[] = [];
  return {
    starts,
    async startWorkflow({ incidentId }) {
      const alreadyStarted = starts.includes(incidentId);
      if (!alreadyStarted) starts.push(incidentId);
      return {
        executionArn: `arn:aws:states:us-east-1:${ACCOUNT}:execution:redrive:${incidentId}`,
        alreadyStarted,
      };
    },
  };
}

function deps(
  workflow: WorkflowStarter,
  config: Partial<TriageConfig['budgets']>,
  remainingTimeMs: () => number = () => 60_000,
): TriageDeps {
  return {
    queues: createSqsQueues(),
    envelopes: createEnvelopeStore(),
    incidents: createIncidentStore(),
    registry: createQueueRegistry(),
    workflow,
    now: () => Date.now(),
    remainingTimeMs,
    config: {
      budgets: { messageBudget: 5000, pageBudget: 10_000, safetyMarginMs: 1_000, ...config },
      alarmQueueMap: {},
    },
    log: { info: () => undefined, warn: () => undefined },
  };
}

async function envelopeCount(dlqArn: string): Promise<number> {
  let n = 0;
  for await (const _ of createEnvelopeStore().listEnvelopes(dlqArn)) n++;
  return n;
}

describe('triage budgets, refusals and the local alarm evaluator', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack({ accountId: ACCOUNT });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('the local alarm evaluator emits one ALARM event for a non-empty DLQ, and the real handler triages it', async () => {
    const seeded = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'evaluated-dlq',
      sourceNames: ['evaluated-queue'],
      messages: [{ body: 'a' }, { body: 'b' }, { body: 'c' }],
    });
    const evaluator = createAlarmEvaluator({
      dlqUrl: seeded.dlqUrl,
      queueName: 'evaluated-dlq',
      accountId: ACCOUNT,
    });
    const workflow = recordingStarter();

    const event = await evaluator.evaluate();
    const again = await evaluator.evaluate();
    const result = await createTriageHandler({ overrides: { workflow } })(
      event,
      lambdaContext({ functionName: 'triage', accountId: ACCOUNT }),
    );

    expect(again).toBeNull();
    expect(evaluator.state).toBe('ALARM');
    const normalised = normaliseAlarmEvent(event);
    expect(normalised.kind === 'state-change' && normalised.record.queueNames).toEqual(['evaluated-dlq']);
    expect(result.queues.map((q) => [q.queueName, q.outcome, q.summary?.messageCount])).toEqual([
      ['evaluated-dlq', 'triaged', 3],
    ]);
    expect(workflow.starts).toHaveLength(1);
  });

  it('a run stopped by its message budget is partial, stores a cursor and starts no workflow; a redelivery continues it to completion', async () => {
    const seeded = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'budget-dlq',
      sourceNames: ['budget-queue'],
      messages: Array.from({ length: 25 }, (_, i) => ({ body: `{"n":${i}}` })),
    });
    const event = normaliseAlarmEvent({
      'detail-type': 'CloudWatch Alarm State Change',
      source: 'aws.cloudwatch',
      account: ACCOUNT,
      resources: [`arn:aws:cloudwatch:us-east-1:${ACCOUNT}:alarm:budget-dlq-not-empty`],
      detail: {
        alarmName: 'budget-dlq-not-empty',
        state: { value: 'ALARM', reason: 'r', timestamp: '2026-01-02T10:35:00.000+0000' },
        configuration: { metrics: [{ metricStat: { metric: { dimensions: { QueueName: 'budget-dlq' } } } }] },
      },
    });
    const workflow = recordingStarter();

    const first = await triage(event, deps(workflow, { messageBudget: 8 }));

    const q = first.queues[0];
    expect([q?.outcome, q?.summary?.partial]).toEqual(['partial', true]);
    expect(q?.summary?.messageCount).toBeLessThan(25);
    expect(workflow.starts).toEqual([]);
    const cursor = await createEnvelopeStore().getCursor(seeded.dlqArn);
    expect(cursor).toMatchObject({ runs: 1, reason: 'message-budget', incidentId: q?.incidentId });
    expect(await queueDepth(sqsClient(), seeded.dlqUrl)).toEqual({ visible: 25, inFlight: 0 });

    const second = await triage(event, deps(workflow, { messageBudget: 100 }));

    expect(second.queues.map((x) => [x.outcome, x.summary?.messageCount, x.summary?.partial])).toEqual([
      ['triaged', 25, false],
    ]);
    expect(await envelopeCount(seeded.dlqArn)).toBe(25);
    expect(await createEnvelopeStore().getCursor(seeded.dlqArn)).toBeUndefined();
    expect(workflow.starts).toEqual([q?.incidentId]);
    expect((await createIncidentStore().getIncident(q?.incidentId as string))?.summary.partial).toBe(false);
    expect(await queueDepth(sqsClient(), seeded.dlqUrl)).toEqual({ visible: 25, inFlight: 0 });
  });

  it('a run with too little Lambda time left stops before receiving and says so', async () => {
    const seeded = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'late-dlq',
      sourceNames: ['late-queue'],
      messages: [{ body: 'x' }],
    });
    const event = normaliseAlarmEvent(
      JSON.parse(
        JSON.stringify({
          'detail-type': 'CloudWatch Alarm State Change',
          source: 'aws.cloudwatch',
          account: ACCOUNT,
          resources: [`arn:aws:cloudwatch:us-east-1:${ACCOUNT}:alarm:late`],
          detail: {
            alarmName: 'late',
            state: { value: 'ALARM', timestamp: '2026-01-02T10:35:00.000+0000' },
            configuration: {
              metrics: [{ metricStat: { metric: { dimensions: { QueueName: 'late-dlq' } } } }],
            },
          },
        }),
      ),
    );
    const workflow = recordingStarter();
    const result = await triage(
      event,
      deps(workflow, {}, () => 500),
    );
    expect(result.queues.map((x) => [x.outcome, x.summary])).toEqual([['partial', undefined]]);
    expect(result.queues[0]?.reason).toBe(
      'partial inventory (time): 0 messages seen, cursor stored; no workflow until the inventory is complete',
    );
    expect(workflow.starts).toEqual([]);
    expect(await createEnvelopeStore().getCursor(seeded.dlqArn)).toMatchObject({
      reason: 'time',
      inventoried: 0,
    });
    // Nothing was received: the message is still visible and nothing claims it was inventoried.
    expect(await queueDepth(sqsClient(), seeded.dlqUrl)).toEqual({ visible: 1, inFlight: 0 });
    expect(await envelopeCount(seeded.dlqArn)).toBe(0);
  });

  it('refuses, with the reason, to inventory a DLQ that has its own RedrivePolicy unless the registration allows it', async () => {
    await sqsClient().send(new CreateQueueCommand({ QueueName: 'graveyard' }));
    const seeded = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'chained-dlq',
      sourceNames: ['chained-queue'],
      messages: [{ body: 'one' }, { body: 'two' }],
      dlqAttributes: {
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:graveyard`,
          maxReceiveCount: 5,
        }),
      },
    });
    const event = normaliseAlarmEvent({
      'detail-type': 'CloudWatch Alarm State Change',
      source: 'aws.cloudwatch',
      account: ACCOUNT,
      resources: [`arn:aws:cloudwatch:us-east-1:${ACCOUNT}:alarm:chained`],
      detail: {
        alarmName: 'chained',
        state: { value: 'ALARM', timestamp: '2026-01-02T10:35:00.000+0000' },
        configuration: {
          metrics: [{ metricStat: { metric: { dimensions: { QueueName: 'chained-dlq' } } } }],
        },
      },
    });
    const workflow = recordingStarter();

    const refused = await triage(event, deps(workflow, {}));

    expect(refused.queues[0]?.outcome).toBe('refused');
    expect(refused.queues[0]?.reason).toMatch(
      /^chained-dlq has its own RedrivePolicy \(maxReceiveCount 5 to .*graveyard\)/,
    );
    expect(refused.queues[0]?.reason).toContain('allowInventoryOfQueueWithRedrivePolicy');
    expect(await envelopeCount(seeded.dlqArn)).toBe(0);
    expect(workflow.starts).toEqual([]);

    await createQueueRegistry().putRegistration({
      dlqArn: seeded.dlqArn,
      allowInventoryOfQueueWithRedrivePolicy: true,
    });
    const later = normaliseAlarmEvent({
      'detail-type': 'CloudWatch Alarm State Change',
      source: 'aws.cloudwatch',
      account: ACCOUNT,
      resources: [`arn:aws:cloudwatch:us-east-1:${ACCOUNT}:alarm:chained`],
      detail: {
        alarmName: 'chained',
        state: { value: 'ALARM', timestamp: '2026-01-02T11:35:00.000+0000' },
        configuration: {
          metrics: [{ metricStat: { metric: { dimensions: { QueueName: 'chained-dlq' } } } }],
        },
      },
    });
    const allowed = await triage(later, deps(workflow, {}));
    expect(allowed.queues.map((x) => [x.outcome, x.summary?.messageCount])).toEqual([['triaged', 2]]);
  });

  it('C05 a retry after a crashed run takes over the expired claim; a delivery during a live claim is a duplicate', async () => {
    await seedDlq({
      sqs: sqsClient(),
      dlqName: 'crashed-dlq',
      sourceNames: ['crashed-queue'],
      messages: [{ body: '{"c":1}' }, { body: '{"c":2}' }],
    });
    const event = normaliseAlarmEvent({
      'detail-type': 'CloudWatch Alarm State Change',
      source: 'aws.cloudwatch',
      account: ACCOUNT,
      resources: [`arn:aws:cloudwatch:us-east-1:${ACCOUNT}:alarm:crashed`],
      detail: {
        alarmName: 'crashed',
        state: { value: 'ALARM', timestamp: '2026-01-02T10:35:00.000+0000' },
        configuration: {
          metrics: [{ metricStat: { metric: { dimensions: { QueueName: 'crashed-dlq' } } } }],
        },
      },
    });
    if (event.kind !== 'state-change') throw new Error('expected a state change');
    const incidents = createIncidentStore();
    const workflow = recordingStarter();
    // A live claim (another invocation is running): the delivery is a duplicate and touches nothing.
    await incidents.claimTransition(
      {
        dedupeKey: event.record.dedupeKey,
        alarmArn: event.record.alarmArn,
        leaseExpiresAt: Date.now() + 60_000,
      },
      Date.now(),
    );
    const during = await triage(event, deps(workflow, {}));
    expect([during.outcome, workflow.starts.length]).toEqual(['duplicate', 0]);

    // The claimant was killed at its timeout and never finished: its lease runs out, the retry runs.
    await incidents.claimTransition(
      { dedupeKey: event.record.dedupeKey, alarmArn: event.record.alarmArn, leaseExpiresAt: Date.now() - 1 },
      Date.now() + 120_000,
    );
    const retry = await triage(event, deps(workflow, {}));
    expect(retry.queues.map((q) => [q.outcome, q.summary?.messageCount])).toEqual([['triaged', 2]]);
    expect(workflow.starts).toHaveLength(1);
    expect((await incidents.getTransition(event.record.dedupeKey))?.status).toBe('HANDLED');
  });
});
