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
import { standardMiddleware } from '#platform/middleware.js';
import { createValidateInputDeps } from './deps.js';
import { validateInput } from './validate-input.js';

/** The Lambda handler. The raw event is parsed inside the core (no parser middleware), before any AWS call. */
export const handler = middy<unknown, unknown>()
  .use(standardMiddleware())
  .handler((event: unknown) => validateInput(event, createValidateInputDeps()));
