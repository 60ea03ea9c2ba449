import type { SQSClient } from '@aws-sdk/client-sqs';
import { GetQueueUrlCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { runNamedScenario } from '../support/scenarios.js';
import { useWorkflowStack } from '../support/workflow-stack.js';

// The fault scenarios of the ramp (npm start -- --scenario NAME), on the same code path as the CLI:
// the real triage handler, the real ASL and the real task handlers on the local stack.
const SCENARIO_TIMEOUT_MS = 300_000;

async function drainBodies(sqs: SQSClient, queueName: string): Promise<string[]> {
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: queueName }));
  const bodies: string[] = [];
  for (let empty = 0; empty < 2; ) {
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 60 }),
    );
    if (!out.Messages?.length) empty += 1;
    for (const m of out.Messages ?? []) bodies.push(m.Body ?? '');
  }
  return bodies;
}

describe('ramp fault scenarios on the local stack', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  const local = useWorkflowStack();

  it('consumer-breaks-during-ramp: re-inflow behind the backlog is seen by accounting, the task cancelled, the run halted within the exposure bound', async () => {
    const report = await runNamedScenario('consumer-breaks-during-ramp');
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ asExpected: true, outcome: 'RedriveHalted', missing: 0 });
    expect(report.exposed).toBeGreaterThan(0);
    expect(report.exposed).toBeLessThanOrEqual(report.exposureBound);
    // The policy's bound: the rates in force from one 5 s return window before the last clean check.
    expect(report.exposureBoundBasis).toMatch(
      /: the rates in force from one return window \(5 s\) before the last clean check to the last check$/,
    );
    expect(report.gatelessExposure?.value).toBeGreaterThan(report.exposureBound);
    expect(report.rampReason).toMatchObject({ code: 'reinflow', after: { code: 'excess' } });
    expect(Object.keys((report.rampReason as { bySource: object }).bySource)).toEqual([
      expect.stringMatching(/:breaks$/),
    ]);
    // Not everything was moved: the halt left the rest in the DLQ.
    expect(report.bulkMoved).toBeLessThan(report.inventoried - report.parked - report.sampled);
    expect(report.remaining).toBeGreaterThan(0);
  });

  it('N02 late-poison-arrivals: poison that dead-letters after triage is inventoried and parked, never delivered to the consumer again', async () => {
    const report = await runNamedScenario('late-poison-arrivals');
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ asExpected: true, outcome: 'Done', exposed: 0, missing: 0, remaining: 0 });
    expect(report.lateArrivals).toBe(20);
    // Every late poison order sits in the parking queue, beside the poison triage found.
    const parked = (await drainBodies(local.sqs, 'late-parking')).map(
      (b) => (JSON.parse(b) as { orderId: string }).orderId,
    );
    expect(parked.filter((id) => id.startsWith('late-poison-')).sort()).toEqual(
      Array.from({ length: 20 }, (_, i) => `late-poison-${String(i + 1).padStart(6, '0')}`),
    );
    expect(report.parked).toBe(parked.length);
  });

  it('C06 console-move-task: a task started by hand during verification is refused by its handle and never adopted', async () => {
    const report = await runNamedScenario('console-move-task');
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({
      asExpected: true,
      outcome: 'RedriveRefused',
      bulkMoved: 0,
      status: 'FAILED',
    });
    expect(report.rampReason).toMatchObject({ code: 'foreign-task', rate: 2 });
    expect(report.countsAddUp).toBe(true);
  });
});
