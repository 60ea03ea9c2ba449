/**
 * MoveTask (states `StartMoveTask`, `CheckProgress`, `StepUp`, `ResumeRamp`):
 * `{ action, plan, preflight, ramp?, executionName? }` in, `$.ramp` out.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { standardMiddleware } from '#platform/middleware.js';
import { createMoveTaskDeps } from './deps.js';
import { MoveTaskInput, moveTask, type RampResult } from './move-task.js';

/** The Lambda handler. */
export const handler = middy<MoveTaskInput, RampResult>()
  .use(standardMiddleware())
  .use(parser({ schema: MoveTaskInput }))
  .handler((input, context) => moveTask(input, createMoveTaskDeps(context)));
