import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { type Message, SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaContext } from '../../../local/lambda-context.js';
import { sqsRecordOf } from '../../../local/sqs-event.js';
import { type LocalStack, startLocalStack } from '../../../local/stack.js';
import { makeHandler as batchProcessorHandler } from '../examples/batch-processor.js';
import { makeHandler as fifoProcessorHandler } from '../examples/fifo-processor.js';
import { makeHandler as plainHandler } from '../examples/plain-handler.js';
import {
  type ConsumerIdempotencyOptions,
  consumerIdempotency,
  consumerIdempotencyState,
  createProcessedKeyStore,
  createProcessedKeysReader,
  InvalidBatchResponseError,
  type ProcessedKeyStore,
  processedItemKey,
  recordKey,
} from '../src/index.js';
import { createQueue, deliver, type Queue, receive, receiveAll } from './support/lambda-sqs.js';
import { itemsOfKey, resetTableClient } from './support/table.js';

const orderOf = (record: { body: string }) => (JSON.parse(record.body) as { orderId: string }).orderId;
const idOf = (messages: Message[], orderId: string) =>
  messages.find((m) => (JSON.parse(m.Body ?? '{}') as { orderId?: string }).orderId === orderId)
    ?.MessageId as string;

describe('consumer idempotency on the local stack (SQS stand-in and DynamoDB Local)', () => {
  let stack: LocalStack;
  let sqs: SQSClient;
  const warnings: string[] = [];
  const options = (consumer: string, extra: Partial<ConsumerIdempotencyOptions> = {}) =>
    ({
      consumer,
      tableName: stack.tableName,
      producerKey: { jsonPath: '$.orderId' },
      logger: { warn: (message: string) => warnings.push(message) },
      ...extra,
    }) as ConsumerIdempotencyOptions;
  const send = async (queue: Queue, bodies: string[], group?: (body: string) => string) => {
    for (let i = 0; i < bodies.length; i += 10)
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queue.url,
          Entries: bodies.slice(i, i + 10).map((body, j) => ({
            Id: String(j),
            MessageBody: body,
            ...(group
              ? {
                  MessageGroupId: group(body),
                  MessageDeduplicationId: `${i + j}-${body.length}-${Date.now()}`,
                }
              : {}),
          })),
        }),
      );
  };
  const statusOf = async (consumer: string, key: string) =>
    (await itemsOfKey(stack.tableName, key))
      .filter((item) => item.consumer === consumer)
      .map((i) => i.status);

  beforeAll(async () => {
    stack = await startLocalStack();
    sqs = new SQSClient({});
    resetTableClient();
  });
  afterAll(async () => {
    sqs?.destroy();
    await stack?.stop();
  });

  it('retries only the failing record of a standard-queue batch and records the others as processed', async () => {
    const queue = await createQueue(sqs, 'std-one-failing');
    await send(queue, ['{"orderId":"s-1"}', '{"orderId":"s-2"}', '{"orderId":"s-3"}']);
    const applied: string[] = [];
    let failing = true;
    const handler = plainHandler(async (record) => {
      if (failing && orderOf(record) === 's-2') throw new Error('inventory service unavailable');
      applied.push(orderOf(record));
    }, options('std-plain'));

    const batch = await receiveAll(sqs, queue, 3);
    const first = await deliver(sqs, queue, handler, batch);
    expect(first.response).toEqual({ batchItemFailures: [{ itemIdentifier: idOf(batch, 's-2') }] });
    expect(applied.sort()).toEqual(['s-1', 's-3']);
    expect([await statusOf('std-plain', 's-1'), await statusOf('std-plain', 's-2')]).toEqual([
      ['COMPLETED'],
      [],
    ]);

    failing = false;
    const again = await receiveAll(sqs, queue, 1);
    expect(again.map((m) => m.MessageId)).toEqual([idOf(batch, 's-2')]);
    const second = await deliver(sqs, queue, handler, again);
    expect(second.response).toEqual({ batchItemFailures: [] });
    expect(applied.sort()).toEqual(['s-1', 's-2', 's-3']);
    expect(await receive(sqs, queue)).toEqual([]);
  });

  it("turns an exception thrown for one record into that record's failure (Powertools BatchProcessor)", async () => {
    const queue = await createQueue(sqs, 'std-batch-processor');
    await send(queue, ['{"orderId":"b-1"}', '{"orderId":"b-2"}']);
    const handler = batchProcessorHandler(async (record) => {
      if (orderOf(record) === 'b-1') throw new TypeError('cannot read quantity');
    }, options('std-powertools'));
    const batch = await receiveAll(sqs, queue, 2);
    const delivery = await deliver(sqs, queue, handler, batch);
    expect([delivery.error, delivery.response]).toEqual([
      undefined,
      { batchItemFailures: [{ itemIdentifier: idOf(batch, 'b-1') }] },
    ]);
    expect([await statusOf('std-powertools', 'b-1'), await statusOf('std-powertools', 'b-2')]).toEqual([
      [],
      ['COMPLETED'],
    ]);
  });

  it('on a FIFO queue fails the rest of a message group after its first failure, and other groups go on', async () => {
    const queue = await createQueue(sqs, 'orders-group.fifo');
    const bodies = ['a-1', 'b-1', 'a-2', 'b-2', 'a-3'].map((id) => `{"orderId":"${id}"}`);
    await send(queue, bodies, (body) => (body.includes('"a-') ? 'customer-a' : 'customer-b'));
    const applied: string[] = [];
    let failing = true;
    const handler = fifoProcessorHandler(async (record) => {
      if (failing && orderOf(record) === 'a-2') throw new Error('payment provider timeout');
      applied.push(orderOf(record));
    }, options('fifo-powertools'));

    const batch = await receiveAll(sqs, queue, 5);
    const first = await deliver(sqs, queue, handler, batch);
    expect(first.response?.batchItemFailures.map((f) => f.itemIdentifier)).toEqual([
      idOf(batch, 'a-2'),
      idOf(batch, 'a-3'),
    ]);
    expect(applied).toEqual(['a-1', 'b-1', 'b-2']);
    expect(await statusOf('fifo-powertools', 'a-3')).toEqual([]);
    expect(await statusOf('fifo-powertools', 'b-2')).toEqual(['COMPLETED']);

    failing = false;
    const again = await receiveAll(sqs, queue, 2);
    expect(again.map((m) => m.MessageId)).toEqual([idOf(batch, 'a-2'), idOf(batch, 'a-3')]);
    await deliver(sqs, queue, handler, again);
    expect(applied).toEqual(['a-1', 'b-1', 'b-2', 'a-2', 'a-3']);
  });

  it('does not record or acknowledge a FIFO record that a handler processed after a failure in its group', async () => {
    const queue = await createQueue(sqs, 'orders-naive.fifo');
    await send(queue, ['{"orderId":"n-1"}', '{"orderId":"n-2"}', '{"orderId":"m-1"}'], (body) =>
      body.includes('"n-') ? 'n' : 'm',
    );
    // This handler ignores message groups: it keeps going after n-1 fails.
    const handler = middy<SQSEvent, SQSBatchResponse>()
      .use(consumerIdempotency(options('fifo-naive')))
      .handler(async (event) => ({
        batchItemFailures: event.Records.filter((r) => orderOf(r) === 'n-1').map((r) => ({
          itemIdentifier: r.messageId,
        })),
      }));
    const batch = await receiveAll(sqs, queue, 3);
    const delivery = await deliver(sqs, queue, handler, batch);
    expect(delivery.response?.batchItemFailures.map((f) => f.itemIdentifier)).toEqual([
      idOf(batch, 'n-1'),
      idOf(batch, 'n-2'),
    ]);
    expect([await statusOf('fifo-naive', 'n-2'), await statusOf('fifo-naive', 'm-1')]).toEqual([
      [],
      ['COMPLETED'],
    ]);
    expect(consumerIdempotencyState(delivery.context)?.failed).toEqual([
      { messageId: idOf(batch, 'n-2'), reason: 'an earlier record of message group n failed' },
    ]);
  });

  it('processes both of two different messages with the same body, and skips a redelivery of either', async () => {
    const queue = await createQueue(sqs, 'std-same-body');
    await send(queue, ['{"event":"restock","sku":"x-1"}', '{"event":"restock","sku":"x-1"}']);
    let applied = 0;
    // No producer id: the key is the content hash, the same for both messages.
    const { producerKey: _, ...withoutProducerKey } = options('same-body');
    const handler = plainHandler(async () => {
      applied += 1;
    }, withoutProducerKey);

    const batch = await receiveAll(sqs, queue, 2);
    const [key, otherKey] = batch.map((m) => recordKey(sqsRecordOf(m, queue.arn)).key) as [string, string];
    expect(key).toBe(otherKey);
    const context = lambdaContext({ functionName: 'Consumer' });
    const first = await handler({ Records: batch.map((m) => sqsRecordOf(m, queue.arn)) }, context);
    expect([first, applied]).toEqual([{ batchItemFailures: [] }, 2]);
    expect((await itemsOfKey(stack.tableName, key)).map((i) => i.sk).sort()).toEqual(
      batch.map((m) => processedItemKey('same-body', key, `MSG#${m.MessageId}`).sk).sort(),
    );

    // Processed but never deleted (say the function timed out after the work): SQS delivers the
    // same messages again, with the same MessageIds.
    const redelivered = await deliver(sqs, queue, handler, batch);
    expect(applied).toBe(2);
    expect(consumerIdempotencyState(redelivered.context)?.skipped.sort()).toEqual(
      batch.map((m) => m.MessageId).sort(),
    );
  });

  it('records nothing and fails the batch when the handler response is malformed', async () => {
    const queue = await createQueue(sqs, 'std-malformed');
    await send(queue, ['{"orderId":"r-1"}', '{"orderId":"r-2"}']);
    const malformed: unknown[] = [
      undefined,
      {},
      { batchItemFailures: 'r-1' },
      { batchItemFailures: [{ itemIdentifier: 'not-a-message-id' }] },
      { batchItemFailures: [], status: 'ok' },
      { batchItemFailures: [{ itemIdentifier: '' }] },
    ];
    for (const response of malformed) {
      const handler = middy<SQSEvent, SQSBatchResponse>()
        .use(consumerIdempotency(options('malformed')))
        .handler(async () => response as SQSBatchResponse);
      const batch = await receiveAll(sqs, queue, 2);
      const delivery = await deliver(sqs, queue, handler, batch);
      expect(delivery.error, JSON.stringify(response)).toBeInstanceOf(InvalidBatchResponseError);
      expect(delivery.retried.sort()).toEqual(batch.map((m) => m.MessageId).sort());
      expect([await itemsOfKey(stack.tableName, 'r-1'), await itemsOfKey(stack.tableName, 'r-2')]).toEqual([
        [],
        [],
      ]);
    }
    // The claims were released: a handler that answers properly processes both at once.
    const applied: string[] = [];
    const good = plainHandler(async (record) => {
      applied.push(orderOf(record));
    }, options('malformed'));
    await deliver(sqs, queue, good, await receiveAll(sqs, queue, 2));
    expect(applied.sort()).toEqual(['r-1', 'r-2']);
  });

  it('treats a processed-key record that has expired but is still in the table as absent', async () => {
    const queue = await createQueue(sqs, 'std-expired');
    let clock = Date.parse('2026-03-01T10:00:00.000Z');
    const applied: string[] = [];
    const lifetime = { dlqRetentionSeconds: 60, redriveWindowSeconds: 0, recordTtlSeconds: 60 };
    const handler = plainHandler(
      async (record) => {
        applied.push(orderOf(record));
      },
      options('expiring', { ...lifetime, now: () => new Date(clock) }),
    );
    const reader = createProcessedKeysReader({ tableName: stack.tableName, now: () => new Date(clock) });
    const copy = async () => {
      await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: '{"orderId":"e-1"}' }));
      return deliver(sqs, queue, handler, await receiveAll(sqs, queue, 1));
    };

    await copy();
    clock += 59_000;
    await copy(); // a redriven copy (new MessageId, same producer id) within the lifetime
    expect(applied).toEqual(['e-1']);
    expect((await reader.processedSince(['e-1'], new Date(0))).has('e-1')).toBe(true);

    clock += 2_000;
    const { pk, sk } = processedItemKey('expiring', 'e-1', null);
    const stored = await new DynamoDBClient({}).send(
      new GetItemCommand({
        TableName: stack.tableName,
        Key: { pk: { S: pk }, sk: { S: sk } },
        ConsistentRead: true,
      }),
    );
    expect(Number(stored.Item?.expiresAt?.N) * 1000).toBeLessThan(clock); // expired, still there
    expect((await reader.processedSince(['e-1'], new Date(0))).has('e-1')).toBe(false);
    await copy();
    expect(applied).toEqual(['e-1', 'e-1']);
    expect(await statusOf('expiring', 'e-1')).toEqual(['COMPLETED']);
  });

  it('releases every claim and records nothing when the handler throws, so the retried batch is processed', async () => {
    const queue = await createQueue(sqs, 'std-throws');
    await send(queue, ['{"orderId":"t-1"}', '{"orderId":"t-2"}']);
    let throwing = true;
    const applied: string[] = [];
    const handler = middy<SQSEvent, SQSBatchResponse>()
      .use(consumerIdempotency(options('throws')))
      .handler(async (event) => {
        if (throwing) throw new Error('database connection refused');
        applied.push(...event.Records.map(orderOf));
        return { batchItemFailures: [] };
      });
    const first = await deliver(sqs, queue, handler, await receiveAll(sqs, queue, 2));
    expect((first.error as Error).message).toBe('database connection refused');
    expect([await itemsOfKey(stack.tableName, 't-1'), await itemsOfKey(stack.tableName, 't-2')]).toEqual([
      [],
      [],
    ]);
    throwing = false;
    await deliver(sqs, queue, handler, await receiveAll(sqs, queue, 2));
    expect(applied.sort()).toEqual(['t-1', 't-2']);
  });

  it('fails a copy whose key another invocation is still processing, and skips it once that one recorded it', async () => {
    const queue = await createQueue(sqs, 'std-concurrent');
    await send(queue, ['{"orderId":"c-1"}', '{"orderId":"c-1","resent":true}']);
    let finish: () => void = () => undefined;
    const slow = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const applied: string[] = [];
    const handler = plainHandler(async (record) => {
      applied.push(record.body);
      if (applied.length === 1) await slow;
    }, options('concurrent'));
    const [original, copy] = await receiveAll(sqs, queue, 2);
    const busy = deliver(sqs, queue, handler, [original as Message]);
    await expect.poll(() => applied.length).toBe(1);
    const second = await deliver(sqs, queue, handler, [copy as Message]);
    expect(second.retried).toEqual([copy?.MessageId]);
    expect(consumerIdempotencyState(second.context)?.failed[0]?.reason).toMatch(
      /^key c-1 is being processed by another invocation \(record /,
    );
    finish();
    await busy;
    const third = await deliver(sqs, queue, handler, await receiveAll(sqs, queue, 1));
    expect(consumerIdempotencyState(third.context)?.skipped).toEqual([copy?.MessageId]);
    expect(applied).toHaveLength(1);
  });

  it("skips a pipeline copy of a processed message by its idempotency-key attribute (the sample redrive's copy)", async () => {
    const queue = await createQueue(sqs, 'std-pipeline-copy');
    await send(queue, ['{"orderId":"p-1"}']);
    const applied: string[] = [];
    const handler = plainHandler(async (record) => {
      applied.push(record.messageId);
    }, options('pipeline-copy'));
    await deliver(sqs, queue, handler, await receiveAll(sqs, queue, 1));
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queue.url,
        MessageBody: '{"orderId":"p-1"}',
        MessageAttributes: {
          'idempotency-key': { DataType: 'String', StringValue: 'p-1' },
          'redrive-id': { DataType: 'String', StringValue: 'inc-1' },
          'redrive-count': { DataType: 'Number', StringValue: '1' },
        },
      }),
    );
    const copy = await deliver(sqs, queue, handler, await receiveAll(sqs, queue, 1));
    expect([applied.length, copy.deleted.length, copy.response]).toEqual([1, 1, { batchItemFailures: [] }]);
  });

  it('reports a success whose record cannot be written as a success, listed as unrecorded and logged', async () => {
    const queue = await createQueue(sqs, 'std-unrecorded');
    await send(queue, ['{"orderId":"u-1"}']);
    const real = createProcessedKeyStore({ tableName: stack.tableName });
    const failing: ProcessedKeyStore = {
      ...real,
      complete: async () => {
        throw Object.assign(new Error('Throughput exceeds the current capacity'), {
          name: 'ProvisionedThroughputExceededException',
        });
      },
    };
    const handler = plainHandler(async () => undefined, options('unrecorded', { store: failing }));
    warnings.length = 0;
    const delivery = await deliver(sqs, queue, handler, await receiveAll(sqs, queue, 1));
    expect(delivery.response).toEqual({ batchItemFailures: [] });
    expect(consumerIdempotencyState(delivery.context)?.unrecorded).toEqual(delivery.deleted);
    expect(warnings).toEqual([
      `consumer-idempotency: record ${delivery.deleted[0]} was processed but its key u-1 could not be recorded (ProvisionedThroughputExceededException: Throughput exceeds the current capacity); a later copy will be processed again`,
    ]);
    expect(await statusOf('unrecorded', 'u-1')).toEqual(['IN_PROGRESS']); // lapses at the invocation's deadline
  });

  it('answers "processed since T" with live COMPLETED records only, by consumer when asked', async () => {
    const queue = await createQueue(sqs, 'std-reader');
    await send(queue, ['{"orderId":"q-1"}']);
    const before = new Date();
    const messages = await receiveAll(sqs, queue, 1);
    for (const consumer of ['reader-a', 'reader-b'])
      await plainHandler(async () => undefined, options(consumer))(
        { Records: messages.map((m) => sqsRecordOf(m, queue.arn)) },
        lambdaContext({ functionName: consumer }),
      );
    const reader = createProcessedKeysReader({ tableName: stack.tableName });
    const all = await reader.processedSince(['q-1', 'q-unknown'], before);
    expect([...all.keys()]).toEqual(['q-1']);
    expect(
      all
        .get('q-1')
        ?.map((r) => [r.consumer, r.lineage, r.messageId])
        .sort(),
    ).toEqual([
      ['reader-a', null, messages[0]?.MessageId],
      ['reader-b', null, messages[0]?.MessageId],
    ]);
    const onlyB = await reader.processedSince(['q-1'], before, { consumer: 'reader-b' });
    expect(onlyB.get('q-1')?.map((r) => r.consumer)).toEqual(['reader-b']);
    expect((await reader.processedSince(['q-1'], new Date(Date.now() + 60_000))).size).toBe(0);
  });

  it('passes two records of one producer id in a batch to the handler once; the second follows the first', async () => {
    const queue = await createQueue(sqs, 'std-same-key');
    await send(queue, ['{"orderId":"d-1"}', '{"orderId":"d-1","resent":true}']);
    const given: string[][] = [];
    let failing = true;
    const handler = middy<SQSEvent, SQSBatchResponse>()
      .use(consumerIdempotency(options('same-key')))
      .handler(async (event) => {
        given.push(event.Records.map((r) => r.messageId));
        return {
          batchItemFailures: failing ? event.Records.map((r) => ({ itemIdentifier: r.messageId })) : [],
        };
      });
    const batch = await receiveAll(sqs, queue, 2);
    const first = await deliver(sqs, queue, handler, batch);
    expect(given).toEqual([[batch[0]?.MessageId]]);
    expect(first.retried.sort()).toEqual(batch.map((m) => m.MessageId).sort()); // the follower fails with it
    failing = false;
    const again = await receiveAll(sqs, queue, 2);
    const second = await deliver(sqs, queue, handler, again);
    expect(given).toHaveLength(2);
    expect(given[1]).toHaveLength(1);
    expect([second.deleted.length, consumerIdempotencyState(second.context)?.skipped]).toEqual([
      2,
      again.map((m) => m.MessageId).filter((id) => id !== given[1]?.[0]),
    ]);
  });

  it('keeps the rest of a FIFO group from the handler when a record of it fails before the handler runs', async () => {
    const queue = await createQueue(sqs, 'orders-busy.fifo');
    await send(queue, ['{"orderId":"g-1"}', '{"orderId":"g-2"}', '{"orderId":"h-1"}'], (body) =>
      body.includes('"g-') ? 'g' : 'h',
    );
    // Another invocation holds g-1 (a concurrent duplicate delivery still being processed).
    const now = Math.floor(Date.now() / 1000);
    const store = createProcessedKeyStore({ tableName: stack.tableName });
    const held = {
      consumer: 'fifo-busy',
      key: 'g-1',
      keySource: 'jsonPath',
      lineage: null,
      messageId: 'other',
      token: 't',
      until: now + 300,
    } as const;
    expect(await store.claim(held, now)).toEqual({ status: 'claimed' });
    const given: string[] = [];
    const handler = fifoProcessorHandler(async (record) => {
      given.push(orderOf(record));
    }, options('fifo-busy'));
    const batch = await receiveAll(sqs, queue, 3);
    const delivery = await deliver(sqs, queue, handler, batch);
    expect(given).toEqual(['h-1']);
    expect(delivery.response?.batchItemFailures.map((f) => f.itemIdentifier)).toEqual([
      idOf(batch, 'g-1'),
      idOf(batch, 'g-2'),
    ]);
    expect(await statusOf('fifo-busy', 'g-2')).toEqual([]); // its claim was given back
  });
});
