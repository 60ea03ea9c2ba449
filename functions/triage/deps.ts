/**
 * Triage's ports, from the pipeline configuration (`TRIAGE_*`, `ALARM_QUEUE_MAP`,
 * `STATE_MACHINE_ARN`), the shared clients and the invocation. The notifier is `sharedNotifier()`:
 * Slack when `SLACK_SECRET_ARN` / `SLACK_BOT_TOKEN` is set (so an `alarm-cleared` notice reaches
 * the incident's thread), else the log notifier.
 */
import type { Context } from 'aws-lambda';
import { sharedNotifier } from '#approval/slack-notifier.js';
import { createIncidentStore } from '#incident/incident-store.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { createInventorySessionStore } from '#inventory/inventory-session.js';
import { cloudWatchClient, sfnClient, sqsClient, tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { logger } from '#platform/middleware.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { createCloudWatchAlarmDirectory } from './composite-alarm.js';
import type { TriageDeps, TriageLog } from './triage.js';
import { createSfnWorkflowStarter } from './workflow-starter.js';

const log: TriageLog = {
  info: (message, extra) => logger.info(message, { ...extra }),
  warn: (message, extra) => logger.warn(message, { ...extra }),
};

/**
 * Builds the ports of `triage`; `options.overrides` replaces any of them (tests and the local
 * runner pass their own `workflow` and `notifier`).
 *
 * @param context - the invocation's Lambda context (remaining time, request id).
 * @throws ConfigurationError naming a bad `TRIAGE_*` / `ALARM_QUEUE_MAP` variable.
 */
export async function createTriageDeps(
  context: Pick<Context, 'getRemainingTimeInMillis' | 'awsRequestId'>,
  options: DepsOptions<TriageDeps> = {},
): Promise<TriageDeps> {
  const config = options.config ?? pipelineConfig();
  const table = tableAccess(config);
  return {
    queues: createSqsQueues({ client: sqsClient() }),
    envelopes: createEnvelopeStore(table),
    sessions: createInventorySessionStore(table),
    incidents: createIncidentStore(table),
    registry: createQueueRegistry(table),
    workflow: createSfnWorkflowStarter({
      client: sfnClient(),
      stateMachineArn: config.stateMachineArn,
      log: (message, extra) => log.info(message, { ...extra }),
    }),
    alarms: createCloudWatchAlarmDirectory({ client: cloudWatchClient() }),
    now: () => Date.now(),
    remainingTimeMs: () => context.getRemainingTimeInMillis(),
    requestId: context.awsRequestId,
    config: config.triage,
    log,
    ...options.overrides,
    notifier: options.overrides?.notifier ?? (await sharedNotifier(config)),
  };
}
