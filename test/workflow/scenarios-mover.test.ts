import { describe, expect, it } from 'vitest';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { deriveIdempotencyKey } from '#inventory/idempotency-key.js';
import type { Envelope } from '#inventory/model.js';
import { formatReport } from '../../local/demo/report.js';
import { runNamedScenario } from '../support/scenarios.js';
import { useWorkflowStack } from '../support/workflow-stack.js';

// The recording mover's scenarios, as `npm start -- --scenario NAME` runs them (real triage, real
// ASL, real task handlers on the local stack).
const SCENARIO_TIMEOUT_MS = 300_000;

describe('recording-mover scenarios on the local stack (npm start -- --scenario NAME)', {
  timeout: SCENARIO_TIMEOUT_MS,
}, () => {
  const local = useWorkflowStack();

  it('selective: moves exactly the selected cause group; the poison stays in the DLQ, nothing parked', async () => {
    const report = await runNamedScenario('selective', { messages: 50 });
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ asExpected: true, outcome: 'Done', parked: 0, missing: 0 });
    // The scenario's own check holds remaining = the poison produced and redriven = Preflight's selection.
    expect(report.remaining).toBeGreaterThan(0);
    expect(report.redriven + report.remaining).toBe(report.inventoried);
    expect(report.sampled + report.bulkMoved).toBe(report.redriven);
    // The mover moved them, at the ramp's rates: the report says so and bounds exposure by its steps.
    expect(report.bulkMovedBy).toBe('the recording mover');
    expect(formatReport(report)).toContain(`${report.bulkMoved} moved by the recording mover`);
    expect(report.exposureBoundBasis).toMatch(/^\d+ sampled \+ .*: the rates in force from /);
    expect(report.exposureBound).toBeGreaterThan(report.sampled);
  });

  it('unpark: an un-park run of the incident brings every parked message back with its key; no envelope stays PARKED', async () => {
    const report = await runNamedScenario('unpark', { messages: 40 });
    // The scenario's check holds the keys, the ledger entries, the parking queue and Reconcile.
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ asExpected: true, outcome: 'Done', missing: 0 });
    expect(report.parked).toBeGreaterThan(0);
    expect(report.onCall?.redrive).toMatchObject({ parked: 0, redriven: report.inventoried });
    // Each run's report is its own: the top-level figures and reason are the first run's (a move
    // task after the sample), the un-park run has its own line with its reason and counts.
    expect(report.sampled + report.bulkMoved).toBe(report.redriven);
    expect(report.rampReason).toMatchObject({ code: 'done', left: 0 });
    expect(report.laterRuns).toEqual([
      expect.objectContaining({
        status: 'SUCCEEDED',
        outcome: 'Done',
        moved: report.parked,
        reason: expect.stringMatching(
          new RegExp(
            `^the recording mover moved ${report.parked} message\\(s\\) of ${report.parked} selected`,
          ),
        ),
        reconcile: expect.objectContaining({ parked: 0, redriven: report.inventoried, missing: 0 }),
      }),
    ]);
    expect(formatReport(report)).toMatch(
      /\| then +\| unpark-\d+ \(SUCCEEDED, Done\): \d+ moved; the recording mover moved/,
    );
  });

  it.each(['sns-dlq', 'lambda-dlq'])(
    '%s: a DLQ no SQS redrive policy feeds is triaged with its failure reasons and redriven to its origin by the recording mover',
    async (name) => {
      const report = await runNamedScenario(name, { messages: 40, standins: local.stack.standins });
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

  it("eventbridge-dlq: a rule target's DLQ is triaged with ERROR_CODE / ERROR_MESSAGE and each event is put back on its bus once, under its envelope's idempotency key", async () => {
    const putsBefore = local.stack.standins.eventbridge.events.length;
    const report = await runNamedScenario('eventbridge-dlq', {
      messages: 40,
      standins: local.stack.standins,
    });
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ asExpected: true, outcome: 'Done', missing: 0, parked: 4 });
    expect(report.redriven).toBe(report.inventoried - 4);
    expect(report.sampled + report.bulkMoved).toBe(report.redriven);
    expect(report.redriven + report.parked).toBe(report.inventoried);

    const dlqArn = report.onCall?.dlqArn ?? '';
    const envelopes: Envelope[] = [];
    for await (const e of createEnvelopeStore().listEnvelopes(dlqArn)) envelopes.push(e);
    expect(envelopes).toHaveLength(report.inventoried);
    const bus = expect.stringMatching(/:event-bus\/eventbridge-orders-bus$/);
    // The real failure reasons, from ERROR_CODE and ERROR_MESSAGE, and the rule and target of RULE_ARN / TARGET_ARN.
    expect(
      [
        ...new Set(
          envelopes.map((e) => `${e.failure.errorClass} ${e.classification}: ${e.failure.errorMessage}`),
        ),
      ].sort(),
    ).toEqual([
      'DependencyUnavailable transient: inventory service unavailable (503); retries exhausted: MaximumRetryAttempts',
      'ValidationError permanent: quantity: expected a number; retries exhausted: MaximumRetryAttempts',
    ]);
    for (const e of envelopes)
      expect(e.origin).toEqual({
        kind: 'eventbridge',
        arn: bus,
        via: 'rule-target-dlq',
        ruleArn: expect.stringMatching(/:rule\/eventbridge-orders-bus\/eventbridge-orders-rule$/),
        targetArn: expect.stringMatching(/:function:eventbridge-orders-fn$/),
      });
    expect(Object.entries(report.onCall?.countBySource ?? {})).toEqual([[bus, report.inventoried]]);

    // What the mover put on the bus: one event per redriven envelope, whose content derives that envelope's key.
    const redriven = envelopes.filter((e) => e.state === 'REDRIVEN');
    expect(redriven).toHaveLength(report.redriven);
    const perKey = new Map<string, number>();
    for (const put of local.stack.standins.eventbridge.events.slice(putsBefore)) {
      if (!/:event-bus\/eventbridge-orders-bus$/.test(put.eventBusArn)) continue;
      const { key } = deriveIdempotencyKey({
        sourceArn: 'unknown',
        body: JSON.stringify(put.event),
        messageAttributes: {},
      });
      perKey.set(key, (perKey.get(key) ?? 0) + 1);
    }
    // Each key on the bus: the order's own put (40 orders, 40 keys), and for a redriven envelope
    // the mover's one copy (the same content, a new event id); any other key only its own put.
    expect(perKey.size).toBe(40);
    expect(envelopes.filter((e) => !perKey.has(e.idempotencyKey))).toEqual([]);
    const moverPuts = [...perKey].map(([key, n]) => [key, n - 1] as const).filter(([, n]) => n !== 0);
    expect(moverPuts.map(([key]) => key).sort()).toEqual(redriven.map((e) => e.idempotencyKey).sort());
    expect(moverPuts.every(([, n]) => n === 1)).toBe(true);
  });
});
