/** Preflight's (and the recheck's) ports, from the pipeline configuration and the shared clients. */
import { createWorkflowLeaseStore } from '#incident/workflow-lease.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sqsClient, tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { createMoveTasks } from '#transfer/move-tasks.js';
import type { PreflightDeps } from './preflight.js';

/** Builds the ports of `preflight`; `options.overrides` replaces any of them. */
export function createPreflightDeps(options: DepsOptions<PreflightDeps> = {}): PreflightDeps {
  const table = tableAccess(options.config ?? pipelineConfig());
  return {
    queues: createSqsQueues({ client: sqsClient() }),
    moveTasks: createMoveTasks({ client: sqsClient() }),
    envelopes: createEnvelopeStore(table),
    leases: createWorkflowLeaseStore(table),
    now: Date.now,
    ...options.overrides,
  };
}
