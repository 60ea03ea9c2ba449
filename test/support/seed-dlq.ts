/**
 * Test support: a source queue (or several) with a DLQ, filled the way production fills it, by a
 * REAL failing consumer: it receives from the source queue and never deletes, so SQS itself moves
 * each message to the DLQ after `maxReceiveCount` receives (RedrivePolicy). Nothing is sent to the
 * DLQ directly unless asked (`sendStraightToDlq`).
 *
 * Queues are created with `MaximumMessageSize` 1048576 (1 MiB, the current SQS quota).
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 */
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { queueDepth as demoQueueDepth } from '../../local/demo/queues.js';

/** One message to seed. */
export interface SeedMessage {
  body: string;
  attributes?: Record<string, MessageAttributeValue>;
  /** Index into `sourceNames` (default 0). */
  source?: number;
  /** FIFO only. */
  groupId?: string;
}

/** Options of {@link seedDlq}. */
export interface SeedDlqOptions {
  sqs: SQSClient;
  dlqName: string;
  /** One or more source queues sharing the DLQ. */
  sourceNames: string[];
  messages: SeedMessage[];
  /** @default 3 */
  maxReceiveCount?: number;
  /** Extra DLQ attributes (e.g. MessageRetentionPeriod, RedrivePolicy). */
  dlqAttributes?: Record<string, string>;
  /** Messages sent straight to the DLQ (no DeadLetterQueueSourceArn). */
  sendStraightToDlq?: SeedMessage[];
  /** Give up after this long, milliseconds. @default 30000 */
  timeoutMs?: number;
}

/** What {@link seedDlq} built. */
export interface SeededDlq {
  dlqUrl: string;
  dlqArn: string;
  sources: Array<{ name: string; url: string; arn: string }>;
  /** Receives the failing consumer made. */
  consumerReceives: number;
}

const MAX_SIZE = '1048576';

async function arnOf(sqs: SQSClient, url: string): Promise<string> {
  const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  const arn = out.Attributes?.QueueArn;
  if (!arn) throw new Error(`no QueueArn for ${url}`);
  return arn;
}

/** Visible and in-flight messages of a queue: the demo's helper. */
export async function queueDepth(
  sqs: SQSClient,
  url: string,
): Promise<{ visible: number; inFlight: number }> {
  const { visible, inFlight } = await demoQueueDepth(sqs, url);
  return { visible, inFlight };
}

/**
 * Creates the queues, sends the messages to their source queues and runs a consumer that fails
 * every message until SQS has dead-lettered all of them.
 *
 * @throws Error when the DLQ does not reach the expected depth within `timeoutMs`.
 */
export async function seedDlq(options: SeedDlqOptions): Promise<SeededDlq> {
  const { sqs } = options;
  const fifo = options.dlqName.endsWith('.fifo');
  const fifoAttrs: Record<string, string> = fifo ? { FifoQueue: 'true' } : {};
  const dlq = await sqs.send(
    new CreateQueueCommand({
      QueueName: options.dlqName,
      Attributes: { MaximumMessageSize: MAX_SIZE, ...fifoAttrs, ...(options.dlqAttributes ?? {}) },
    }),
  );
  const dlqUrl = dlq.QueueUrl as string;
  const dlqArn = await arnOf(sqs, dlqUrl);
  const sources: SeededDlq['sources'] = [];
  for (const name of options.sourceNames) {
    const created = await sqs.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: {
          MaximumMessageSize: MAX_SIZE,
          VisibilityTimeout: '0',
          ...fifoAttrs,
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: dlqArn,
            maxReceiveCount: options.maxReceiveCount ?? 3,
          }),
        },
      }),
    );
    const url = created.QueueUrl as string;
    sources.push({ name, url, arn: await arnOf(sqs, url) });
  }

  const send = async (url: string, batch: SeedMessage[]) => {
    for (let i = 0; i < batch.length; i += 10) {
      const slice = batch.slice(i, i + 10);
      // One big message per request: SendMessageBatch caps the whole request at 1 MiB.
      const small = slice.every((m) => Buffer.byteLength(m.body) < 90_000);
      if (small) {
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: url,
            Entries: slice.map((m, j) => ({
              Id: String(j),
              MessageBody: m.body,
              ...(m.attributes ? { MessageAttributes: m.attributes } : {}),
              ...(fifo
                ? { MessageGroupId: m.groupId ?? 'g', MessageDeduplicationId: `${i + j}-${Date.now()}` }
                : {}),
            })),
          }),
        );
      } else {
        for (const [j, m] of slice.entries()) {
          await sqs.send(
            new SendMessageCommand({
              QueueUrl: url,
              MessageBody: m.body,
              ...(m.attributes ? { MessageAttributes: m.attributes } : {}),
              ...(fifo
                ? { MessageGroupId: m.groupId ?? 'g', MessageDeduplicationId: `${i + j}-${Date.now()}` }
                : {}),
            }),
          );
        }
      }
    }
  };
  // A second seeding of the same DLQ (messages that dead-letter after an inventory) waits for its
  // own messages, not for the depth the DLQ already had.
  const before = (await queueDepth(sqs, dlqUrl)).visible;
  for (const [index, source] of sources.entries()) {
    await send(
      source.url,
      options.messages.filter((m) => (m.source ?? 0) === index),
    );
  }

  // The failing consumer: receive, "crash" (no delete), repeat. VisibilityTimeout 0 makes each
  // failure visible again at once; SQS moves a message to the DLQ once its receive count passes
  // maxReceiveCount.
  const expected = before + options.messages.length;
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let consumerReceives = 0;
  for (;;) {
    let received = 0;
    for (const source of sources) {
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: source.url,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 0,
          WaitTimeSeconds: 0,
        }),
      );
      consumerReceives++;
      received += out.Messages?.length ?? 0;
    }
    const depth = await queueDepth(sqs, dlqUrl);
    if (depth.visible >= expected && received === 0) break;
    if (Date.now() > deadline)
      throw new Error(
        `seedDlq: only ${depth.visible - before}/${expected - before} messages reached ${options.dlqName}`,
      );
  }
  if (options.sendStraightToDlq?.length) await send(dlqUrl, options.sendStraightToDlq);
  return { dlqUrl, dlqArn, sources, consumerReceives };
}
