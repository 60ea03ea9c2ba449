import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIncidentStore } from '#incident/incident-store.js';
import { createEnvelopeStore, type StoredEnvelope } from '#inventory/envelope-store.js';
import { sqsClient } from '#platform/clients.js';
import { createTriageHandler } from '../../functions/triage/handler.js';
import type { TriageResult } from '../../functions/triage/triage.js';
import type { WorkflowStarter } from '../../functions/triage/workflow-starter.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { createMemoryNotifier } from '../support/memory-notifier.js';
import { queueDepth, seedDlq } from '../support/seed-dlq.js';
import { tableKeys } from '../support/table-keys.js';
import { scaled } from '../support/timeouts.js';

const ACCOUNT = '111122223333';
const ALARM_ARN = 'arn:aws:cloudwatch:us-east-1:111122223333:alarm:orders-dlq-not-empty';
const load = (path: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../events/${path}`, import.meta.url), 'utf8'));

// The C04 sequence (/work/shared/cases/C04-ok-and-insufficient-data-transitions.json), events 1, 2, 3, 5.
const EVENT_1 = 'cloudwatch/alarm-state-change-insufficient-data.json';
const EVENT_2 = 'cloudwatch/alarm-state-change-ok-from-insufficient-data.json';
const EVENT_3 = 'cloudwatch/alarm-state-change-alarm-from-insufficient-data.json';
const EVENT_5 = 'cloudwatch/alarm-state-change-ok-from-alarm.json';

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

async function envelopes(dlqArn: string): Promise<StoredEnvelope[]> {
  const out: StoredEnvelope[] = [];
  for await (const e of createEnvelopeStore().listEnvelopes(dlqArn)) out.push(e);
  return out;
}

describe('C04 ALARM -> OK on the local stack (real triage handler)', () => {
  let stack: LocalStack;
  let dlq: Awaited<ReturnType<typeof seedDlq>>;
  const workflow = recordingStarter();
  const notifier = createMemoryNotifier();
  const sqsCalls: string[] = [];
  const handler = createTriageHandler({ overrides: { workflow, notifier } });
  const invoke = (path: string) =>
    handler(
      load(path),
      lambdaContext({ functionName: 'triage', timeoutMs: scaled(60_000), accountId: ACCOUNT }),
    ) as Promise<TriageResult>;
  const cleared = () => notifier.sent.filter((n) => n.kind === 'alarm-cleared');

  beforeAll(async () => {
    stack = await startLocalStack({ accountId: ACCOUNT });
    sqsClient().middlewareStack.add(
      (next, context) => async (args) => {
        sqsCalls.push(String(context.commandName));
        return next(args);
      },
      { step: 'initialize', name: 'recordSqsCallsC04' },
    );
    dlq = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'orders-dlq',
      sourceNames: ['orders-queue'],
      messages: [{ body: '{"orderId":"o-1"}' }, { body: '{"orderId":"o-2"}' }, { body: '{"orderId":"o-3"}' }],
      maxReceiveCount: 3,
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('C04 an ALARM -> OK of an alarm that never opened an incident is a log line: no notification, no write, no SQS call', async () => {
    const rowsBefore = await tableKeys();
    sqsCalls.length = 0;

    const result = await invoke(EVENT_5);

    expect(result.outcome).toBe('ignored-transition');
    expect(result.alarmCleared).toEqual([]);
    expect(notifier.sent).toEqual([]);
    expect(sqsCalls).toEqual([]);
    expect(await tableKeys()).toEqual(rowsBefore);
  });

  it('C04 events 1-2 do nothing, event 3 opens one incident and starts one workflow, event 5 only tells that incident once', async () => {
    const depth = await queueDepth(sqsClient(), dlq.dlqUrl);

    // Events 1 and 2: INSUFFICIENT_DATA, then OK from INSUFFICIENT_DATA.
    sqsCalls.length = 0;
    const early = [await invoke(EVENT_1), await invoke(EVENT_2)];
    expect(early.map((r) => [r.outcome, r.message])).toEqual([
      ['ignored-transition', 'ignored transition OK -> INSUFFICIENT_DATA'],
      ['ignored-transition', 'ignored transition INSUFFICIENT_DATA -> OK'],
    ]);
    expect(early.map((r) => r.alarmCleared)).toEqual([undefined, undefined]);
    expect(sqsCalls).toEqual([]);
    expect(await envelopes(dlq.dlqArn)).toEqual([]);
    expect(workflow.starts).toEqual([]);
    expect(notifier.sent).toEqual([]);

    // Event 3: INSUFFICIENT_DATA -> ALARM is triaged like OK -> ALARM.
    const alarm = await invoke(EVENT_3);
    expect(alarm.outcome).toBe('triaged');
    const incidentId = alarm.queues[0]?.incidentId as string;
    expect(incidentId).toMatch(/^inc-[0-9a-f]{24}$/);
    expect(workflow.starts).toEqual([incidentId]);
    expect(await envelopes(dlq.dlqArn)).toHaveLength(3);
    expect(await createIncidentStore().getLatestAlarmIncidents(ALARM_ARN)).toMatchObject({
      dedupeKey: `${ALARM_ARN}@2026-01-02T10:35:00.000+0000`,
      incidentIds: [incidentId],
    });

    // Event 5: ALARM -> OK while the workflow waits for approval.
    sqsCalls.length = 0;
    const ok = await invoke(EVENT_5);
    expect(ok.outcome).toBe('ignored-transition');
    expect(ok.alarmCleared).toEqual([incidentId]);
    expect(sqsCalls).toEqual([]);
    expect(workflow.starts).toEqual([incidentId]);
    expect(cleared()).toEqual([
      {
        incidentId,
        kind: 'alarm-cleared',
        text: 'alarm cleared at 2026-01-02T11:10:00.000Z: the pending approval stays open; the workflow re-checks the DLQ before any redrive',
        fields: {
          alarmName: 'orders-dlq-not-empty',
          clearedAt: '2026-01-02T11:10:00.000Z',
          alarmTransition: '2026-01-02T10:35:00.000+0000',
        },
      },
    ]);
    // Nothing cancelled or closed: the incident still has its workflow, the DLQ its messages.
    expect(await createIncidentStore().getIncident(incidentId)).toMatchObject({ status: 'WORKFLOW_STARTED' });
    expect(await queueDepth(sqsClient(), dlq.dlqUrl)).toEqual(depth);

    // A second delivery of event 5 (EventBridge retry, or its SNS copy) tells nobody again.
    sqsCalls.length = 0;
    const again = await invoke(EVENT_5);
    expect(again.alarmCleared).toEqual([]);
    expect(cleared()).toHaveLength(1);
    expect(sqsCalls).toEqual([]);
    expect(workflow.starts).toEqual([incidentId]);
  });

  it('C04 a late duplicate of the ALARM transition does not re-arm the announcement, and two OK copies at once notify once', async () => {
    const before = cleared().length;
    const dup = await invoke(EVENT_3);
    expect(dup.outcome).toBe('duplicate');

    const results = await Promise.all([invoke(EVENT_5), invoke(EVENT_5)]);

    expect(results.flatMap((r) => r.alarmCleared ?? [])).toEqual([]);
    expect(cleared()).toHaveLength(before);
  });
});
