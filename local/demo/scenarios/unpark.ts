/**
 * `unpark`: parked messages come back. The first run parks the poison (the consumer rejects its
 * payload) and redrives the rest. Then the consumer is fixed to accept that payload, and the
 * operator starts an un-park run of the same incident (`unpark: true`, what `dlq unpark INCIDENT`
 * sends): the recording mover takes the parked copies from the parking queue, each matched to its
 * envelope, records a ledger entry naming that envelope, sends the copy back to its source queue
 * with the envelope's idempotency key, and deletes it from the parking queue. The envelopes go
 * from PARKED to REDRIVEN and stay so through the un-park run's Reconcile (Park's earlier entry
 * for the same envelope no longer decides). Every parked message is processed once.
 */
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { createRedriveLedger } from '#transfer/redrive-ledger.js';
import { queueDepth } from '../queues.js';
import { conservationProblems } from '../report.js';
import { LOCAL_VERIFY_MARGIN_SECONDS } from '../run-scenario.js';
import type { Scenario } from './types.js';

interface UnparkNotes {
  parkedBefore?: number;
  unparkOutcome?: string | null;
  unparkMoved?: number;
  /** The un-park run's Reconcile. */
  unparkReconcile?: { redriven?: number; parked?: number; inventoried?: number; missing?: number };
  parkedAfter?: number;
  parkingDepthAfter?: number;
  /** Parked keys the consumer received back carrying that same key, each counted once. */
  keysDeliveredBack?: number;
  /** Ledger entries of the un-park run that name a parked envelope, sent and deleted. */
  ledgerEntries?: number;
  processedBack?: number;
}

/** How long the consumer may take to process what was sent back, milliseconds (a loaded machine included). */
const DELIVERY_WAIT_MS = 120_000;

export const unpark: Scenario = {
  name: 'unpark',
  summary:
    'the first run parks the poison; the consumer is fixed; an un-park run brings every parked message back',
  expected: {
    outcome: 'Done',
    text: 'the un-park run ends Done: every parked message sent back once with its idempotency key and a ledger entry, no envelope left PARKED, the parking queue empty',
  },
  incident: (messages) => ({
    name: 'unpark',
    messages: messages ?? 100,
    poisonEvery: 10,
    registration: { sampleSize: 2, rampRates: [50, 500], dwellSeconds: 1 },
  }),
  afterRun: async (ctx) => {
    const notes = ctx.notes as UnparkNotes;
    const { queues, consumer } = ctx.incident;
    const starter = ctx.starter;
    const plan = ctx.taskResults.ValidateInput as
      | { incidentId?: string; parkingQueueUrl?: string }
      | undefined;
    notes.parkedBefore = (ctx.taskResults.Park as { parked?: number } | undefined)?.parked ?? 0;
    if (!starter || !plan?.incidentId) return;
    const parked = new Map<string, string>(); // envelope MessageId -> idempotency key
    for await (const e of createEnvelopeStore().listEnvelopes(queues.dlqArn))
      if (e.state === 'PARKED') parked.set(e.messageId, e.idempotencyKey);
    ctx.say(
      `The consumer is fixed to accept the payload it rejected; un-parking ${parked.size} message(s)...`,
    );
    consumer.acceptPoison();
    const processedBefore = consumer.stats.processed;
    const deliveriesBefore = consumer.deliveries.length;
    consumer.start();
    try {
      // The same incident, as `dlq unpark INCIDENT` starts it.
      const name = `unpark-${Date.now()}`;
      await starter.startByName({
        name,
        input: {
          dlqArn: queues.dlqArn,
          incidentId: plan.incidentId,
          unpark: true,
          requestedBy: 'scenario-unpark',
          verifyMarginSeconds: LOCAL_VERIFY_MARGIN_SECONDS,
        },
      });
      const result = await starter.executions.find((e) => e.executionName === name)?.result;
      if (result) ctx.laterRuns.push(result);
      notes.unparkOutcome = result?.path.at(-1) ?? null;
      notes.unparkMoved = (result?.taskResults.MoverStep as { moved?: number } | undefined)?.moved ?? 0;
      notes.unparkReconcile = (result?.taskResults.Reconcile ?? {}) as NonNullable<
        UnparkNotes['unparkReconcile']
      >;
      ctx.say(`Un-park run ${name}: ${notes.unparkOutcome}, ${notes.unparkMoved} message(s) sent back.`);
      const deadline = Date.now() + DELIVERY_WAIT_MS;
      while (consumer.stats.processed - processedBefore < notes.unparkMoved && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      const entries = await createRedriveLedger().list(queues.dlqArn);
      notes.ledgerEntries = entries.filter(
        (e) =>
          e.redriveId === name &&
          e.envelopeMessageId !== undefined &&
          parked.get(e.envelopeMessageId) === e.key &&
          e.status === 'SENT' &&
          e.dlqDeleted,
      ).length;
    } finally {
      await consumer.stop();
    }
    notes.processedBack = consumer.stats.processed - processedBefore;
    const keys = new Set(parked.values());
    notes.keysDeliveredBack = new Set(
      consumer.deliveries
        .slice(deliveriesBefore)
        .map((d) => d.pipelineKey)
        .filter((k): k is string => k !== null && keys.has(k)),
    ).size;
    let parkedAfter = 0;
    for await (const e of createEnvelopeStore().listEnvelopes(queues.dlqArn))
      if (e.state === 'PARKED') parkedAfter += 1;
    notes.parkedAfter = parkedAfter;
    notes.parkingDepthAfter = plan.parkingQueueUrl
      ? (await queueDepth(ctx.sqs, plan.parkingQueueUrl)).visible
      : -1;
  },
  check: (report, ctx) => {
    const n = ctx.notes as UnparkNotes;
    const poison = ctx.incident.produced.poisonIds.length;
    const r = n.unparkReconcile ?? {};
    const want = (ok: boolean, problem: string) => (ok ? [] : [problem]);
    return [
      ...conservationProblems(report),
      ...want(n.parkedBefore === poison, `the first run parked ${n.parkedBefore}, expected ${poison}`),
      ...want(n.unparkOutcome === 'Done', `the un-park run ended ${n.unparkOutcome}, expected Done`),
      ...want(n.unparkMoved === poison, `the un-park run sent back ${n.unparkMoved}, expected ${poison}`),
      ...want(
        n.keysDeliveredBack === poison,
        `${n.keysDeliveredBack} of ${poison} parked keys came back to the consumer with their idempotency key`,
      ),
      ...want(
        n.ledgerEntries === poison,
        `${n.ledgerEntries} un-park ledger entries name a parked envelope, expected ${poison}`,
      ),
      ...want(n.parkedAfter === 0, `${n.parkedAfter} envelope(s) still PARKED`),
      ...want(
        r.parked === 0 && r.redriven === r.inventoried && r.missing === 0,
        `the un-park run's Reconcile: ${r.redriven} redriven, ${r.parked} parked, ${r.missing} missing of ${r.inventoried}`,
      ),
      ...want(n.parkingDepthAfter === 0, `${n.parkingDepthAfter} message(s) left in the parking queue`),
      ...want(
        n.processedBack === poison,
        `the consumer processed ${n.processedBack} un-parked, expected ${poison}`,
      ),
      ...want(report.consumer.processedTwice === 0, `${report.consumer.processedTwice} processed twice`),
    ];
  },
};
