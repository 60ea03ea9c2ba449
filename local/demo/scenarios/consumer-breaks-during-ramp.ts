/**
 * `consumer-breaks-during-ramp`: the fix is deployed, the sample passes, the ramp starts; then the
 * consumer's dependency goes down again in the middle of the ramp. Redriven messages fail again and
 * come back to the DLQ behind the backlog, where no peek of the DLQ's front could see them. The
 * health gate sees them by accounting (the DLQ holds more than the plan has left to move), cancels
 * the move task, finds their keys, and halts. The exposure (messages that reached the broken
 * consumer) stays within the bound the ramp policy states: the rates in force from one return
 * window before the last clean check to the halt.
 */
import { ListMessageMoveTasksCommand } from '@aws-sdk/client-sqs';
import { conservationProblems, exposureProblems } from '../report.js';
import { policyExposureBound } from '../run-scenario.js';
import type { Scenario } from './types.js';

/** Redriven messages the consumer processes after the first task starts, before it breaks. */
const BREAK_AFTER = 30;

interface BreakNotes {
  /** The ramp when the consumer broke. */
  brokeAt?: { rate: number; dwellSeconds: number; at: string };
  tasksRunningAtEnd?: number;
}

export const consumerBreaksDuringRamp: Scenario = {
  name: 'consumer-breaks-during-ramp',
  summary:
    'the consumer breaks again mid-ramp: the gate sees the re-inflow by accounting, cancels the task, halts',
  expected: {
    outcome: 'RedriveHalted',
    text: 'move task cancelled; exposed <= the rates in force over the return window before the halt',
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
        ctx.say(
          `The consumer's dependency goes down again (ramp at ${ramp.rate} msg/s): redriven messages fail.`,
        );
      });
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
    if (!(ctx.notes as BreakNotes).brokeAt)
      return { value: 0, basis: 'the consumer never broke: nothing may be exposed' };
    // The sample passed while the consumer was healthy: only the ramp's bound applies.
    return policyExposureBound(ctx.ramp, 0);
  },
  gatelessExposure: (ctx) => {
    // With no gate every message the ramp had to move after the break reaches the broken consumer.
    const baseline = Number((ctx.ramp as { baseline?: unknown } | undefined)?.baseline ?? 0);
    return {
      value: Math.max(0, baseline - BREAK_AFTER),
      basis: `${baseline} to move by the ramp - ${BREAK_AFTER} processed before the break`,
    };
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
