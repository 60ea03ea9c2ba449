/** VerifySample's ports, from the pipeline configuration and the shared clients. */
import { createProcessedKeys } from '#consumer/processed-keys.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sqsClient, tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import type { VerifySampleDeps } from './verify-sample.js';

/** Builds the ports of `verifySample`; `options.overrides` replaces any of them. */
export function createVerifySampleDeps(options: DepsOptions<VerifySampleDeps> = {}): VerifySampleDeps {
  const table = tableAccess(options.config ?? pipelineConfig());
  return {
    queues: createSqsQueues({ client: sqsClient() }),
    envelopes: createEnvelopeStore(table),
    processed: createProcessedKeys(table),
    ...options.overrides,
  };
}
