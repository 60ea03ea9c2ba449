/** ContinueInventory's ports, from the pipeline configuration, the shared clients and the invocation. */
import type { Context } from 'aws-lambda';
import { sharedNotifier } from '#approval/slack-notifier.js';
import { createIncidentStore } from '#incident/incident-store.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { createInventorySessionStore } from '#inventory/inventory-session.js';
import { sqsClient, tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import type { ContinueInventoryDeps } from './continue-inventory.js';

/**
 * Builds the ports of `continueInventory`; `options.overrides` replaces any of them.
 *
 * @param context - the invocation's Lambda context (its remaining time bounds the step).
 * @throws ConfigurationError naming a bad `TRIAGE_*` variable (the budgets are triage's).
 */
export async function createContinueInventoryDeps(
  context: Partial<Pick<Context, 'getRemainingTimeInMillis'>>,
  options: DepsOptions<ContinueInventoryDeps> = {},
): Promise<ContinueInventoryDeps> {
  const config = options.config ?? pipelineConfig();
  const table = tableAccess(config);
  return {
    queues: createSqsQueues({ client: sqsClient() }),
    envelopes: createEnvelopeStore(table),
    sessions: createInventorySessionStore(table),
    incidents: createIncidentStore(table),
    registry: createQueueRegistry(table),
    budgets: { ...config.triage.budgets },
    remainingTimeMs: () => context.getRemainingTimeInMillis?.() ?? 300_000,
    now: Date.now,
    ...options.overrides,
    notifier: options.overrides?.notifier ?? (await sharedNotifier(config)),
  };
}
