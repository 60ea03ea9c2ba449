/**
 * MoveTask (states `StartMoveTask`, `CheckProgress`, `StepUp`): `{ action, plan, preflight, ramp? }`
 * in, `$.ramp` out.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { standardMiddleware } from '#platform/middleware.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { createMoveTasks } from '#transfer/move-tasks.js';
import { type MoveTaskDeps, MoveTaskInput, moveTask, type RampResult } from './move-task.js';

function deps(): MoveTaskDeps {
  return { moveTasks: createMoveTasks(), queues: createSqsQueues(), envelopes: createEnvelopeStore() };
}

/** The Lambda handler. */
export const handler = middy<MoveTaskInput, RampResult>()
  .use(standardMiddleware())
  .use(parser({ schema: MoveTaskInput }))
  .handler((input) => moveTask(input, deps()));
