/**
 * Notify / RecordFailure: `{ outcome, run }` in, `$.notification` out. Uses the log notifier; a
 * Slack notifier implementing the same `Notifier` interface can replace it here.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { createIncidentStore } from '../shared/incident-store.js';
import { standardMiddleware } from '../shared/middleware.js';
import { createLogNotifier } from '../shared/notifier.js';
import { type NotifyDeps, NotifyInput, type NotifyResult, notify } from './notify.js';

function deps(): NotifyDeps {
  return { notifier: createLogNotifier(), incidents: createIncidentStore() };
}

/** The Lambda handler. */
export const handler = middy<NotifyInput, NotifyResult>()
  .use(standardMiddleware())
  .use(parser({ schema: NotifyInput }))
  .handler((input) => notify(input, deps()));
