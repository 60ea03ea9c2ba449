/**
 * MoveTask (states `StartMoveTask`, `CheckProgress`, `StepUp`, `ResumeRamp`, `StopRampAfterFailure`):
 * `{ action, plan, preflight, ramp?, executionName? }` in, `$.ramp` out. After each action the
 * ramp's progress goes to the incident's Slack thread (move-task/slack-progress.ts; never fails the
 * step).
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { sharedRunMetrics } from '#platform/metrics.js';
import { standardMiddleware } from '#platform/middleware.js';
import { createMoveTaskDeps } from './deps.js';
import { MoveTaskInput, moveTask, type RampResult } from './move-task.js';
import { reportRampProgress } from './slack-progress.js';

/** The Lambda handler. */
export const handler = middy<MoveTaskInput, RampResult>()
  .use(standardMiddleware())
  .use(parser({ schema: MoveTaskInput }))
  .handler(async (input, context) => {
    const ramp = await moveTask(input, createMoveTaskDeps(context));
    // The approval thread's progress message (rate, moved, re-inflow; Cancel for approvers).
    await reportRampProgress(input.plan, input.executionName ?? input.plan.incidentId, ramp);
    sharedRunMetrics().record(input.plan.dlqArn, {
      RampRate: ramp.taskHandle ? ramp.rate : 0,
      MovedByTask: (ramp.movedBefore ?? 0) + ramp.moved,
    });
    return ramp;
  });
