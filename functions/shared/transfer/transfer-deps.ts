/**
 * The ports Park and SampleRedrive share (they both move DLQ messages record -> send -> delete),
 * built once from the environment.
 *
 * `REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS` (positive integer, seconds) overrides how long a
 * received message stays hidden while it is transferred; a retry after a crash waits this long for
 * the message to reappear.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html
 */
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { createTransferSqs } from './message-transfer.js';
import { createRedriveLedger } from './redrive-ledger.js';

/** The transfer ports with the SDK clients of this Lambda container. */
export function transferDepsFromEnv() {
  const vt = Number(process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS);
  return {
    queues: createSqsQueues(),
    envelopes: createEnvelopeStore(),
    ledger: createRedriveLedger(),
    sqs: createTransferSqs(),
    ...(Number.isInteger(vt) && vt > 0 ? { visibilityTimeoutSeconds: vt } : {}),
  };
}
