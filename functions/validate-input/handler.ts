/**
 * ValidateInput (first state of statemachines/redrive.asl.json): the execution input in, the plan
 * (`$.plan`) out. Bad input fails the Task with `Redrive.InvalidInput` listing every problem; Step
 * Functions sees the error's `name` as `Error` and `{"errorType","errorMessage","trace"}` as `Cause`.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
 */
import middy from '@middy/core';
import { documentClient, sqsClient } from '../shared/clients.js';
import { standardMiddleware } from '../shared/middleware.js';
import { DEFAULT_TABLE_NAME } from '../shared/table.js';
import { createQueueLocator } from './queue-locator.js';
import { createRegistrationReader } from './registration-reader.js';
import { type ValidateInputDeps, validateInput } from './validate-input.js';

function deps(): ValidateInputDeps {
  return {
    queues: createQueueLocator(sqsClient()),
    registrations: createRegistrationReader(documentClient(), process.env.TABLE_NAME ?? DEFAULT_TABLE_NAME),
    region: process.env.AWS_REGION ?? 'us-east-1',
    defaultParkingQueueUrl: process.env.PARKING_QUEUE_URL || undefined,
  };
}

/** The Lambda handler. The raw event is parsed inside the core, before any AWS call. */
export const handler = middy<unknown, unknown>()
  .use(standardMiddleware())
  .handler((event: unknown) => validateInput(event, deps()));
