/**
 * Triage Lambda: EventBridge "CloudWatch Alarm State Change" events and SNS alarm notifications.
 * Thin wiring: the shared middy stack, zod normalisation of the event, the core with its ports.
 *
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html
 */
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { normaliseAlarmEvent } from '../shared/alarm-event.js';
import { createEnvelopeStore } from '../shared/envelope-store.js';
import { createIncidentStore } from '../shared/incident-store.js';
import { logger, standardMiddleware } from '../shared/middleware.js';
import type { Notifier } from '../shared/notifier.js';
import { createQueueRegistry } from '../shared/queue-registry.js';
import { sharedNotifierFromEnv } from '../shared/slack-notifier.js';
import { createSqsQueues } from '../shared/sqs-queues.js';
import { createSfnWorkflowStarter, type WorkflowStarter } from '../shared/workflow-starter.js';
import { triageConfigFromEnv } from './config.js';
import { type TriageResult, triage } from './triage.js';

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
