/**
 * Conformance of the SQS stand-in, as `startLocalStack()` starts it, to what the SQS documentation
 * says of receive counts, queue counts, dead-lettering, message sizes and KMS-encrypted queues.
 * Each test is one documented behaviour the product relies on, its page in the `describe` or a
 * `@see` above the test.
 */

import { CreateKeyCommand, DisableKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  type Message,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { sqsClient } from '#platform/clients.js';
import { sleep } from '#platform/sleep.js';
import { depth, errorOf, queue, receive, useStack } from './sqs-support.js';

useStack();

const send = (url: string, body: string) =>
  sqsClient().send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));
const release = (url: string, handle: string | undefined, seconds = 0) =>
  sqsClient().send(
    new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: handle, VisibilityTimeout: seconds }),
  );
const receiveCount = (m: Message | undefined) => Number(m?.Attributes?.ApproximateReceiveCount);

/** A source queue dead-lettering to a DLQ after `maxReceiveCount` receives. */
async function withDlq(name: string, maxReceiveCount: number, fifo = false) {
  const suffix = fifo ? '.fifo' : '';
  const dlq = await queue(`${name}-dlq${suffix}`);
  const source = await queue(`${name}${suffix}`, {
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount }),
  });
  return { dlq, source };
}

/** Receives the queue's `count` messages `times` times (visibility 0), then lets SQS move them. */
async function exhaust(url: string, times: number, count = 1) {
  for (let i = 0; i < times; i++) expect(await receive(url, { visibility: 0, wait: 1 })).toHaveLength(count);
  // The receive that would exceed maxReceiveCount moves the message instead of returning it.
  expect(await receive(url, { visibility: 0, wait: 1 })).toEqual([]);
}

describe('ApproximateReceiveCount (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html, APIReference/API_ReceiveMessage.html)', () => {
  it('counts receives only: changing the visibility timeout, to 0 (a release) or longer, is not a receive', async () => {
    const { url } = await queue('count-release');
    await send(url, 'm');
    const [first] = await receive(url);
    expect(receiveCount(first)).toBe(1);
    await release(url, first?.ReceiptHandle, 60);
    await release(url, first?.ReceiptHandle, 0);
    const [second] = await receive(url);
    expect(receiveCount(second)).toBe(2);
  });

  it('a release does not push a message past maxReceiveCount: received max times, released each time, it is still in the source', async () => {
    const { source, dlq } = await withDlq('count-release-policy', 3);
    await send(source.url, 'm');
    for (let i = 1; i <= 3; i++) {
      const [m] = await receive(source.url);
      expect(receiveCount(m)).toBe(i);
      if (i < 3) await release(source.url, m?.ReceiptHandle);
    }
    expect(await depth(dlq.url)).toEqual({ visible: 0, inFlight: 0 });
  });

  /**
   * SQS keeps a message's receive count when it dead-letters it: a DLQ receive continues from the
   * source's count (a DLQ with its own RedrivePolicy moves such a message onward at its next receive).
   * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
   * @see https://github.com/localstack/localstack/pull/10425 (LocalStack's reset to 0 named a limitation and fixed)
   */
  it('carries the receive count into the DLQ when it dead-letters a message', async () => {
    const { source, dlq } = await withDlq('count-carried', 2);
    const sent = await send(source.url, 'm');
    await exhaust(source.url, 2);
    const [moved] = await receive(dlq.url, { wait: 2 });
    expect(moved?.MessageId).toBe(sent.MessageId);
    expect(receiveCount(moved)).toBe(3);
    expect(moved?.Attributes?.DeadLetterQueueSourceArn).toBe(source.arn);
  });
});

describe('FIFO dead-lettering (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html)', () => {
  it("replaces the deduplication id with the message's id in a FIFO DLQ, so two messages sharing an id both arrive", async () => {
    const { source, dlq } = await withDlq('fifo-dl', 1, true);
    const ids: string[] = [];
    for (const [n, dedup] of [
      [1, 'shared'],
      [2, 'other'],
    ] as const) {
      const out = await sqsClient().send(
        new SendMessageCommand({
          QueueUrl: source.url,
          MessageBody: `m${n}`,
          MessageGroupId: `g${n}`,
          MessageDeduplicationId: dedup,
        }),
      );
      ids.push(out.MessageId as string);
    }
    await exhaust(source.url, 1, 2);
    const moved = await receive(dlq.url, { wait: 2 });
    expect(moved.map((m) => [m.MessageId, m.Attributes?.MessageDeduplicationId])).toEqual(
      ids.map((id) => [id, id]),
    );
  });
});

describe('ApproximateNumberOfMessages (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html, APIReference/API_GetQueueAttributes.html)', () => {
  it('counts visible messages only; in-flight ones are ApproximateNumberOfMessagesNotVisible', async () => {
    const { url } = await queue('count-visible');
    for (const n of [1, 2, 3]) await send(url, `m${n}`);
    expect(await receive(url, { max: 1 })).toHaveLength(1);
    expect(await depth(url)).toEqual({ visible: 2, inFlight: 1 });
  });
});

describe('message size in bytes (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html, sqs-message-attributes.html)', () => {
  const MAX = 1024;
  const sized = () => queue('size', { MaximumMessageSize: String(MAX) });

  it('counts the body in UTF-8 bytes: a body of exactly MaximumMessageSize bytes is accepted, one byte more refused', async () => {
    const { url } = await sized();
    const twoByte = 'é'.repeat(MAX / 2); // 1024 bytes in 512 characters
    expect(await errorOf(send(url, twoByte))).toBe('none');
    expect(await errorOf(send(url, `${twoByte}x`))).toBe('InvalidParameterValue');
    expect(await errorOf(send(url, 'é'.repeat(MAX / 2 + 1)))).toBe('InvalidParameterValue');
  });

  it('counts a binary attribute by its raw bytes, with its name and data type', async () => {
    const { url } = await sized();
    const raw = new Uint8Array(600).fill(7); // 800 characters in base64
    const attributes = { b: { DataType: 'Binary', BinaryValue: raw } };
    const body = (bytes: number) => 'x'.repeat(bytes - raw.length - 'b'.length - 'Binary'.length);
    const withBody = (bytes: number) =>
      sqsClient().send(
        new SendMessageCommand({ QueueUrl: url, MessageBody: body(bytes), MessageAttributes: attributes }),
      );
    expect(await errorOf(withBody(MAX))).toBe('none');
    expect(await errorOf(withBody(MAX + 1))).toBe('InvalidParameterValue');
  });

  it('SendMessageBatch refuses the one entry over the limit by bytes and sends the rest', async () => {
    const { url } = await sized();
    const out = await sqsClient().send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: 'fits', MessageBody: 'é'.repeat(MAX / 2) },
          { Id: 'over', MessageBody: 'é'.repeat(MAX / 2 + 1) },
        ],
      }),
    );
    expect(out.Successful?.map((e) => e.Id)).toEqual(['fits']);
    expect(out.Failed?.map((e) => [e.Id, e.Code])).toEqual([['over', 'InvalidParameterValue']]);
  });
});

describe('KMS-encrypted queues (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-key-management.html, APIReference/API_ReceiveMessage.html#API_ReceiveMessage_Errors)', () => {
  it('refuses SendMessage and ReceiveMessage with KmsDisabled when the queue key is disabled, and serves them when usable', async () => {
    const kms = new KMSClient({});
    const keyId = (await kms.send(new CreateKeyCommand({}))).KeyMetadata?.KeyId as string;
    const { url } = await queue('kms', { KmsMasterKeyId: keyId });
    expect(await errorOf(send(url, 'before'))).toBe('none');
    expect((await receive(url)).map((m) => m.Body)).toEqual(['before']);
    await kms.send(new DisableKeyCommand({ KeyId: keyId }));
    expect(await errorOf(send(url, 'after'))).toBe('KmsDisabled');
    expect(await errorOf(receive(url))).toBe('KmsDisabled');
    kms.destroy();
  });
});

describe('DeleteMessage on a standard queue (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessage.html)', () => {
  it('deletes with the latest receipt handle; the message is gone', async () => {
    const { url } = await queue('delete-std');
    await send(url, 'm');
    const [m] = await receive(url, { visibility: 1 });
    await sleep(1_200);
    const [again] = await receive(url);
    await sqsClient().send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: again?.ReceiptHandle }));
    expect(m?.MessageId).toBe(again?.MessageId);
    expect(await depth(url)).toEqual({ visible: 0, inFlight: 0 });
  });
});
