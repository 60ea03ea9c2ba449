import { describe, expect, it } from 'vitest';
import { runNamedScenario } from '../support/scenarios.js';
import { useWorkflowStack } from '../support/workflow-stack.js';

// `npm start -- --scenario fifo-deep-group` and `fifo-rerun` on the same path: real triage, real
// ASL, real task handlers, on the local stack (which keeps SQS's FIFO group blocking and
// 5-minute deduplication interval).
const SCENARIO_TIMEOUT_MS = 420_000;

describe('the FIFO scenarios on the local stack (npm start -- --scenario fifo-deep-group, fifo-rerun)', {
  timeout: SCENARIO_TIMEOUT_MS,
}, () => {
  useWorkflowStack();

  it('C08 fifo-deep-group: a group of 100 is redriven in order through the recording mover, the poisoned groups stay in the DLQ from their poison on, nothing parked or missing', async () => {
    const report = await runNamedScenario('fifo-deep-group');
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ asExpected: true, outcome: 'Done', parked: 0, missing: 0 });
    // 100 + 30 produced; customer-0 (5, poisoned head) and customer-2 from its third (3) stay.
    expect([report.redriven, report.remaining]).toEqual([122, 8]);
  });

  it('fifo-rerun: a FIFO run ends SampleFailed, a second run follows at once: every message reaches the consumer exactly once, missing 0', async () => {
    const report = await runNamedScenario('fifo-rerun');
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ asExpected: true, outcome: 'SampleFailed' });
  });
});
