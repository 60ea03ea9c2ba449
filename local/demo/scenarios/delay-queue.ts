/**
 * `delay-queue`: the source queue is a delay queue (DelaySeconds 4), so a redriven sample is
 * hidden from the consumer for 4 s before its first receive. The consumer is still
 * broken. A verification window of visibility timeout x maxReceiveCount + margin (5 s here) would
 * close before the samples had failed and read as a pass; the window includes DelaySeconds, so the
 * samples are seen back in the DLQ and the run ends SampleFailed with nothing bulk-moved.
 */
import { conservationProblems } from '../report.js';
import type { Scenario } from './types.js';

const DELAY_SECONDS = 4;

export const delayQueue: Scenario = {
  name: 'delay-queue',
  summary:
    'a still-broken consumer behind a delay queue: verification waits out DelaySeconds and fails the sample',
  expected: {
    outcome: 'SampleFailed',
    text: 'the verification window includes DelaySeconds; exposed <= the sample size; nothing bulk-moved',
  },
  incident: (messages) => ({
    name: 'delayed',
    messages: messages ?? 40,
    delaySeconds: DELAY_SECONDS,
    registration: { sampleSize: 3 },
  }),
  onApproved: (ctx) =>
    ctx.say(
      `Approved, but the fix is not deployed; the source queue delays every message ${DELAY_SECONDS} s.`,
    ),
  exposureBound: (ctx) => ({
    value: ctx.incident.registration.sampleSize,
    basis: `sample size ${ctx.incident.registration.sampleSize}; nothing bulk-moved`,
  }),
  check: (report, ctx) => {
    const { queues } = ctx.incident;
    const sample = ctx.taskResults.SampleRedrive as { verifyAfterSeconds?: number } | undefined;
    const floor = queues.delaySeconds + queues.visibilityTimeoutSeconds * queues.maxReceiveCount;
    const waited = sample?.verifyAfterSeconds ?? 0;
    return [
      ...conservationProblems(report),
      ...(waited > floor
        ? []
        : [
            `verification waited ${waited} s, not more than DelaySeconds + visibility timeout x maxReceiveCount = ${floor} s`,
          ]),
      ...(report.exposed <= report.exposureBound
        ? []
        : [`exposed ${report.exposed} exceeds the sample size`]),
      ...(report.bulkMoved > 0 || 'StartMoveTask' in ctx.taskResults
        ? ['a move task ran on a failed sample']
        : []),
    ];
  },
};
