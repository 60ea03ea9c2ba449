/** Preflight's (and the recheck's) ports, from the pipeline configuration and the shared clients. */
import { createWorkflowLeaseStore } from '#incident/workflow-lease.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { iamClient, kmsClient, sqsClient, tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { createMoveTasks } from '#transfer/move-tasks.js';
import { createKeyAccess } from './kms-keys.js';
import type { PreflightDeps } from './preflight.js';

/** Builds the ports of `preflight`; `options.overrides` replaces any of them. */
export function createPreflightDeps(options: DepsOptions<PreflightDeps> = {}): PreflightDeps {
  const config = options.config ?? pipelineConfig();
  const table = tableAccess(config);
  return {
    queues: createSqsQueues({ client: sqsClient() }),
    moveTasks: createMoveTasks({ client: sqsClient() }),
    envelopes: createEnvelopeStore(table),
    leases: createWorkflowLeaseStore(table),
    keys: { access: createKeyAccess({ kms: kmsClient(), iam: iamClient() }), users: config.keyUsers },
    now: Date.now,
    ...options.overrides,
  };
}
