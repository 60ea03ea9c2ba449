/**
 * `late-poison-arrivals`: the DLQ alarm fires once, on 0 -> 1; messages that dead-letter after
 * triage make no new alarm transition and have no envelope. Here new poison orders keep
 * arriving after the approval: some dead-letter while the sample is verified (before the first move
 * task), some during the ramp. The ramp inventories them when the DLQ holds more than the plan
 * expects, parks the poison and goes on: none is delivered to the consumer again.
 */
import { produceOrders } from '../producer.js';
import { conservationProblems } from '../report.js';
import type { Scenario } from './types.js';

/** Poison orders sent after the approval, and again once the first move task runs. */
const LATE_POISON = 10;

interface LateNotes {
  lateIds?: string[];
  duringRampSent?: boolean;
}

async function sendLatePoison(ctx: Parameters<NonNullable<Scenario['onApproved']>>[0], first: number) {
  const notes = ctx.notes as LateNotes;
  const produced = await produceOrders(ctx.sqs, ctx.incident.queues.sourceUrl, {
    count: LATE_POISON,
    poisonEvery: 1,
    firstOrder: first,
    prefix: 'late-poison',
  });
  notes.lateIds = [...(notes.lateIds ?? []), ...produced.orderIds];
}

export const latePoisonArrivals: Scenario = {
  name: 'late-poison-arrivals',
  summary: 'poison keeps dead-lettering after triage: it is inventoried, parked and never redriven',
  expected: {
    outcome: 'Done',
    text: 'late poison parked or left in the DLQ, never delivered to the consumer again; counted as late arrivals',
  },
  incident: (messages) => ({
    name: 'late',
    messages: messages ?? 200,
    registration: { sampleSize: 5, rampRates: [5, 50], dwellSeconds: 2 },
  }),
  onApproved: async (ctx) => {
    ctx.incident.consumer.endOutage();
    ctx.say(
      'Approved. The fix is deployed, but a producer keeps sending poison orders that dead-letter after triage.',
    );
    await sendLatePoison(ctx, 1);
  },
  onTaskResult: async (ctx, state, result) => {
    const notes = ctx.notes as LateNotes;
    if (
      (state === 'StartMoveTask' || state === 'ResumeRamp') &&
      (result as { taskHandle?: string }).taskHandle &&
      !notes.duringRampSent
    ) {
      notes.duringRampSent = true;
      ctx.say(`${LATE_POISON} more poison orders arrive while the move task runs.`);
      await sendLatePoison(ctx, LATE_POISON + 1);
    }
  },
  check: (report, ctx) => {
    const notes = ctx.notes as LateNotes;
    const late = notes.lateIds ?? [];
    const redelivered = late.filter((id) => ctx.incident.consumer.exposedKeys.has(id));
    return [
      ...conservationProblems(report),
      ...(redelivered.length > 0
        ? [
            `${redelivered.length} late poison message(s) reached the consumer again: ${redelivered.join(', ')}`,
          ]
        : []),
      ...(report.exposed > 0 ? [`exposed ${report.exposed}, expected 0`] : []),
      ...(report.lateArrivals >= late.length
        ? []
        : [`late arrivals ${report.lateArrivals}, expected at least the ${late.length} late poison orders`]),
      ...(notes.duringRampSent ? [] : ['no late poison was sent during the ramp']),
    ];
  },
};
