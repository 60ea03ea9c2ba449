/**
 * `healthy` (the default of `npm start`): the consumer is fixed when the redrive is approved, so
 * the sample passes and the ramp moves everything that is not poison.
 */
import { conservationProblems, exposureProblems } from '../report.js';
import type { Scenario } from './types.js';

export const healthy: Scenario = {
  name: 'healthy',
  summary:
    'the fix is deployed on approval: poison is parked, the sample passes, the ramp moves the rest (the default)',
  expected: {
    outcome: 'Done',
    text: 'every message redriven or parked, nothing missing, the counts add up, exposed 0',
  },
  incident: (messages) => ({ name: 'orders', messages: messages ?? 300 }),
  check: (report) => [
    ...conservationProblems(report),
    ...exposureProblems(report),
    ...(report.exposed > 0 ? [`exposed ${report.exposed}: a healthy consumer failed redriven messages`] : []),
    ...(report.remaining > 0 ? [`${report.remaining} message(s) still in the DLQ`] : []),
    ...(report.inventoried !== report.deadLettered
      ? [`inventoried ${report.inventoried}, but ${report.deadLettered} were dead-lettered`]
      : []),
  ],
};
