import { describe, expect, it } from 'vitest';
import { scenarioNamed } from '../../local/demo/scenarios/index.js';
import { runNamedScenario } from '../support/scenarios.js';
import { useWorkflowStack } from '../support/workflow-stack.js';

// `npm start -- --scenario fifo-deep-group` on the same path: real triage, real ASL, real task
// handlers, on a local stack that keeps SQS's FIFO group blocking (the scenario's own stack options).
const SCENARIO_TIMEOUT_MS = 420_000;

describe('the FIFO scenario on the local stack (npm start -- --scenario fifo-deep-group)', {
  timeout: SCENARIO_TIMEOUT_MS,
}, () => {
  useWorkflowStack({ ...scenarioNamed('fifo-deep-group')?.stack });

  it('C08 fifo-deep-group: a group of 100 is redriven in order through the recording mover, the poisoned groups stay in the DLQ from their poison on, nothing parked or missing', async () => {
    const report = await runNamedScenario('fifo-deep-group');
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ asExpected: true, outcome: 'Done', parked: 0, missing: 0 });
    // 100 + 30 produced; customer-0 (5, poisoned head) and customer-2 from its third (3) stay.
    expect([report.redriven, report.remaining]).toEqual([122, 8]);
  });
});
