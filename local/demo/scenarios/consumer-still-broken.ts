/**
 * `consumer-still-broken`: the redrive is approved but the fix is not deployed. The sample goes
 * back to a consumer that still fails it, comes back to the DLQ within the verification window,
 * and the run stops before any bulk move: the exposure is the sample, nothing more.
 */
import { conservationProblems } from '../report.js';
import type { Scenario } from './types.js';

export const consumerStillBroken: Scenario = {
  name: 'consumer-still-broken',
  summary: 'approved without a fix: the sample fails again and nothing is bulk-moved',
  expected: { outcome: 'SampleFailed', text: 'exposed <= the sample size; nothing bulk-moved' },
  incident: (messages) => ({ name: 'still-broken', messages: messages ?? 60 }),
  onApproved: (ctx) => ctx.say('Approved, but the fix is not deployed: the consumer still fails.'),
  exposureBound: (ctx) => ({
    value: ctx.incident.registration.sampleSize,
    basis: `sample size ${ctx.incident.registration.sampleSize}; nothing bulk-moved`,
  }),
  check: (report, ctx) => [
    ...conservationProblems(report),
    ...(report.exposed > report.exposureBound
      ? [`exposed ${report.exposed} exceeds the sample size ${report.exposureBound}`]
      : []),
    ...(report.bulkMoved > 0 || 'StartMoveTask' in ctx.taskResults
      ? [`a move task ran (${report.bulkMoved} moved) on a failed sample`]
      : []),
  ],
};
