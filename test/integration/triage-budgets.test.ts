import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIncidentStore } from '#incident/incident-store.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { createInventorySessionStore } from '#inventory/inventory-session.js';
import { sqsClient } from '#platform/clients.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { continueInventory } from '../../functions/continue-inventory/continue-inventory.js';
import { normaliseAlarmEvent } from '../../functions/triage/alarm-event.js';
import { createTriageHandler } from '../../functions/triage/handler.js';
import { type TriageConfig, type TriageDeps, triage } from '../../functions/triage/triage.js';
import type { WorkflowStarter } from '../../functions/triage/workflow-starter.js';
import { createAlarmEvaluator } from '../../local/alarm-evaluator.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { planFor } from '../support/redrive-fixtures.js';
import { queueDepth, seedDlq } from '../support/seed-dlq.js';
import { localTriageDeps } from '../support/triage-deps.js';

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
  budgets: Partial<TriageConfig['budgets']>,
  remainingTimeMs: () => number = () => 60_000,
): TriageDeps {
  return localTriageDeps(workflow, { budgets, remainingTimeMs });
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

  it('a run stopped by its message budget hands the inventory to the workflow, holding what it saw; the continuation finishes it and the DLQ holds what it held', async () => {
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
    const incidentId = q?.incidentId as string;
    expect([q?.outcome, q?.summary?.partial, q?.summary?.coverage?.complete]).toEqual([
      'continuing',
      true,
      false,
    ]);
    expect(q?.written).toBe(10);
    expect(workflow.starts).toEqual([incidentId]);
    // Held for the continuation: 10 of the 25 in flight (queueDepth corrects for the stand-in counting them as visible).
    expect(await queueDepth(sqsClient(), seeded.dlqUrl)).toEqual({ visible: 15, inFlight: 10 });
    expect(await createEnvelopeStore().getCursor(seeded.dlqArn)).toBeUndefined();

    // The workflow's ContinueInventory steps, as its loop runs them (8 new envelopes a step at most).
    const plan = planFor(
      { dlqArn: seeded.dlqArn, dlqUrl: seeded.dlqUrl, incidentId },
      { inventoryId: incidentId },
    );
    const steps: Array<{ status: string; inventoried: number; held: number }> = [];
    let loop = { steps: 0 };
    for (;;) {
      const out = await continueInventory(
        { plan, loop, executionName: incidentId },
        {
          queues: createSqsQueues(),
          envelopes: createEnvelopeStore(),
          sessions: createInventorySessionStore(),
          incidents: createIncidentStore(),
          registry: createQueueRegistry(),
          budgets: { messageBudget: 8, pageBudget: 10_000, safetyMarginMs: 1_000 },
          remainingTimeMs: () => 60_000,
          now: Date.now,
        },
      );
      steps.push({ status: out.status, inventoried: out.inventoried, held: out.held });
      loop = { steps: out.steps };
      if (out.status === 'complete' || steps.length > 10) break;
    }
    expect(steps.at(-1)).toEqual({ status: 'complete', inventoried: 25, held: 0 });
    expect(steps.slice(0, -1).every((s) => s.status === 'running' && s.held === s.inventoried)).toBe(true);
    expect(await envelopeCount(seeded.dlqArn)).toBe(25);
    const incident = await createIncidentStore().getIncident(incidentId);
    expect([
      incident?.summary.messageCount,
      incident?.summary.partial,
      incident?.summary.coverage?.complete,
    ]).toEqual([25, false, true]);
    expect(await queueDepth(sqsClient(), seeded.dlqUrl)).toEqual({ visible: 25, inFlight: 0 });
  });

  it('a run with too little Lambda time left stops before receiving and hands the inventory to the workflow', async () => {
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
    expect(result.queues.map((x) => [x.outcome, x.summary?.messageCount])).toEqual([['continuing', 0]]);
    expect(result.queues[0]?.reason).toMatch(
      /^inventory continues in the workflow: 0 of about 1 messages so far \(time\)/,
    );
    expect(workflow.starts).toEqual([result.queues[0]?.incidentId]);
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
