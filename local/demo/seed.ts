/**
 * `--dlq-depth N`: fills the DLQ straight, without the slow consumer rounds, through the same
 * dead-lettering: the orders are sent to the source queue carrying the failure reason the demo
 * consumer would have attached (`error-class` / `error-message`: poison payloads fail validation,
 * the others the dependency outage), and a failing receiver receives them with visibility
 * timeout 0 until SQS's RedrivePolicy has moved every one to the DLQ (so each carries
 * DeadLetterQueueSourceArn, as in production). A 100,000-message DLQ takes minutes this way instead
 * of the hours three consumer rounds of one-second visibility timeouts would.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 */
import { ReceiveMessageCommand, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { order, type Produced } from './producer.js';
import { queueDepth } from './queues.js';

/** Options of {@link seedDeadLetters}. */
export interface SeedOptions {
  /** Messages to dead-letter. */
  count: number;
  /** Every n-th message is poison (0: none). @default 20 */
  poisonEvery?: number;
  /** Order id prefix. @default 'order' */
  prefix?: string;
  /** Told how many messages are in the DLQ, now and then. */
  onProgress?: (deadLettered: number) => void;
  /** Give up after this long, milliseconds. @default 1800000 */
  timeoutMs?: number;
  /** Parallel senders and receivers. @default 4 */
  concurrency?: number;
}

/** The failure reasons the demo consumer attaches (local/demo/consumer.ts). */
const POISON_FAILURE = { errorClass: 'ValidationError', message: 'quantity: expected a number' };
const OUTAGE_FAILURE = {
  errorClass: 'DependencyUnavailable',
  message: 'inventory service unavailable (503)',
};

/**
 * Sends `count` orders to the source queue and dead-letters every one of them.
 *
 * @param queues - the source queue (with a RedrivePolicy to its DLQ) and that DLQ.
 * @throws Error when the DLQ does not hold `count` messages within `timeoutMs`.
 */
export async function seedDeadLetters(
  sqs: SQSClient,
  queues: { sourceUrl: string; dlqUrl: string },
  options: SeedOptions,
): Promise<Produced> {
  const concurrency = options.concurrency ?? 4;
  const orderIds: string[] = [];
  const poisonIds: string[] = [];
  const bodies: Record<string, string> = {};
  let sent = 0;
  let done = false;
  const sender = async () => {
    while (sent < options.count) {
      const start = sent;
      sent = Math.min(options.count, sent + 10);
      const entries = [];
      for (let i = start; i < sent; i++) {
        const { id, poison, body } = order(i, options);
        orderIds[i] = id;
        bodies[id] = body;
        if (poison) poisonIds.push(id);
        const failure = poison ? POISON_FAILURE : OUTAGE_FAILURE;
        entries.push({
          Id: String(i - start),
          MessageBody: body,
          MessageAttributes: {
            'content-type': { DataType: 'String', StringValue: 'application/json' },
            'error-class': { DataType: 'String', StringValue: failure.errorClass },
            'error-message': { DataType: 'String', StringValue: failure.message },
          },
        });
      }
      const out = await sqs.send(
        new SendMessageBatchCommand({ QueueUrl: queues.sourceUrl, Entries: entries }),
      );
      if (out.Failed && out.Failed.length > 0)
        throw new Error(
          `SendMessageBatch failed for ${out.Failed.length} entries: ${out.Failed[0]?.Message}`,
        );
    }
  };
  // The failing receiver: every receive counts toward maxReceiveCount; visibility 0 hands the
  // message back at once, so SQS dead-letters it after maxReceiveCount receives.
  const receiver = async () => {
    while (!done) {
      await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queues.sourceUrl,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 0,
          WaitTimeSeconds: 1,
        }),
      );
    }
  };
  const deadline = Date.now() + (options.timeoutMs ?? 1_800_000);
  const watch = async () => {
    try {
      for (;;) {
        const depth = await queueDepth(sqs, queues.dlqUrl);
        options.onProgress?.(depth.visible);
        if (depth.visible >= options.count) return;
        if (Date.now() > deadline)
          throw new Error(`seeding: only ${depth.visible}/${options.count} messages reached the DLQ`);
        await new Promise((r) => setTimeout(r, 500));
      }
    } finally {
      done = true;
    }
  };
  await Promise.all([
    ...Array.from({ length: concurrency }, sender),
    ...Array.from({ length: concurrency }, receiver),
    watch(),
  ]);
  return { orderIds, poisonIds, bodies };
}
