/**
 * Triage Lambda: EventBridge "CloudWatch Alarm State Change" events and SNS alarm notifications.
 * Thin wiring: the shared middy stack, zod normalisation of the event, the core with its ports.
 *
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html
 */
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { sharedNotifierFromEnv } from '#approval/slack-notifier.js';
import { createIncidentStore } from '#incident/incident-store.js';
import type { Notifier } from '#incident/notifier.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { logger, standardMiddleware } from '#platform/middleware.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { normaliseAlarmEvent } from './alarm-event.js';
import { triageConfigFromEnv } from './config.js';
import { type TriageResult, triage } from './triage.js';
import { createSfnWorkflowStarter, type WorkflowStarter } from './workflow-starter.js';

/**
 * Builds the handler; tests and the local runner pass their own workflow starter and notifier.
 * The default notifier is `notifierFromEnv()`: Slack when `SLACK_SECRET_ARN` / `SLACK_BOT_TOKEN`
 * is set (so an `alarm-cleared` notice reaches the incident's thread, C04), else the log notifier.
 */
export function createTriageHandler(ports: { workflow?: WorkflowStarter; notifier?: Notifier } = {}) {
  return middy<unknown, TriageResult, Error, Context>()
    .use(standardMiddleware())
    .handler(async (event, context) =>
      triage(normaliseAlarmEvent(event), {
        queues: createSqsQueues(),
        envelopes: createEnvelopeStore(),
        incidents: createIncidentStore(),
        registry: createQueueRegistry(),
        workflow:
          ports.workflow ??
          createSfnWorkflowStarter({ log: (message, extra) => logger.info(message, { ...extra }) }),
        now: () => Date.now(),
        remainingTimeMs: () => context.getRemainingTimeInMillis(),
        requestId: context.awsRequestId,
        config: triageConfigFromEnv(),
        notifier: ports.notifier ?? (await sharedNotifierFromEnv()),
        log: {
          info: (message, extra) => logger.info(message, { ...extra }),
          warn: (message, extra) => logger.warn(message, { ...extra }),
        },
      }),
    );
}

export const handler = createTriageHandler();
