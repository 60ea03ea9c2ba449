/**
 * Conformance of the SQS stand-in (local-aws-sqs with local/aws-standins/sqs-indexed.ts's edits,
 * behind the proxy of sqs-kms.ts, as `startLocalStack()` starts it) to what the SQS documentation
 * says of FIFO queues. Each test is one documented behaviour the product relies on, its page in
 * the `describe` or a `@see` above the test.
 */
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { sqsClient } from '#platform/clients.js';
import { sleep } from '#platform/sleep.js';
import { depth, errorOf, queue, receive, useStack } from './sqs-support.js';

useStack();

const send = (url: string, body: string, group: string, dedup?: string) =>
  sqsClient().send(
    new SendMessageCommand({
      QueueUrl: url,
      MessageBody: body,
      MessageGroupId: group,
      ...(dedup ? { MessageDeduplicationId: dedup } : {}),
    }),
  );
const receiveAndDelete = async (url: string) => {
  const got = await receive(url);
  for (const m of got)
    await sqsClient().send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
  return got.map((m) => m.Body);
};

describe('FIFO deduplication, 5-minute interval (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-key-terms.html, using-messagededuplicationid-property.html)', () => {
  it('drops a message re-sent with the same deduplication id after the first copy was received and deleted', async () => {
    const { url } = await queue('dedup-deleted.fifo');
    await send(url, 'first', 'g', 'order-1');
    expect(await receiveAndDelete(url)).toEqual(['first']);
    // "Amazon SQS continues tracking the deduplication ID even after the message has been
    // received and deleted": the resend is accepted and not delivered.
    const resend = await send(url, 'second', 'g', 'order-1');
    expect(resend.MessageId).toBeTruthy();
    expect(await receive(url)).toEqual([]);
    expect(await depth(url)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('drops a resend while the first copy is still in the queue, and delivers a new id', async () => {
    const { url } = await queue('dedup-queued.fifo');
    await send(url, 'first', 'g', 'order-1');
    await send(url, 'again', 'g', 'order-1');
    await send(url, 'other', 'g', 'order-2');
    expect((await receive(url)).map((m) => m.Body)).toEqual(['first', 'other']);
  });

  it('with content-based deduplication, drops the same body re-sent after the first was deleted', async () => {
    const { url } = await queue('dedup-content.fifo', { ContentBasedDeduplication: 'true' });
    await send(url, '{"order":7}', 'g');
    expect(await receiveAndDelete(url)).toEqual(['{"order":7}']);
    await send(url, '{"order":7}', 'g');
    await send(url, '{"order":8}', 'g');
    expect(await receiveAndDelete(url)).toEqual(['{"order":8}']);
  });

  it('SendMessageBatch deduplicates against deleted messages too', async () => {
    const { url } = await queue('dedup-batch.fifo');
    await send(url, 'first', 'g', 'order-1');
    await receiveAndDelete(url);
    await sqsClient().send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: 'a', MessageBody: 'dup', MessageGroupId: 'g', MessageDeduplicationId: 'order-1' },
          { Id: 'b', MessageBody: 'new', MessageGroupId: 'g', MessageDeduplicationId: 'order-2' },
        ],
      }),
    );
    expect(await receiveAndDelete(url)).toEqual(['new']);
  });

  it('with DeduplicationScope messageGroup, the same id in another group is delivered', async () => {
    const { url } = await queue('dedup-group.fifo', {
      DeduplicationScope: 'messageGroup',
      FifoThroughputLimit: 'perMessageGroupId',
    });
    await send(url, 'a', 'g1', 'order-1');
    await receiveAndDelete(url);
    await send(url, 'a-again', 'g1', 'order-1');
    await send(url, 'b', 'g2', 'order-1');
    expect(await receiveAndDelete(url)).toEqual(['b']);
  });
});

describe('FIFO message groups (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-understanding-logic.html)', () => {
  it('returns nothing more of a group while one of its messages is in flight, and the next once it is deleted', async () => {
    const { url } = await queue('groups.fifo');
    await send(url, 'a1', 'A', 'a1');
    await send(url, 'a2', 'A', 'a2');
    await send(url, 'b1', 'B', 'b1');
    const [a1] = await receive(url, { max: 1 });
    expect(a1?.Body).toBe('a1');
    expect((await receive(url)).map((m) => m.Body)).toEqual(['b1']);
    await sqsClient().send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: a1?.ReceiptHandle }));
    expect((await receive(url)).map((m) => m.Body)).toEqual(['a2']);
  });

  it('hands a released group out again from its first message, in order', async () => {
    const { url } = await queue('groups-release.fifo');
    for (const n of [1, 2, 3]) await send(url, `a${n}`, 'A', `a${n}`);
    const first = await receive(url);
    expect(first.map((m) => m.Body)).toEqual(['a1', 'a2', 'a3']);
    for (const m of first)
      await sqsClient().send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: url,
          ReceiptHandle: m.ReceiptHandle,
          VisibilityTimeout: 0,
        }),
      );
    expect((await receive(url)).map((m) => m.Body)).toEqual(['a1', 'a2', 'a3']);
  });
});

describe('FIFO DeleteMessage (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessage.html)', () => {
  it('T04: refuses a delete whose receipt handle expired with the visibility timeout, and the message stays', async () => {
    const { url } = await queue('delete-expired.fifo');
    await send(url, 'm1', 'g', 'm1');
    const [m] = await receive(url, { visibility: 1 });
    await sleep(1_500);
    const refused = sqsClient().send(
      new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m?.ReceiptHandle }),
    );
    await expect(refused).rejects.toThrow(/receipt handle has expired/);
    expect(await errorOf(refused)).toBe('InvalidParameterValue');
    expect((await receive(url)).map((x) => x.Body)).toEqual(['m1']);
  });
});
