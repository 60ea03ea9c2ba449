/** MoveTask's ports, from the pipeline configuration and the shared clients. */
import { createCancelRequests } from '#incident/cancel-requests.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sqsClient, tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { createMoveTasks } from '#transfer/move-tasks.js';
import type { MoveTaskDeps } from './move-task.js';

/** Builds the ports of `moveTask`; `options.overrides` replaces any of them. */
export function createMoveTaskDeps(options: DepsOptions<MoveTaskDeps> = {}): MoveTaskDeps {
  const config = options.config ?? pipelineConfig();
  return {
    moveTasks: createMoveTasks({ client: sqsClient() }),
    queues: createSqsQueues({ client: sqsClient() }),
    envelopes: createEnvelopeStore(tableAccess(config)),
    cancelRequests: createCancelRequests(tableAccess(config)),
    ...options.overrides,
  };
}
