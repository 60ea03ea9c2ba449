/**
 * `console-move-task`: while the sample is being verified, someone presses "Start DLQ redrive" in
 * the console at the ramp's first rate. Ownership is by record, never by a timing guess: the
 * pipeline did not start that task, so it is never adopted. The run ends RedriveRefused naming the
 * task's handle; the pipeline starts no move task of its own and does not touch the console's.
 * The operator then cancels the hand-started task; what it moved left the DLQ outside the pipeline
 * and the report says so.
 */
import {
  CancelMessageMoveTaskCommand,
  ListMessageMoveTasksCommand,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import type { Scenario } from './types.js';

const FIRST_RATE = 2;

interface ConsoleNotes {
  handle?: string;
  consoleMoved?: number;
  tasks?: number;
}

export const consoleMoveTask: Scenario = {
  name: 'console-move-task',
  summary: 'a move task started by hand during verification is refused by name, never adopted',
  expected: {
    outcome: 'RedriveRefused',
    text: "the refusal names the hand-started task's handle; the pipeline starts no move task",
  },
  incident: (messages) => ({
    name: 'console',
    messages: messages ?? 60,
    registration: { sampleSize: 3, rampRates: [FIRST_RATE, 20], dwellSeconds: 2 },
  }),
  onTaskResult: async (ctx, state) => {
    if (state !== 'SampleRedrive') return;
    const out = await ctx.sqs.send(
      new StartMessageMoveTaskCommand({
        SourceArn: ctx.incident.queues.dlqArn,
        MaxNumberOfMessagesPerSecond: FIRST_RATE,
      }),
    );
    (ctx.notes as ConsoleNotes).handle = out.TaskHandle ?? '(no handle)';
    ctx.say(
      `Someone starts a DLQ redrive in the console at ${FIRST_RATE} msg/s during the verification: task ${out.TaskHandle}.`,
    );
  },
  afterRun: async (ctx) => {
    const notes = ctx.notes as ConsoleNotes;
    if (notes.handle) {
      await ctx.sqs
        .send(new CancelMessageMoveTaskCommand({ TaskHandle: notes.handle }))
        .catch(() => undefined);
      ctx.say(`The operator cancels the hand-started task ${notes.handle}.`);
    }
    const out = await ctx.sqs.send(
      new ListMessageMoveTasksCommand({ SourceArn: ctx.incident.queues.dlqArn }),
    );
    notes.tasks = out.Results?.length ?? 0;
    notes.consoleMoved = (out.Results ?? []).reduce(
      (sum, t) => sum + (t.ApproximateNumberOfMessagesMoved ?? 0),
      0,
    );
  },
  exposureBound: (ctx) => ({
    value: ctx.incident.registration.sampleSize,
    basis: `sample size ${ctx.incident.registration.sampleSize}; the pipeline bulk-moved nothing`,
  }),
  check: (report, ctx) => {
    const notes = ctx.notes as ConsoleNotes;
    const ramp = (ctx.ramp ?? {}) as { reason?: string; starts?: number };
    return [
      ...(notes.handle && report.reason?.includes(notes.handle)
        ? []
        : [`the refusal does not name the hand-started task ${notes.handle}: ${report.reason}`]),
      ...((ramp.starts ?? 0) === 0 ? [] : [`the pipeline started ${ramp.starts} move task(s)`]),
      ...(notes.tasks === 1 ? [] : [`${notes.tasks} move tasks on the DLQ, expected only the console's`]),
      ...(report.countsAddUp ? [] : ['the counts do not add up']),
      ...(report.exposed <= report.exposureBound
        ? []
        : [`exposed ${report.exposed} exceeds the sample size`]),
    ];
  },
};
