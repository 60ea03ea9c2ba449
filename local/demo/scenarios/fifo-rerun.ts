/**
 * `fifo-rerun`: a FIFO redrive repeated within SQS's 5-minute deduplication interval. The first
 * run is approved without the fix: its sample fails again and it ends `SampleFailed`. The fix is
 * deployed and a second run of the same incident starts at once. Its copies go out under new
 * MessageDeduplicationIds (each ledger entry records its own before the send), so SQS delivers
 * them; with ids derived from the idempotency key alone, SQS would drop the second run's copies of
 * the keys the first run sent as duplicates while the pipeline deleted their DLQ copies: lost, and
 * reported redriven (docs/redrive-workflow.md, "Record, send, delete: the ledger").
 */
import { LOCAL_VERIFY_MARGIN_SECONDS } from '../run-scenario.js';
import type { Scenario } from './types.js';

interface RerunNotes {
  secondOutcome?: string | null;
  secondReconcile?: { redriven?: number; missing?: number; inventoried?: number };
  processed?: number;
  processedTwice?: number;
}

/** How long the consumer may take to process what the second run sent, milliseconds. */
const DELIVERY_WAIT_MS = 120_000;
const GROUPS = 5;

export const fifoRerun: Scenario = {
  name: 'fifo-rerun',
  summary:
    'a FIFO run ends SampleFailed; the fix is deployed and a second run follows at once, inside the 5-minute deduplication interval',
  expected: {
    outcome: 'SampleFailed',
    text: 'the second run ends Done: every message reaches the consumer exactly once, missing 0',
  },
  incident: (messages) => ({
    name: 'fifo-rerun',
    messages: messages ?? 20,
    poisonEvery: 0,
    fifo: { groupOf: (i: number) => `customer-${i % GROUPS}` },
    maxReceiveCount: 2,
    consumerConcurrency: 1,
    drainTimeoutMs: 180_000,
    registration: { sampleSize: 5, rampRates: [50, 200], dwellSeconds: 1 },
  }),
  onApproved: (ctx) => ctx.say('Approved, but the fix is not deployed: the consumer still fails.'),
  exposureBound: (ctx) => ({
    value: ctx.incident.registration.sampleSize,
    basis: `sample size ${ctx.incident.registration.sampleSize} (the first run's); the second run's copies succeed`,
  }),
  afterRun: async (ctx) => {
    const notes = ctx.notes as RerunNotes;
    const { queues, consumer } = ctx.incident;
    const plan = ctx.taskResults.ValidateInput as { incidentId?: string } | undefined;
    if (!ctx.starter || !plan?.incidentId) return;
    ctx.say('The fix is deployed; a second run of the incident starts at once.');
    consumer.endOutage();
    consumer.start();
    try {
      const name = `rerun-${Date.now()}`;
      await ctx.starter.startByName({
        name,
        input: {
          dlqArn: queues.dlqArn,
          incidentId: plan.incidentId,
          requestedBy: 'scenario-fifo-rerun',
          verifyMarginSeconds: LOCAL_VERIFY_MARGIN_SECONDS,
        },
      });
      const result = await ctx.starter.executions.find((e) => e.executionName === name)?.result;
      if (result) ctx.laterRuns.push(result);
      notes.secondOutcome = result?.path.at(-1) ?? null;
      notes.secondReconcile = (result?.taskResults.Reconcile ?? {}) as NonNullable<
        RerunNotes['secondReconcile']
      >;
      ctx.say(`Second run ${name}: ${notes.secondOutcome}.`);
      const total = ctx.incident.produced.orderIds.length;
      const deadline = Date.now() + DELIVERY_WAIT_MS;
      while (consumer.stats.processed < total && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
    } finally {
      await consumer.stop();
    }
    notes.processed = consumer.stats.processed;
    notes.processedTwice = consumer.stats.processedTwice;
  },
  check: (_report, ctx) => {
    const n = ctx.notes as RerunNotes;
    const total = ctx.incident.produced.orderIds.length;
    const r = n.secondReconcile ?? {};
    const want = (ok: boolean, problem: string) => (ok ? [] : [problem]);
    return [
      ...want(n.secondOutcome === 'Done', `the second run ended ${n.secondOutcome}, expected Done`),
      ...want(r.missing === 0, `the second run's Reconcile: ${r.missing} missing`),
      ...want(n.processed === total, `the consumer processed ${n.processed} of ${total} orders`),
      ...want(n.processedTwice === 0, `${n.processedTwice} order(s) processed twice`),
    ];
  },
};
