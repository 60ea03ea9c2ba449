/**
 * `consumer-breaks-during-ramp`: the fix is deployed, the sample passes, the ramp starts; then the
 * consumer's dependency goes down again in the middle of the ramp. Redriven messages fail again and
 * come back to the DLQ behind the backlog, where no peek of the DLQ's front could see them. The
 * health gate sees them by accounting (the DLQ holds more than the plan has left to move), cancels
 * the move task, finds their keys, and halts. The exposure (messages that reached the broken
 * consumer) stays within rate x (return window + dwell) of the fastest task that ran between the
 * break and the halt.
 */
import { ListMessageMoveTasksCommand } from '@aws-sdk/client-sqs';
import { conservationProblems, exposureProblems } from '../report.js';
import { planDwellOf, rampExposureBound, returnWindowOf } from '../run-scenario.js';
import type { Scenario } from './types.js';

/** Redriven messages the consumer processes after the first task starts, before it breaks. */
const BREAK_AFTER = 30;

interface BreakNotes {
  /** The ramp when the consumer broke, and the fastest step that ran after it. */
  brokeAt?: { rate: number; dwellSeconds: number; at: string };
  fastestAfter?: { rate: number; dwellSeconds: number };
  tasksRunningAtEnd?: number;
}

export const consumerBreaksDuringRamp: Scenario = {
  name: 'consumer-breaks-during-ramp',
  summary:
    'the consumer breaks again mid-ramp: the gate sees the re-inflow by accounting, cancels the task, halts',
  expected: {
    outcome: 'RedriveHalted',
    text: 'move task cancelled; exposed <= the rate at the break x (return window + dwell)',
  },
  incident: (messages) => ({
    name: 'breaks',
    messages: messages ?? 400,
    registration: { sampleSize: 5, rampRates: [5, 25, 100], dwellSeconds: 2 },
  }),
  onTaskResult: (ctx, state, result) => {
    const notes = ctx.notes as BreakNotes;
    const r = result as { rate?: number; dwellSeconds?: number; taskHandle?: string | null };
    if (state === 'StartMoveTask' && r.taskHandle)
      ctx.incident.consumer.outageAfter(BREAK_AFTER, () => {
        const ramp = ctx.ramp as { rate: number; dwellSeconds: number };
        notes.brokeAt = { rate: ramp.rate, dwellSeconds: ramp.dwellSeconds, at: ctx.elapsed() };
        notes.fastestAfter = { rate: ramp.rate, dwellSeconds: ramp.dwellSeconds };
        ctx.say(
          `The consumer's dependency goes down again (ramp at ${ramp.rate} msg/s): redriven messages fail.`,
        );
      });
    if (notes.brokeAt && r.taskHandle && typeof r.rate === 'number' && typeof r.dwellSeconds === 'number') {
      const fastest = notes.fastestAfter as { rate: number; dwellSeconds: number };
      if (r.rate * r.dwellSeconds > fastest.rate * fastest.dwellSeconds)
        notes.fastestAfter = { rate: r.rate, dwellSeconds: r.dwellSeconds };
    }
  },
  afterRun: async (ctx) => {
    const out = await ctx.sqs.send(
      new ListMessageMoveTasksCommand({ SourceArn: ctx.incident.queues.dlqArn }),
    );
    (ctx.notes as BreakNotes).tasksRunningAtEnd = (out.Results ?? []).filter(
      (t) => t.Status === 'RUNNING',
    ).length;
  },
  exposureBound: (ctx) => {
    const notes = ctx.notes as BreakNotes;
    const step = notes.fastestAfter;
    if (!step) return { value: 0, basis: 'the consumer never broke: nothing may be exposed' };
    return rampExposureBound(step.rate, returnWindowOf(ctx), step.dwellSeconds, 0, planDwellOf(ctx));
  },
  check: (report, ctx) => {
    const notes = ctx.notes as BreakNotes;
    const ramp = (ctx.ramp ?? {}) as { reinflow?: number };
    return [
      ...conservationProblems(report),
      ...exposureProblems(report),
      ...(notes.brokeAt ? [] : ['the consumer never broke during the ramp (the ramp ended first)']),
      ...((ramp.reinflow ?? 0) > 0 ? [] : ['the halt did not report re-inflow']),
      ...(notes.tasksRunningAtEnd === 0 ? [] : [`${notes.tasksRunningAtEnd} move task(s) still running`]),
      ...(report.exposed > 0 ? [] : ['nothing was exposed: the break was not exercised']),
    ];
  },
};
