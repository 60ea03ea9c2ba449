/** The recording mover's ports, from the pipeline configuration, the shared clients and the invocation. */
import type { Context } from 'aws-lambda';
import { createAuditTrail } from '#incident/audit-trail.js';
import { createCancelRequests } from '#incident/cancel-requests.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sqsClient, tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { scopedClients } from '#platform/scoped-clients.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { createTransferSqs } from '#transfer/message-transfer.js';
import { createRedriveLedger } from '#transfer/redrive-ledger.js';
import type { MoverDeps } from './mover.js';
import { createTargetSender } from './senders.js';

/**
 * Builds the ports of the mover; `options.overrides` replaces any of them.
 *
 * @param context - the invocation's Lambda context (its remaining time bounds each step).
 */
export function createMoverDeps(
  context: Partial<Pick<Context, 'getRemainingTimeInMillis'>>,
  options: DepsOptions<MoverDeps> = {},
): MoverDeps {
  const config = options.config ?? pipelineConfig();
  const table = tableAccess(config);
  const vt = config.receiveVisibilityTimeoutSeconds;
  return {
    queues: createSqsQueues({ client: sqsClient() }),
    queuesIn: (scope) => createSqsQueues({ client: scopedClients(scope).sqs() }),
    envelopes: createEnvelopeStore(table),
    ledger: createRedriveLedger(table),
    sqs: createTransferSqs({ client: sqsClient() }) as MoverDeps['sqs'],
    sender: createTargetSender(),
    registrations: createQueueRegistry(table),
    audit: createAuditTrail(table),
    cancelRequests: createCancelRequests(table),
    remainingTimeMs: () => context.getRemainingTimeInMillis?.() ?? 300_000,
    ...(vt === undefined ? {} : { visibilityTimeoutSeconds: vt }),
    ...options.overrides,
  };
}
