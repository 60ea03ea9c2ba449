/**
 * `@dlq-redrive/consumer-idempotency`: consumer-side idempotency for SQS-triggered Lambda
 * functions, built for queues whose DLQ the dlq-redrive pipeline redrives.
 *
 * - {@link consumerIdempotency}: the middy middleware (skip processed keys, strict partial batch
 *   responses, FIFO group order, records that outlive the redrive window).
 * - {@link recordKey}: a record's idempotency key, the same derivation the pipeline uses (the pure
 *   derivation alone is the `@dlq-redrive/consumer-idempotency/key` entry point).
 * - {@link createProcessedKeysReader}: "was key K processed since T?", for the pipeline.
 *
 * Imports nothing of the pipeline: its runtime dependency is `@aws-sdk/client-dynamodb` (a peer).
 *
 * @packageDocumentation
 */
export {
  ConsumerIdempotencyError,
  type ConsumerIdempotencyErrorCode,
  InvalidBatchResponseError,
  InvalidOptionsError,
  InvalidSqsEventError,
} from './errors.js';
export {
  type DerivedKey,
  deriveIdempotencyKey,
  idempotencyKeyOfMessage,
  type KeySource,
  PIPELINE_ATTRIBUTES,
  type ProducerKey,
} from './key.js';
export {
  DEFAULT_REDRIVE_WINDOW_SECONDS,
  MAX_SQS_RETENTION_SECONDS,
  type RecordLifetime,
  type RecordLifetimeOptions,
  resolveRecordLifetime,
} from './lifetime.js';
export {
  type ConsumerIdempotencyOptions,
  type ConsumerIdempotencyState,
  consumerIdempotency,
  consumerIdempotencyState,
  type RecordFailure,
} from './middleware.js';
export {
  fifoGroupOf,
  type RecordKey,
  recordKey,
  type SqsBatchResponse,
  type SqsEvent,
  type SqsRecord,
  type SqsRecordMessageAttribute,
} from './record.js';
export {
  type Claim,
  type ClaimResult,
  createProcessedKeyStore,
  createProcessedKeysReader,
  type ProcessedKeyStore,
  type ProcessedKeysReader,
  type ProcessedKeysTableOptions,
  type ProcessedRecord,
  processedItemKey,
} from './store.js';
