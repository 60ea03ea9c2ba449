import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { runNamedScenario } from '../support/scenarios.js';

// The recording mover's scenarios, as `npm start -- --scenario NAME` runs them (real triage, real
// ASL, real task handlers on the local stack).
const SCENARIO_TIMEOUT_MS = 300_000;

describe('recording-mover scenarios on the local stack (npm start -- --scenario NAME)', {
  timeout: SCENARIO_TIMEOUT_MS,
}, () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('selective: moves exactly the selected cause group; the poison stays in the DLQ, nothing parked', async () => {
    const report = await runNamedScenario('selective', { messages: 50 });
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ asExpected: true, outcome: 'Done', parked: 0, missing: 0 });
    // The scenario's own check holds remaining = the poison produced and redriven = Preflight's selection.
    expect(report.remaining).toBeGreaterThan(0);
    expect(report.redriven + report.remaining).toBe(report.inventoried);
    expect(report.sampled + report.bulkMoved).toBe(report.redriven);
  });

  it('unpark: an un-park run of the incident brings every parked message back with its key; no envelope stays PARKED', async () => {
    const report = await runNamedScenario('unpark', { messages: 40 });
    // The scenario's check holds the keys, the ledger entries, the parking queue and Reconcile.
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ asExpected: true, outcome: 'Done', missing: 0 });
    expect(report.parked).toBeGreaterThan(0);
    expect(report.onCall?.redrive).toMatchObject({ parked: 0, redriven: report.inventoried });
  });

  it.each(['sns-dlq', 'lambda-dlq'])(
    '%s: a DLQ no SQS redrive policy feeds is triaged with its failure reasons and redriven to its origin by the recording mover',
    async (name) => {
      const report = await runNamedScenario(name, { messages: 40, standins: stack.standins });
      // The scenario's check: the mover path, real failure classes, poison parked, every other order processed once.
      expect(report.problems).toEqual([]);
      expect(report).toMatchObject({ asExpected: true, outcome: 'Done', missing: 0, parked: 4 });
      expect(report.redriven).toBe(report.inventoried - 4);
      expect(report.onCall?.topCauses.map((c) => [c.errorClass, c.classification])).toEqual([
        ['DependencyUnavailable', 'transient'],
        ['ValidationError', 'permanent'],
      ]);
      // Counted under the topic or function they came from, not as messages without a source.
      expect(Object.entries(report.onCall?.countBySource ?? {})).toEqual([
        [
          expect.stringMatching(
            name === 'sns-dlq' ? /^arn:aws:sns:.*:sns-orders-events$/ : /:function:lambda-orders-fn$/,
          ),
          report.inventoried,
        ],
      ]);
    },
  );
});
