/** Reconcile's ports, from the pipeline configuration, the shared clients and the invocation. */
import type { Context } from 'aws-lambda';
import { createProcessedKeys } from '#consumer/processed-keys.js';
import { createIncidentStore } from '#incident/incident-store.js';
import { createOpenIncidents } from '#incident/open-incident.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createEnvelopeListing } from '#inventory/envelope-listing.js';
import { createEnvelopeStates } from '#inventory/envelope-states.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sqsClient, tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { sharedRunMetrics } from '#platform/metrics.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { createMoveTasks } from '#transfer/move-tasks.js';
import { createRedriveLedger } from '#transfer/redrive-ledger.js';
import type { ReconcileDeps } from './reconcile.js';

/**
 * Builds the ports of `reconcile`; `options.overrides` replaces any of them.
 *
 * @param context - the invocation's Lambda context (its remaining time bounds the final inventory).
 */
export function createReconcileDeps(
  context: Partial<Pick<Context, 'getRemainingTimeInMillis'>>,
  options: DepsOptions<ReconcileDeps> = {},
): ReconcileDeps {
  const table = tableAccess(options.config ?? pipelineConfig());
  return {
    queues: createSqsQueues({ client: sqsClient() }),
    envelopes: createEnvelopeStore(table),
    envelopeStates: createEnvelopeStates(table),
    listing: createEnvelopeListing(table),
    ledger: createRedriveLedger(table),
    moveTasks: createMoveTasks({ client: sqsClient() }),
    registrations: createQueueRegistry(table),
    incidents: createIncidentStore(table),
    processed: createProcessedKeys(table),
    openIncidents: createOpenIncidents(table),
    remainingTimeMs: () => context.getRemainingTimeInMillis?.() ?? 300_000,
    now: Date.now,
    metrics: sharedRunMetrics(),
    ...options.overrides,
  };
}
