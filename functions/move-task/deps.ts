/** MoveTask's ports, from the pipeline configuration, the shared clients and the invocation. */
import type { Context } from 'aws-lambda';
import { createCancelRequests } from '#incident/cancel-requests.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { createPayloadObjects } from '#inventory/payload-objects.js';
import { s3Client, sqsClient, tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { newcomersPort } from '#transfer/late-arrivals.js';
import { createMoveTaskRecords } from '#transfer/move-task-record.js';
import { createMoveTasks } from '#transfer/move-tasks.js';
import type { MoveTaskDeps } from './move-task.js';

/**
 * Builds the ports of `moveTask`; `options.overrides` replaces any of them.
 *
 * @param context - the invocation's Lambda context (its remaining time bounds the gate's inventory).
 */
export function createMoveTaskDeps(
  context: Partial<Pick<Context, 'getRemainingTimeInMillis'>>,
  options: DepsOptions<MoveTaskDeps> = {},
): MoveTaskDeps {
  const config = options.config ?? pipelineConfig();
  const table = tableAccess(config);
  const queues = createSqsQueues({ client: sqsClient() });
  const envelopes = createEnvelopeStore(table);
  const registrations = createQueueRegistry(table);
  return {
    moveTasks: createMoveTasks({ client: sqsClient() }),
    records: createMoveTaskRecords(table),
    queues,
    envelopes,
    // The gate HeadObjects late arrivals' extended-client pointers (a gone one is parked, not moved).
    newcomers: newcomersPort(
      {
        queues,
        envelopes,
        registrations,
        payloads: createPayloadObjects(s3Client),
      },
      context,
    ),
    cancelRequests: createCancelRequests(table),
    ...options.overrides,
  };
}
