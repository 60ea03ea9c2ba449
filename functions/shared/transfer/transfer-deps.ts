/**
 * The ports Park and SampleRedrive share (they both move DLQ messages record -> send -> delete),
 * built from the pipeline configuration and the shared clients.
 *
 * `REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS` (config `receiveVisibilityTimeoutSeconds`) overrides
 * how long a received message stays hidden while it is transferred; a retry after a crash waits
 * this long for the message to reappear.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html
 */
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sqsClient, tableAccess } from '#platform/clients.js';
import type { PipelineConfig } from '#platform/config.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { createTransferSqs } from './message-transfer.js';
import { createRedriveLedger } from './redrive-ledger.js';

/** The transfer ports over the container's clients and table. */
export function createTransferDeps(config: PipelineConfig) {
  const table = tableAccess(config);
  const vt = config.receiveVisibilityTimeoutSeconds;
  return {
    queues: createSqsQueues({ client: sqsClient() }),
    envelopes: createEnvelopeStore(table),
    ledger: createRedriveLedger(table),
    sqs: createTransferSqs({ client: sqsClient() }),
    ...(vt === undefined ? {} : { visibilityTimeoutSeconds: vt }),
  };
}
