/**
 * Support for the SQS conformance tests: one local stack per file, as `npm start` starts it, and
 * small helpers that speak to it only through the SDK (what a test asserts is what a client sees).
 */
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll } from 'vitest';
import { sqsClient } from '#platform/clients.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';

/** Starts the local stack (defaults) for the file; the getter returns it inside a test. */
export function useStack(): () => LocalStack {
  let stack: LocalStack | undefined;
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });
  return () => {
    if (!stack) throw new Error('the local stack has not started');
    return stack;
  };
}

let counter = 0;
/** A queue of a name unique in the file; `.fifo` queues get `FifoQueue`. */
export async function queue(
  name: string,
  attributes: Record<string, string> = {},
): Promise<{ url: string; arn: string }> {
  const unique = `${name.replace(/\.fifo$/, '')}-${++counter}${name.endsWith('.fifo') ? '.fifo' : ''}`;
  const fifo = unique.endsWith('.fifo') ? { FifoQueue: 'true' } : {};
  const { QueueUrl } = await sqsClient().send(
    new CreateQueueCommand({ QueueName: unique, Attributes: { ...fifo, ...attributes } }),
  );
  const url = QueueUrl as string;
  return { url, arn: await attribute(url, 'QueueArn') };
}

/** One attribute of a queue. */
export async function attribute(url: string, name: string): Promise<string> {
  const out = await sqsClient().send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: [name as never] }),
  );
  return (out.Attributes as Record<string, string> | undefined)?.[name] ?? '';
}

/** The queue's visible and in-flight counts, as GetQueueAttributes reports them. */
export async function depth(url: string): Promise<{ visible: number; inFlight: number }> {
  const out = await sqsClient().send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(out.Attributes?.ApproximateNumberOfMessages),
    inFlight: Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible),
  };
}

/** One ReceiveMessage with every system attribute, `visibility` seconds. */
export async function receive(
  url: string,
  options: { max?: number; visibility?: number; wait?: number; sqs?: SQSClient } = {},
): Promise<Message[]> {
  const out = await (options.sqs ?? sqsClient()).send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: options.max ?? 10,
      VisibilityTimeout: options.visibility ?? 30,
      WaitTimeSeconds: options.wait ?? 0,
      AttributeNames: ['All'],
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    }),
  );
  return out.Messages ?? [];
}

/** The error name (SDK `name`) a call rejects with, or 'none'. */
export async function errorOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'none';
  } catch (error) {
    return (error as Error).name;
  }
}
