/**
 * The demo consumer of the source queue. It fails on poison payloads every time, and on every
 * message while its dependency is down (an outage window), so healthy messages dead-letter too.
 *
 * Like consumers that want a triageable DLQ, it records why a message failed: on the first failure
 * it re-sends the message with `error-class` / `error-message` attributes and deletes the
 * original, so the copy that SQS dead-letters after `maxReceiveCount` receives carries its reason.
 * Successful messages are deleted; a message whose key was already processed is skipped
 * (consumer-side idempotency), which is what makes a redrive duplicate harmless.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 */
import {
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { readJsonPath } from '../../functions/shared/idempotency-key.js';
import { isPoison } from './producer.js';

/** Records which idempotency keys were processed (the consumer side of duplicate protection). */
export interface ProcessedKeys {
  /** True when `key` was already processed (the message is then skipped and deleted). */
  alreadyProcessed(key: string): Promise<boolean>;
  markProcessed(key: string): Promise<void>;
}

/** An in-memory {@link ProcessedKeys}. */
export function memoryProcessedKeys(): ProcessedKeys & { keys: Set<string> } {
  const keys = new Set<string>();
  return {
    keys,
    alreadyProcessed: async (key) => keys.has(key),
    markProcessed: async (key) => {
      keys.add(key);
    },
  };
}

/** Options of {@link DemoConsumer}. */
export interface ConsumerOptions {
  sqs: SQSClient;
  queueUrl: string;
  /** Where the producer's id lives in the body. @default '$.orderId' */
  keyPath?: string;
  /** The dependency goes down after this many messages were processed. @default never */
  outageAfterProcessed?: number;
  processedKeys?: ProcessedKeys;
  /** Parallel receive loops. @default 2 */
  concurrency?: number;
  /** Long-poll wait, seconds. @default 1 */
  waitTimeSeconds?: number;
}

/** Counters of a consumer run. */
export interface ConsumerStats {
  /** Messages processed successfully (first time for their key). */
  processed: number;
  /** Messages skipped because their key was already processed. */
  duplicatesSkipped: number;
  /** Failed attempts (each receive that failed). */
  failedAttempts: number;
  /** Keys processed more than once (must stay 0). */
  processedTwice: number;
}

/** One message as the consumer received it (every receive, redeliveries included). */
export interface Delivery {
  messageId: string;
  /** The producer's id (`$.orderId`). */
  key: string;
  /** The pipeline's `idempotency-key` attribute: set on copies the pipeline sent (sample, park). */
  pipelineKey: string | null;
  /** The pipeline's `redrive-id` attribute. */
  redriveId: string | null;
}

const ERROR_CLASS = 'error-class';
const ERROR_MESSAGE = 'error-message';

class ConsumerFailure extends Error {
  public constructor(
    public readonly errorClass: string,
    message: string,
  ) {
    super(message);
  }
}

/** A consumer of the demo's source queue; `start()` then `stop()`. */
export class DemoConsumer {
  public readonly stats: ConsumerStats = {
    processed: 0,
    duplicatesSkipped: 0,
    failedAttempts: 0,
    processedTwice: 0,
  };
  /** Every receive, in order. */
  public readonly deliveries: Delivery[] = [];
  private outage = false;
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly seen = new Map<string, number>();
  private readonly keys: ProcessedKeys;

  public constructor(private readonly options: ConsumerOptions) {
    this.keys = options.processedKeys ?? memoryProcessedKeys();
  }

  /** True while the dependency is down. */
  public get dependencyDown(): boolean {
    return this.outage;
  }

  /** Takes the dependency down (every message fails). */
  public startOutage(): void {
    this.outage = true;
  }

  /** Brings the dependency back (the fix is deployed). */
  public endOutage(): void {
    this.outage = false;
  }

  /** Starts the receive loops. */
  public start(): void {
    if (this.running) return;
    this.running = true;
    for (let i = 0; i < (this.options.concurrency ?? 2); i++) this.loops.push(this.loop());
  }

  /** Stops receiving and waits for in-flight batches to finish. */
  public async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    this.loops = [];
  }

  private async loop(): Promise<void> {
    const { sqs, queueUrl } = this.options;
    while (this.running) {
      let messages: Message[] = [];
      try {
        const out = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: this.options.waitTimeSeconds ?? 1,
            MessageAttributeNames: ['All'],
            AttributeNames: ['All'],
            MessageSystemAttributeNames: ['ApproximateReceiveCount'],
          }),
        );
        messages = out.Messages ?? [];
      } catch {
        if (!this.running) return;
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      const done: Message[] = [];
      for (const message of messages) {
        if (await this.handle(message)) done.push(message);
      }
      if (done.length > 0)
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle as string })),
          }),
        );
    }
  }

  /** Returns true when the message should be deleted (processed or skipped). */
  private async handle(message: Message): Promise<boolean> {
    const body = message.Body ?? '';
    const key = readJsonPath(body, this.options.keyPath ?? '$.orderId') ?? message.MessageId ?? '';
    this.deliveries.push({
      messageId: message.MessageId ?? '',
      key,
      pipelineKey: message.MessageAttributes?.['idempotency-key']?.StringValue ?? null,
      redriveId: message.MessageAttributes?.['redrive-id']?.StringValue ?? null,
    });
    try {
      if (await this.keys.alreadyProcessed(key)) {
        this.stats.duplicatesSkipped += 1;
        return true;
      }
      if (isPoison(body)) throw new ConsumerFailure('ValidationError', 'quantity: expected a number');
      if (this.outage)
        throw new ConsumerFailure('DependencyUnavailable', 'inventory service unavailable (503)');
      await this.keys.markProcessed(key);
      const times = (this.seen.get(key) ?? 0) + 1;
      this.seen.set(key, times);
      if (times > 1) this.stats.processedTwice += 1;
      this.stats.processed += 1;
      const after = this.options.outageAfterProcessed;
      if (after !== undefined && this.stats.processed === after) this.startOutage();
      return true;
    } catch (error) {
      this.stats.failedAttempts += 1;
      if (error instanceof ConsumerFailure && !message.MessageAttributes?.[ERROR_CLASS]) {
        await this.annotate(message, error);
      }
      return false;
    }
  }

  /** Re-sends the message with its failure reason and deletes the unannotated original. */
  private async annotate(message: Message, failure: ConsumerFailure): Promise<void> {
    const { sqs, queueUrl } = this.options;
    const attributes: Record<string, MessageAttributeValue> = { ...(message.MessageAttributes ?? {}) };
    attributes[ERROR_CLASS] = { DataType: 'String', StringValue: failure.errorClass };
    attributes[ERROR_MESSAGE] = { DataType: 'String', StringValue: failure.message };
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: message.Body ?? '',
        MessageAttributes: attributes,
      }),
    );
    await sqs.send(
      new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle as string }),
    );
  }
}
