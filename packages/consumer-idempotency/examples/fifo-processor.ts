/**
 * Example: Powertools for AWS Lambda `SqsFifoPartialProcessorAsync` behind the middleware (FIFO
 * queues).
 *
 * Records run one at a time in batch order. With `skipGroupOnError: true` the first failure in a
 * message group fails the rest of that group without running them, and other groups go on; the
 * middleware does the same for failures it finds itself (a key another invocation is processing)
 * and never records a record that comes after a failure in its group.
 *
 * @see https://docs.powertools.aws.dev/lambda/typescript/latest/features/batch/#fifo-queues
 */
import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import { type ConsumerIdempotencyOptions, consumerIdempotency } from '@dlq-redrive/consumer-idempotency';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

async function applyPayment(record: SQSRecord): Promise<void> {
  const payment = JSON.parse(record.body) as { paymentId?: unknown };
  if (typeof payment.paymentId !== 'string') throw new Error('paymentId: expected a string');
}

/** Builds the handler around `work` (tests pass their own). */
export function makeHandler(
  work: (record: SQSRecord) => Promise<void>,
  options: ConsumerIdempotencyOptions,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const processor = new SqsFifoPartialProcessorAsync();
  return middy<SQSEvent, SQSBatchResponse>()
    .use(consumerIdempotency(options))
    .handler((event, context) =>
      processPartialResponse(event, work, processor, {
        context,
        skipGroupOnError: true,
        throwOnFullBatchFailure: false,
      }),
    );
}

export const handler = makeHandler(applyPayment, {
  consumer: 'payments-consumer',
  tableName: process.env.DLQ_REDRIVE_TABLE_NAME ?? 'dlq-redrive',
  producerKey: { jsonPath: '$.paymentId' },
});
