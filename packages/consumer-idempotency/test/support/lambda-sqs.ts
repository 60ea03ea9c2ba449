/**
 * Runs a consumer handler the way Lambda's SQS event source mapping does, against the local SQS
 * stand-in: receive a batch, invoke the handler with an `SQSEvent`, delete what it did not report
 * as failed, and make the failures visible again (they count toward maxReceiveCount). A handler
 * that throws fails the whole batch: nothing is deleted.
 *
 * @see https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
 */
import {
  ChangeMessageVisibilityBatchCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { lambdaContext } from '../../../../local/lambda-context.js';
import { sqsRecordOf } from '../../../../local/sqs-event.js';
import { scaled } from '../../../../test/support/timeouts.js';

/** A queue of the local stand-in. */
export interface Queue {
  url: string;
  arn: string;
}

/** Creates a queue (FIFO when the name ends in `.fifo`). */
export async function createQueue(sqs: SQSClient, name: string): Promise<Queue> {
  const fifo = name.endsWith('.fifo');
  const out = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: fifo ? { FifoQueue: 'true', ContentBasedDeduplication: 'false' } : {},
    }),
  );
  const region = process.env.AWS_REGION ?? 'us-east-1';
  return { url: out.QueueUrl as string, arn: `arn:aws:sqs:${region}:123456789012:${name}` };
}

/** Receives up to 10 messages with every attribute, held for 30 s. */
export async function receive(sqs: SQSClient, queue: Queue): Promise<Message[]> {
  const out = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queue.url,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 1,
      VisibilityTimeout: 30,
      MessageAttributeNames: ['All'],
      AttributeNames: ['All'],
      MessageSystemAttributeNames: ['All'],
    }),
  );
  return out.Messages ?? [];
}

type Handler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/** What one delivery did. */
export interface Delivery {
  context: Context;
  response?: SQSBatchResponse;
  error?: unknown;
  /** MessageIds deleted (processed or skipped). */
  deleted: string[];
  /** MessageIds returned to the queue. */
  retried: string[];
}

/** Invokes `handler` with `messages` as one batch and settles them as the event source mapping would. */
export async function deliver(
  sqs: SQSClient,
  queue: Queue,
  handler: Handler,
  messages: Message[],
): Promise<Delivery> {
  const context = lambdaContext({ functionName: 'Consumer', timeoutMs: scaled(30_000) });
  const event: SQSEvent = { Records: messages.map((m) => sqsRecordOf(m, queue.arn)) };
  const delivery: Delivery = { context, deleted: [], retried: [] };
  try {
    delivery.response = await handler(event, context);
  } catch (error) {
    delivery.error = error;
  }
  const failed = delivery.response
    ? new Set(delivery.response.batchItemFailures.map((f) => f.itemIdentifier))
    : new Set(messages.map((m) => m.MessageId as string));
  const done = messages.filter((m) => !failed.has(m.MessageId as string));
  const again = messages.filter((m) => failed.has(m.MessageId as string));
  if (done.length > 0)
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle as string })),
      }),
    );
  if (again.length > 0)
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queue.url,
        Entries: again.map((m, i) => ({
          Id: String(i),
          ReceiptHandle: m.ReceiptHandle as string,
          VisibilityTimeout: 0,
        })),
      }),
    );
  delivery.deleted = done.map((m) => m.MessageId as string);
  delivery.retried = again.map((m) => m.MessageId as string);
  return delivery;
}

/** Receives until `count` messages are held (SQS may return fewer than asked per receive). */
export async function receiveAll(sqs: SQSClient, queue: Queue, count: number): Promise<Message[]> {
  const held: Message[] = [];
  for (let attempt = 0; held.length < count && attempt < 30; attempt++)
    held.push(...(await receive(sqs, queue)));
  if (held.length !== count)
    throw new Error(`expected ${count} messages in ${queue.url}, received ${held.length}`);
  return held;
}
