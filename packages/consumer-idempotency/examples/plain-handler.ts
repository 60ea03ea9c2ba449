/**
 * Example: a plain handler (no batch library) behind the middleware, for a standard or FIFO queue.
 *
 * The handler catches per record and reports failures with `batchItemFailures`, the only response
 * the middleware accepts. On a FIFO queue it stops a message group at its first failure (the
 * middleware fails the rest of that group anyway, but only the handler can avoid doing their work
 * out of order). Copy it, replace `applyOrder`, and set `DLQ_REDRIVE_TABLE_NAME`.
 *
 * The event source mapping must have `FunctionResponseTypes: ['ReportBatchItemFailures']`.
 * @see https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html#services-sqs-batchfailurereporting
 */
import {
  type ConsumerIdempotencyOptions,
  consumerIdempotency,
  fifoGroupOf,
} from '@dlq-redrive/consumer-idempotency';
import middy from '@middy/core';
import type { Context, SQSBatchItemFailure, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

/** Your work for one message. Throw to fail it; it is retried, and recorded only once it succeeds. */
async function applyOrder(record: SQSRecord): Promise<void> {
  const order = JSON.parse(record.body) as { orderId?: unknown };
  if (typeof order.orderId !== 'string') throw new Error('orderId: expected a string');
}

/** Builds the handler around `work` (tests pass their own). */
export function makeHandler(
  work: (record: SQSRecord) => Promise<void>,
  options: ConsumerIdempotencyOptions,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  return middy<SQSEvent, SQSBatchResponse>()
    .use(consumerIdempotency(options))
    .handler(async (event) => {
      const batchItemFailures: SQSBatchItemFailure[] = [];
      const failedGroups = new Set<string>();
      for (const record of event.Records) {
        const group = fifoGroupOf(record);
        if (group !== undefined && failedGroups.has(group)) {
          batchItemFailures.push({ itemIdentifier: record.messageId });
          continue;
        }
        try {
          await work(record);
        } catch {
          batchItemFailures.push({ itemIdentifier: record.messageId });
          if (group !== undefined) failedGroups.add(group);
        }
      }
      return { batchItemFailures };
    });
}

export const handler = makeHandler(applyOrder, {
  consumer: 'orders-consumer',
  tableName: process.env.DLQ_REDRIVE_TABLE_NAME ?? 'dlq-redrive',
  // Where the producer's id lives: the same as the queue's registration in the pipeline.
  producerKey: { jsonPath: '$.orderId' },
});
