import { GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { queueDepth } from '../../local/demo/queues.js';
import { exitCodeOf } from '../../local/demo/report.js';
import { runNamedScenario } from '../support/scenarios.js';
import { useWorkflowStack } from '../support/workflow-stack.js';

// Each scenario is the run `npm start -- --scenario NAME` makes (local/demo/run-scenario.ts): the
// real triage handler, the real ASL and the real task handlers on the local stack.
// A scenario takes 15-30 s on an idle 2-core machine; the limit leaves room for a loaded one.
const SCENARIO_TIMEOUT_MS = 240_000;

describe('fault scenarios on the local stack (npm start -- --scenario NAME)', {
  timeout: SCENARIO_TIMEOUT_MS,
}, () => {
  // A crashed receive hides its message this long (the crash scenario's retry waits it out).
  const local = useWorkflowStack({ env: { REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS: '3' } });

  it('healthy: ends Done with every message redriven or parked, nothing exposed and the report as expected', async () => {
    const report = await runNamedScenario('healthy', { messages: 60 });
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ asExpected: true, outcome: 'Done', status: 'SUCCEEDED', missing: 0 });
    expect(report.inventoried).toBe(36);
    expect(report.redriven + report.parked).toBe(report.inventoried);
    expect(report.sampled + report.bulkMoved).toBe(report.redriven);
    expect(report.exposed).toBe(0);
    expect(report.exposureBoundBasis).toMatch(/\(of \d+ msg\/s x \d+ s\)/);
  });

  it('consumer-still-broken: ends SampleFailed, exposes at most the sample size and bulk-moves nothing', async () => {
    const report = await runNamedScenario('consumer-still-broken', { messages: 40 });
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ asExpected: true, outcome: 'SampleFailed', bulkMoved: 0 });
    expect(report.sampled).toBe(5);
    expect(report.exposed).toBeGreaterThan(0);
    expect(report.exposed).toBeLessThanOrEqual(5);
    expect(report.exposureBound).toBe(5);
    // The samples came back: everything but the parked poison is in the DLQ again.
    const dlq = await local.sqs.send(new GetQueueUrlCommand({ QueueName: 'still-broken-dlq' }));
    const depth = await queueDepth(local.sqs, dlq.QueueUrl as string);
    expect(depth.visible).toBe(report.remaining);
  });

  it('N05 delay-queue: verification waits out DelaySeconds, so a consumer still failing behind a delay queue ends SampleFailed', async () => {
    const report = await runNamedScenario('delay-queue');
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ asExpected: true, outcome: 'SampleFailed', bulkMoved: 0, sampled: 3 });
    // The samples came back: the window (4 s delay + 1 s x 3 receives + 2 s margin) outlasted them.
    expect(report.returned).toBe(3);
    expect(report.reason).toContain('planned 9 s');
    expect(report.exposed).toBeLessThanOrEqual(3);
  });

  it('hand-deleted: 5 messages deleted by hand during the ramp are missing, named exactly, and the run is not balanced', async () => {
    const report = await runNamedScenario('hand-deleted', { messages: 80 });
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ asExpected: true, outcome: 'Done', missing: 5, balanced: false });
    expect(report.missingMessages).toHaveLength(5);
    expect(report.missingMessages.every((m) => m.idempotencyKey.length > 0)).toBe(true);
    expect(report.countsAddUp).toBe(true);
    expect(exitCodeOf(report)).toBe(3);
  });

  it('N01 parking-queue-shrunk: Park refuses a message the shrunk parking queue cannot take; the run fails, reconciled first: parked = the parking queue, the rest in the DLQ', async () => {
    const report = await runNamedScenario('parking-queue-shrunk', { messages: 40 });
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ asExpected: true, outcome: 'Failed', status: 'FAILED', missing: 0 });
    expect(report.countsAddUp).toBe(true);
    // What the consumer dead-lettered, plus the oversized order sent straight to the DLQ: every
    // poison order but that one is parked, the oversized one and the rest are still in the DLQ.
    expect(report.inventoried).toBe(report.deadLettered + 1);
    expect(report.parked).toBeGreaterThan(0);
    expect(report.remaining).toBe(report.inventoried - report.parked);
    expect(report.redriven).toBe(0);
    expect(report.reason).toMatch(
      /1 message\(s\) to park are larger than the parking queue's MaximumMessageSize/,
    );
    expect(report.reason).toMatch(
      new RegExp(`${report.parked} parked, 0 discarded, ${report.remaining} still in the DLQ, 0 missing\\.$`),
    );
    const parking = await local.sqs.send(new GetQueueUrlCommand({ QueueName: 'parking-shrunk-parking' }));
    const depth = await queueDepth(local.sqs, parking.QueueUrl as string);
    expect(depth.visible).toBe(report.parked);
    expect(exitCodeOf(report)).toBe(0);
  });

  it('crash-after-send: the retry after a crash between SendMessage and the ledger update sends again, and the report names that duplicate', async () => {
    const report = await runNamedScenario('crash-after-send', { messages: 40 });
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({
      asExpected: true,
      outcome: 'Done',
      missing: 0,
      possibleDuplicateSends: 1,
    });
    expect(report.possibleDuplicates).toHaveLength(1);
    expect(report.consumer.duplicatesSkipped).toBeGreaterThanOrEqual(1);
    expect(report.consumer.processedTwice).toBe(0);
    expect(exitCodeOf(report)).toBe(0);
  });
});
