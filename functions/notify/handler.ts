/**
 * Notify / RecordFailure: `{ outcome, run, executionName? }` in, `$.notification` out; releases the
 * DLQ's workflow lease. The notifier comes from
 * `sharedNotifier()`: Slack when its credentials are configured, else the log notifier. It is
 * built once per container (the Slack secret is read once).
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { standardMiddleware } from '#platform/middleware.js';
import { createNotifyDeps } from './deps.js';
import { NotifyInput, type NotifyResult, notify } from './notify.js';

/** The Lambda handler. */
export const handler = middy<NotifyInput, NotifyResult>()
  .use(standardMiddleware())
  .use(parser({ schema: NotifyInput }))
  .handler(async (input) => notify(input, await createNotifyDeps()));
