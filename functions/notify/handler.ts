/**
 * Notify / RecordFailure: `{ outcome, run, executionName? }` in, `$.notification` out; releases the
 * DLQ's workflow lease. The notifier comes from
 * `sharedNotifierFromEnv()`: Slack when its credentials are configured, else the log notifier. It is
 * built once per container (the Slack secret is read once).
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { sharedNotifierFromEnv } from '#approval/slack-notifier.js';
import { createIncidentStore } from '#incident/incident-store.js';
import { createWorkflowLeaseStore } from '#incident/workflow-lease.js';
import { standardMiddleware } from '#platform/middleware.js';
import { type NotifyDeps, NotifyInput, type NotifyResult, notify } from './notify.js';

async function deps(): Promise<NotifyDeps> {
  return {
    notifier: await sharedNotifierFromEnv(),
    incidents: createIncidentStore(),
    leases: createWorkflowLeaseStore(),
  };
}

/** The Lambda handler. */
export const handler = middy<NotifyInput, NotifyResult>()
  .use(standardMiddleware())
  .use(parser({ schema: NotifyInput }))
  .handler(async (input) => notify(input, await deps()));
