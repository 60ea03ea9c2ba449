/**
 * `selective`: the operator redrives one cause group and keeps the rest. The run selects the
 * dependency outage's cause (`selection.causes`), so it takes the recording mover (a move task
 * cannot filter): Preflight counts "N of M", nothing is parked, only the selected messages move,
 * and the poison stays in the DLQ with its envelopes, never sent to the consumer again.
 */
import { conservationProblems, exposureProblems } from '../report.js';
import type { Scenario } from './types.js';

/** The demo consumer's error class while its dependency is down (local/demo/consumer.ts). */
const SELECTED_CAUSE = 'DependencyUnavailable';

interface SelectiveNotes {
  selected?: number;
  total?: number;
}

export const selective: Scenario = {
  name: 'selective',
  summary: `only the ${SELECTED_CAUSE} cause group is redriven (recording mover); the poison stays in the DLQ`,
  expected: {
    outcome: 'Done',
    text: 'exactly the selected group redriven, the other group still in the DLQ with its envelopes, nothing parked or missing',
  },
  incident: (messages) => ({
    name: 'selective',
    messages: messages ?? 120,
    poisonEvery: 5,
    registration: { sampleSize: 3, rampRates: [20, 200], dwellSeconds: 2 },
  }),
  input: { selection: { causes: [SELECTED_CAUSE] } },
  onTaskResult: (ctx, state, result) => {
    if (state !== 'Preflight') return;
    const selection = (result as { selection?: { selected: number; total: number } }).selection;
    Object.assign(
      ctx.notes as SelectiveNotes,
      selection ? { selected: selection.selected, total: selection.total } : {},
    );
    if (selection)
      ctx.say(`Preflight: the selection takes ${selection.selected} of ${selection.total} message(s).`);
  },
  check: (report, ctx) => {
    const notes = ctx.notes as SelectiveNotes;
    const poison = ctx.incident.produced.poisonIds.length;
    return [
      ...conservationProblems(report),
      ...exposureProblems(report),
      ...(notes.selected === report.inventoried - poison
        ? []
        : [
            `Preflight selected ${notes.selected}, expected ${report.inventoried - poison} (every non-poison message)`,
          ]),
      ...(report.redriven === notes.selected
        ? []
        : [`${report.redriven} redriven, ${notes.selected} selected`]),
      ...(report.remaining === poison
        ? []
        : [`${report.remaining} left in the DLQ, expected the ${poison} poison`]),
      ...(report.parked === 0
        ? []
        : [`${report.parked} parked: a selective run leaves the rest where it is`]),
      ...(report.consumer.processedTwice === 0 ? [] : [`${report.consumer.processedTwice} processed twice`]),
    ];
  },
};
