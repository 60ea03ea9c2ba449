/** Preflight's (and the recheck's) ports, from the pipeline configuration and the shared clients. */
import type { Context } from 'aws-lambda';
import { createAuditTrail } from '#incident/audit-trail.js';
import { createIncidentUpdater } from '#incident/incident-update.js';
import { createOpenIncidents } from '#incident/open-incident.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createWorkflowLeaseStore } from '#incident/workflow-lease.js';
import { createEnvelopeListing } from '#inventory/envelope-listing.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { createCoverageReader } from '#inventory/inventory-session.js';
import { createPayloadObjects } from '#inventory/payload-objects.js';
import { iamClient, kmsClient, s3Client, sqsClient, tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { newcomersPort } from '#transfer/late-arrivals.js';
import { createMoveTaskRecords } from '#transfer/move-task-record.js';
import { createMoveTasks } from '#transfer/move-tasks.js';
import { createKeyAccess } from './kms-keys.js';
import { createPolicySimulator } from './policy-simulator.js';
import type { PreflightDeps } from './preflight.js';

/**
 * Builds the ports of `preflight`; `options.overrides` replaces any of them.
 *
 * @param context - the invocation's Lambda context (its remaining time bounds the recheck's inventory).
 */
export function createPreflightDeps(
  context: Partial<Pick<Context, 'getRemainingTimeInMillis'>> = {},
  options: DepsOptions<PreflightDeps> = {},
): PreflightDeps {
  const config = options.config ?? pipelineConfig();
  const table = tableAccess(config);
  const queues = createSqsQueues({ client: sqsClient() });
  const envelopes = createEnvelopeStore(table);
  const registrations = createQueueRegistry(table);
  const payloads = createPayloadObjects(s3Client);
  return {
    queues,
    moveTasks: createMoveTasks({ client: sqsClient() }),
    envelopes,
    listing: createEnvelopeListing(table),
    leases: createWorkflowLeaseStore(table),
    payloads,
    keys: {
      access: createKeyAccess({
        kms: kmsClient(),
        iam: createPolicySimulator(iamClient),
      }),
      users: config.keyUsers,
    },
    newcomers: newcomersPort({ queues, envelopes, registrations, payloads }, context),
    openIncidents: createOpenIncidents(table),
    incidents: { updateIncident: createIncidentUpdater(table) },
    audit: createAuditTrail(table),
    moveTaskRecords: createMoveTaskRecords(table),
    registrations,
    inventories: createCoverageReader(table),
    now: Date.now,
    ...options.overrides,
  };
}
