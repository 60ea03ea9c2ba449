/**
 * ExecutionEnded: the EventBridge "Step Functions Execution Status Change" event (ABORTED,
 * TIMED_OUT, FAILED of the redrive state machine) in, {@link ExecutionEndedResult} out. Releases
 * the ended execution's workflow lease if it still holds it and notifies through
 * `sharedNotifier()` (Slack when configured, else the log notifier; built once per container).
 * A malformed event fails with `Redrive.InvalidInput` naming the field, before any read or write.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/cw-events.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { standardMiddleware } from '#platform/middleware.js';
import { createExecutionEndedDeps } from './deps.js';
import { type ExecutionEndedResult, ExecutionStatusChangeEvent, executionEnded } from './execution-ended.js';

/** The Lambda handler. */
export const handler = middy<ExecutionStatusChangeEvent, ExecutionEndedResult>()
  .use(standardMiddleware())
  .use(parser({ schema: ExecutionStatusChangeEvent }))
  .handler(async (event) => executionEnded(event, await createExecutionEndedDeps()));
