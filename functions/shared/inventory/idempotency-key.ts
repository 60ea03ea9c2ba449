/**
 * Idempotency keys per message (DESIGN.md "Idempotency keys per message").
 *
 * The derivation is owned by the consumer-side package (`packages/consumer-idempotency/src/key.ts`,
 * published as `@dlq-redrive/consumer-idempotency/key`): triage, the redrive, verification and
 * every consumer that uses the package run this one function, so they derive the same key from the
 * same message. This module re-exports it for the pipeline's domains.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html
 */
export {
  deriveIdempotencyKey,
  eventBridgeEventOf,
  idempotencyKeyOfMessage,
  type KeyInput,
  LAMBDA_DLQ_ATTRIBUTES,
  lambdaRecordOf,
  PIPELINE_ATTRIBUTES,
  parseJsonObject,
  parseSnsNotification,
  readJsonPath,
  setOwn,
  sha256Hex,
  toStoredAttributes,
  unqualifiedFunctionArn,
} from '@dlq-redrive/consumer-idempotency/key';
