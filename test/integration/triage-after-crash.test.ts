import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInventorySessionStore } from '#inventory/inventory-session.js';
import { sqsClient } from '#platform/clients.js';
import { normaliseAlarmEvent } from '../../functions/triage/alarm-event.js';
import { type TriageDeps, triage } from '../../functions/triage/triage.js';
import type { WorkflowStarter } from '../../functions/triage/workflow-starter.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { queueDepth, seedDlq } from '../support/seed-dlq.js';
import { localTriageDeps } from '../support/triage-deps.js';

const ACCOUNT = '123456789012';

function alarmFor(queueName: string) {
  return normaliseAlarmEvent({
    'detail-type': 'CloudWatch Alarm State Change',
    source: 'aws.cloudwatch',
    account: ACCOUNT,
    resources: [`arn:aws:cloudwatch:us-east-1:${ACCOUNT}:alarm:${queueName}-not-empty`],
    detail: {
      alarmName: `${queueName}-not-empty`,
      state: { value: 'ALARM', reason: 'r', timestamp: '2026-01-02T10:35:00.000+0000' },
      configuration: { metrics: [{ metricStat: { metric: { dimensions: { QueueName: queueName } } } }] },
    },
  });
}

function deps(starts: string[], remainingTimeMs: () => number): TriageDeps {
  const workflow: WorkflowStarter = {
    async startWorkflow({ incidentId }) {
      starts.push(incidentId);
      return {
        executionArn: `arn:aws:states:us-east-1:${ACCOUNT}:execution:redrive:${incidentId}`,
        alreadyStarted: false,
      };
    },
  };
  return localTriageDeps(workflow, {
    budgets: { safetyMarginMs: 5_000 },
    remainingTimeMs,
    requestId: 'req-retry',
  });
}

/** The crashed run's receive: half the DLQ held invisible for `seconds`. */
async function crashedRunHolds(url: string, count: number, seconds: number): Promise<void> {
  let held = 0;
  while (held < count) {
    const out = await sqsClient().send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: Math.min(10, count - held),
        VisibilityTimeout: seconds,
      }),
    );
    held += out.Messages?.length ?? 0;
  }
}

describe('triage retry after a crash mid-scan', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack({ accountId: ACCOUNT });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('waits out the messages the dead run still holds within its budget and inventories all 20', async () => {
    const seeded = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'crashscan-dlq',
      sourceNames: ['crashscan-src'],
      messages: Array.from({ length: 20 }, (_, i) => ({ body: `{"n":${i}}` })),
    });
    await crashedRunHolds(seeded.dlqUrl, 10, 4);
    const starts: string[] = [];
    const result = await triage(
      alarmFor('crashscan-dlq'),
      deps(starts, () => 120_000),
    );
    expect(result.queues.map((q) => [q.outcome, q.summary?.messageCount, q.summary?.partial])).toEqual([
      ['triaged', 20, false],
    ]);
    expect(starts).toHaveLength(1);
    expect(await queueDepth(sqsClient(), seeded.dlqUrl)).toEqual({ visible: 20, inFlight: 0 });
  });

  it('hands the inventory to the workflow, never "empty" and never a complete incident of half the DLQ, when the held messages outlast its budget', async () => {
    const seeded = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'crashhold-dlq',
      sourceNames: ['crashhold-src'],
      messages: Array.from({ length: 20 }, (_, i) => ({ body: `{"h":${i}}` })),
    });
    await crashedRunHolds(seeded.dlqUrl, 20, 120);
    const starts: string[] = [];
    const end = Date.now() + 9_000;
    const allHeld = await triage(
      alarmFor('crashhold-dlq'),
      deps(starts, () => end - Date.now()),
    );
    const q = allHeld.queues[0];
    // A standard DLQ's inventory is a session: the workflow's ContinueInventory steps go on
    // waiting for the crashed run's messages (their visibility timeout ends), and the approval
    // comes only when the session is complete.
    expect(q?.outcome).toBe('continuing');
    expect(starts).toEqual([q?.incidentId]);
    const session = await createInventorySessionStore().get(seeded.dlqArn, q?.incidentId as string);
    expect(session).toMatchObject({ status: 'RUNNING', stopReason: 'in-flight', inventoried: 0 });
  });
});
