/**
 * Example: Powertools for AWS Lambda `BatchProcessor` behind the middleware (standard queues).
 *
 * The processor runs `recordHandler` per record and turns a thrown error into that record's
 * `batchItemFailures` entry; the middleware skips records already processed before the processor
 * sees them and records the successes after. `throwOnFullBatchFailure: false` keeps a batch in
 * which every record failed a partial response too (otherwise Powertools throws, the middleware
 * records nothing and Lambda retries the whole batch: also correct, just coarser).
 *
 * @see https://docs.powertools.aws.dev/lambda/typescript/latest/features/batch/
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { type ConsumerIdempotencyOptions, consumerIdempotency } from '@dlq-redrive/consumer-idempotency';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

async function applyOrder(record: SQSRecord): Promise<void> {
  const order = JSON.parse(record.body) as { orderId?: unknown };
  if (typeof order.orderId !== 'string') throw new Error('orderId: expected a string');
}

/** Builds the handler around `work` (tests pass their own). */
export function makeHandler(
  work: (record: SQSRecord) => Promise<void>,
  options: ConsumerIdempotencyOptions,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const processor = new BatchProcessor(EventType.SQS);
  return middy<SQSEvent, SQSBatchResponse>()
    .use(consumerIdempotency(options))
    .handler((event, context) =>
      processPartialResponse(event, work, processor, { context, throwOnFullBatchFailure: false }),
    );
}

export const handler = makeHandler(applyOrder, {
  consumer: 'orders-consumer',
  tableName: process.env.DLQ_REDRIVE_TABLE_NAME ?? 'dlq-redrive',
  producerKey: { jsonPath: '$.orderId' },
});
