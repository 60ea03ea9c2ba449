/**
 * `fifo-deep-group`: a FIFO DLQ whose biggest message group (100 messages by default) is deeper
 * than a scan can see, beside small groups, one with a poisoned head and one poisoned in the
 * middle (docs/redrive-workflow.md, "Deep FIFO groups"). The local stack keeps SQS's FIFO rule
 * (a group in flight hands out nothing more), so triage sees only each group's first messages, and the run goes
 * through the recording mover: every group moves in order (the deep one split between the sample
 * and the steps), a group is held in the DLQ from its first message that may not move, nothing
 * is parked, and nothing of a held group reaches the consumer.
 */
import { conservationProblems, exposureProblems } from '../report.js';
import type { Scenario } from './types.js';

/** Small groups after the deep one: five messages each. */
const SMALL_GROUPS = 6;
const SMALL_SIZE = 5;
const SMALL = SMALL_GROUPS * SMALL_SIZE;

interface FifoNotes {
  path?: string;
  heldGroups?: number;
  heldExamples?: string[];
}

/** The layout of `total` messages: the deep group first, then the small ones. */
function layout(total: number) {
  const deep = Math.max(20, total - SMALL);
  const groupOf = (i: number) =>
    i < deep ? 'customer-deep' : `customer-${Math.floor((i - deep) / SMALL_SIZE)}`;
  // customer-0's head and customer-2's third message crash the consumer's validation.
  const poisoned = new Set([deep, deep + 2 * SMALL_SIZE + 2]);
  return { deep, total: deep + SMALL, groupOf, poisonAt: (i: number) => poisoned.has(i) };
}

export const fifoDeepGroup: Scenario = {
  name: 'fifo-deep-group',
  summary:
    'a FIFO DLQ with a group of 100 behind what a scan sees and two poisoned groups: redriven group by group, in order, by the recording mover',
  expected: {
    outcome: 'Done',
    text: 'every group redriven in order up to its first poisoned message; the poisoned groups stay in the DLQ from there, nothing parked, none of them delivered',
  },
  incident: (messages) => {
    const l = layout(messages ?? 130);
    return {
      name: 'fifo-orders',
      messages: l.total,
      fifo: { groupOf: l.groupOf },
      poisonAt: l.poisonAt,
      outageAfterProcessed: 0,
      maxReceiveCount: 2,
      consumerConcurrency: 1,
      drainTimeoutMs: 180_000,
      registration: { sampleSize: 5, rampRates: [50, 200], dwellSeconds: 2 },
    };
  },
  onTaskResult: (ctx, state, result) => {
    const notes = ctx.notes as FifoNotes;
    if (state === 'Preflight') {
      notes.path = (result as { path?: string }).path ?? 'none';
      ctx.say(`Preflight: path ${notes.path} (FIFO groups are taken in order by the recording mover).`);
    }
    if (state === 'MoverStep') {
      const held = (result as { fifoGroupsHeld?: { groups: number; examples: string[] } }).fifoGroupsHeld;
      if (held) {
        notes.heldGroups = held.groups;
        notes.heldExamples = held.examples;
      }
    }
  },
  check: (report, ctx) => {
    const notes = ctx.notes as FifoNotes;
    const { produced, consumer } = ctx.incident;
    const l = layout(produced.orderIds.length);
    const groupOfId = new Map(produced.orderIds.map((id, i) => [id, l.groupOf(i)]));
    // What each group should have delivered after the redrive: its messages before its first poison.
    const expected = new Map<string, string[]>();
    const stopped = new Set<string>();
    for (const [i, id] of produced.orderIds.entries()) {
      const group = l.groupOf(i);
      if (l.poisonAt(i)) stopped.add(group);
      if (!stopped.has(group)) expected.set(group, [...(expected.get(group) ?? []), id]);
    }
    const delivered = new Map<string, string[]>();
    for (const d of consumer.deliveries) {
      if (d.redriveId === null) continue;
      const group = groupOfId.get(d.key) ?? '?';
      const list = delivered.get(group) ?? [];
      if (!list.includes(d.key)) list.push(d.key);
      delivered.set(group, list);
    }
    const orderProblems = [...new Set([...expected.keys(), ...delivered.keys()])].flatMap((group) => {
      const want = expected.get(group) ?? [];
      const got = delivered.get(group) ?? [];
      return JSON.stringify(want) === JSON.stringify(got)
        ? []
        : [
            `group ${group}: redriven ${got.length} (${got.slice(0, 3).join(', ')}...), expected ${want.length} in order`,
          ];
    });
    const held = produced.orderIds.length - [...expected.values()].reduce((n, ids) => n + ids.length, 0);
    const warnings = (ctx.taskResults.Preflight as { warnings?: string[] } | undefined)?.warnings ?? [];
    return [
      ...conservationProblems(report),
      ...exposureProblems(report),
      ...orderProblems,
      ...(notes.path === 'mover'
        ? []
        : [`Preflight chose the ${notes.path} path, expected the recording mover`]),
      ...(report.parked === 0 ? [] : [`${report.parked} parked: a FIFO run parks nothing`]),
      ...(report.remaining === held
        ? []
        : [`${report.remaining} left in the DLQ, expected ${held} (the held groups)`]),
      ...(notes.heldGroups === 2 ? [] : [`${notes.heldGroups ?? 0} group(s) reported held, expected 2`]),
      // The mover kept group order: the run's warnings (what the approval and the report show) say
      // so, and not that order was lost (a move task's warning).
      ...(warnings.some((w) => /order within each message group is kept/.test(w))
        ? []
        : ['the warnings do not say that group order was kept']),
      ...warnings
        .filter((w) => /not preserved/.test(w))
        .map((w) => `the run warns "${w}" although the mover kept group order`),
    ];
  },
};
