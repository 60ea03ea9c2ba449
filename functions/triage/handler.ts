/**
 * Triage Lambda: EventBridge "CloudWatch Alarm State Change" events and SNS alarm notifications.
 * Thin wiring: the shared middy stack, zod normalisation of the event, the core with its ports
 * (`deps.ts`).
 *
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html
 */
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { DepsOptions } from '#platform/config.js';
import { standardMiddleware } from '#platform/middleware.js';
import { normaliseAlarmEvent } from './alarm-event.js';
import { createTriageDeps } from './deps.js';
import { type TriageDeps, type TriageResult, triage } from './triage.js';

/**
 * Builds the handler; tests and the local runner pass their own ports (a workflow starter, a
 * notifier) as `options.overrides`.
 */
export function createTriageHandler(options: DepsOptions<TriageDeps> = {}) {
  return middy<unknown, TriageResult, Error, Context>()
    .use(standardMiddleware())
    .handler(async (event, context) =>
      triage(normaliseAlarmEvent(event), await createTriageDeps(context, options)),
    );
}

export const handler = createTriageHandler();
