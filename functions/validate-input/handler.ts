/**
 * ValidateInput (first state of statemachines/redrive.asl.json): `{ input, executionName? }` in,
 * the plan (`$.plan`) out. Bad input fails the Task with `Redrive.InvalidInput` listing every
 * problem, before any AWS call; Step Functions sees the error's `name` as `Error` and the runtime's
 * `{"errorType","errorMessage","trace"}` JSON as `Cause`.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
 * @see https://docs.aws.amazon.com/lambda/latest/dg/nodejs-exceptions.html
 */
import middy from '@middy/core';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { sqsClient } from '#platform/clients.js';
import { standardMiddleware } from '#platform/middleware.js';
import { createQueueLocator } from './queue-locator.js';
import { type ValidateInputDeps, validateInput } from './validate-input.js';

function deps(): ValidateInputDeps {
  return {
    queues: createQueueLocator(sqsClient()),
    registrations: createQueueRegistry(),
    region: process.env.AWS_REGION ?? 'us-east-1',
    defaultParkingQueueUrl: process.env.PARKING_QUEUE_URL || undefined,
  };
}

/** The Lambda handler. The raw event is parsed inside the core (no parser middleware), before any AWS call. */
export const handler = middy<unknown, unknown>()
  .use(standardMiddleware())
  .handler((event: unknown) => validateInput(event, deps()));
