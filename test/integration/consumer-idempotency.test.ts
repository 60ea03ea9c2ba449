import { readFileSync } from 'node:fs';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  consumerIdempotency,
  consumerIdempotencyState,
  createProcessedKeys,
  idempotencyKeyOfRecord,
} from '#consumer/consumer-idempotency.js';
import { idempotencyKeyOfMessage } from '#inventory/idempotency-key.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { lambdaContext } from '../support/redrive-fixtures.js';

const sample = JSON.parse(
  readFileSync(new URL('../../events/sqs/consumer-batch.json', import.meta.url), 'utf8'),
) as SQSEvent;
const event = (records: SQSRecord[] = sample.Records): SQSEvent => ({ Records: structuredClone(records) });

/** A consumer built the recommended way: Powertools batch processing behind the middleware. */
function consumer(name: string, fail: (body: string) => boolean) {
  const applied: string[] = [];
  const processor = new BatchProcessor(EventType.SQS);
  const handler = middy<SQSEvent, SQSBatchResponse>()
    .use(consumerIdempotency({ consumer: name }))
    .handler(async (e, context) =>
      processPartialResponse(
        e,
        async (record: SQSRecord) => {
          if (fail(record.body)) throw new Error(`cannot process ${record.body}`);
          applied.push(record.body);
        },
        processor,
        { context },
      ),
    );
  return { handler, applied };
}

describe('consumer-side idempotency middleware against DynamoDB Local', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('applies each key once: a redelivered (or redriven) copy of a processed message is skipped', async () => {
    const { handler, applied } = consumer('orders-once', () => false);
    const first = await handler(event(), { ...lambdaContext });
    const context = { ...lambdaContext };
    const second = await handler(event(), context);
    expect(applied).toEqual(['{"orderId":"o-1"}', '{"orderId":"o-2"}']);
    expect(first.batchItemFailures).toEqual([]);
    expect(second.batchItemFailures).toEqual([]);
    expect(consumerIdempotencyState(context)?.skipped).toEqual(sample.Records.map((r) => r.messageId));
  });

  it('does not record a record the handler reports as a batch item failure, so its retry is applied', async () => {
    let failing = true;
    const { handler, applied } = consumer('orders-partial', (body) => failing && body.includes('o-2'));
    const first = await handler(event(), { ...lambdaContext });
    expect(first.batchItemFailures).toEqual([{ itemIdentifier: sample.Records[1]?.messageId }]);
    const done = await createProcessedKeys().processedBy(
      'orders-partial',
      sample.Records.map((r) => idempotencyKeyOfRecord(r)),
    );
    expect([...done]).toEqual(['k-redriven-1']);
    failing = false;
    await handler(event(), { ...lambdaContext });
    expect(applied).toEqual(['{"orderId":"o-1"}', '{"orderId":"o-2"}']);
  });

  it('prefers the idempotency-key attribute and otherwise derives the same key triage gave the DLQ envelope', () => {
    const [redriven, plain] = sample.Records as [SQSRecord, SQSRecord];
    expect(idempotencyKeyOfRecord(redriven)).toBe('k-redriven-1');
    // The same message as it sits in the DLQ: DeadLetterQueueSourceArn names the consumed queue.
    const inDlq = idempotencyKeyOfMessage({
      Body: plain.body,
      MessageAttributes: { tenant: { DataType: 'String', StringValue: 'acme' } },
      Attributes: { DeadLetterQueueSourceArn: plain.eventSourceARN },
    }).key;
    expect(idempotencyKeyOfRecord(plain)).toBe(inDlq);
  });

  it('lets the workflow see which consumers processed a key', async () => {
    const { handler } = consumer('payments', () => false);
    await handler(event(), { ...lambdaContext });
    expect((await createProcessedKeys().consumersOf('k-redriven-1')).sort()).toEqual([
      'orders-once',
      'orders-partial',
      'payments',
    ]);
  });
});
