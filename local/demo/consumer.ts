/**
 * The demo consumer of the source queue, run the way Lambda runs an SQS consumer: a local event
 * source mapping receives batches of up to 10 and invokes a middy handler with an `SQSEvent`; the
 * handler reports failed records (ReportBatchItemFailures) and the mapping deletes the rest.
 *
 * The handler uses the consumer-side package `@dlq-redrive/consumer-idempotency`
 * (packages/consumer-idempotency), as a consumer team would: a record whose key this consumer
 * already processed is skipped, and each processed key is recorded (`KEY#<key>` /
 * `PROCESSED#orders-consumer`), which is what VerifySample reads and what makes a redrive duplicate
 * harmless.
 *
 * It fails on poison payloads every time, and on every message while its dependency is down (an
 * outage window), so healthy messages dead-letter too. Like consumers that want a triageable DLQ,
 * it records why a message failed: on the first failure it re-sends the message with
 * `error-class` / `error-message` attributes and deletes the original, so the copy that SQS
 * dead-letters after `maxReceiveCount` receives carries its reason.
 *
 * @see https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html#services-sqs-batchfailurereporting
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import {
  consumerIdempotency,
  consumerIdempotencyState,
  type ProcessedKeyStore,
} from '@dlq-redrive/consumer-idempotency';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { readJsonPath } from '#inventory/idempotency-key.js';
import { pipelineConfig } from '#platform/config.js';
import { sleep } from '#platform/sleep.js';
import { lambdaContext } from '../lambda-context.js';
import { sqsRecordOf } from '../sqs-event.js';
import { isPoison } from './producer.js';

/** The consumer's name in its processed-key records. */
export const CONSUMER_NAME = 'orders-consumer';

/** Options of {@link DemoConsumer}. */
export interface ConsumerOptions {
  sqs: SQSClient;
  queueUrl: string;
  /** The consumed queue's ARN (`eventSourceARN` of each record). */
  queueArn: string;
  /** Where the producer's id lives in the body. @default '$.orderId' */
  keyPath?: string;
  /** The dependency goes down after this many messages were processed. @default never */
  outageAfterProcessed?: number;
  /** @default the package's DynamoDB store on the pipeline table */
  processedKeys?: ProcessedKeyStore;
  /** Parallel receive loops. @default 2 */
  concurrency?: number;
  /** Long-poll wait, seconds. @default 1 */
  waitTimeSeconds?: number;
  /**
   * Visibility timeout of each receive, seconds: longer than a batch can take, so a slow batch is
   * not delivered twice while it is still being processed. @default 10
   */
  processingVisibilitySeconds?: number;
  /** Retry delay of a failed message, seconds (its visibility is set to this). @default 1 */
  retryDelaySeconds?: number;
  /**
   * The source queue's maxReceiveCount: a failed receive with this receive count sends the message
   * to the DLQ, which is how the consumer tells a first failure from one after a redrive.
   * @default 3
   */
  maxReceiveCount?: number;
}

/** Counters of a consumer run. */
export interface ConsumerStats {
  /** Messages processed successfully. */
  processed: number;
  /** Records the idempotency middleware skipped because their key was already processed. */
  duplicatesSkipped: number;
  /** Failed attempts (each receive that failed). */
  failedAttempts: number;
  /** Keys processed more than once (must stay 0). */
  processedTwice: number;
  /**
   * Exposure: distinct keys that reached the consumer after a stay in the DLQ and failed again
   * (each counted once however often it was redelivered).
   */
  exposed: number;
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

type BatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * What every demo consumer of the orders has: its counters, the dependency outage, the poison fix,
 * and how one order's outcome is counted. The SQS consumer below and the function an SNS topic or
 * asynchronous invocations feed (local/demo/origins.ts) extend it.
 */
export abstract class OrdersConsumer {
  public readonly stats: ConsumerStats = {
    processed: 0,
    duplicatesSkipped: 0,
    failedAttempts: 0,
    processedTwice: 0,
    exposed: 0,
  };
  /** Keys counted in `stats.exposed`, in the order they failed again. */
  public readonly exposedKeys = new Set<string>();
  /** Every receive, in order. */
  public readonly deliveries: Delivery[] = [];
  private outage = false;
  private poisonAccepted = false;
  private readonly seen = new Map<string, number>();
  /** Keys whose message went to the DLQ at least once. */
  protected readonly deadLettered = new Set<string>();
  private outageAt: { processed: number; onStart?: () => void } | undefined;

  /** True while the dependency is down. */
  public get dependencyDown(): boolean {
    return this.outage;
  }

  /** Takes the dependency down (every message fails). */
  public startOutage(): void {
    this.outage = true;
  }

  /**
   * Records keys as dead-lettered without this consumer having failed them (a DLQ seeded
   * straight, seed.ts), so a later failure of a redriven copy counts as exposure.
   */
  public markDeadLettered(keys: Iterable<string>): void {
    for (const key of keys) this.deadLettered.add(key);
  }

  /** Brings the dependency back (the fix is deployed). */
  public endOutage(): void {
    this.outage = false;
  }

  /** The consumer is fixed to accept the payloads it rejected as poison (before an un-park). */
  public acceptPoison(): void {
    this.poisonAccepted = true;
  }

  /**
   * Takes the dependency down once `moreProcessed` further messages were processed (a consumer
   * that breaks again in the middle of a redrive), then calls `onStart`.
   */
  public outageAfter(moreProcessed: number, onStart?: () => void): void {
    this.outageAt = { processed: this.stats.processed + moreProcessed, ...(onStart ? { onStart } : {}) };
  }

  /** The failure this order meets now, or null when it is processed. */
  protected failureOf(body: string): ConsumerFailure | null {
    if (!this.poisonAccepted && isPoison(body))
      return new ConsumerFailure('ValidationError', 'quantity: expected a number');
    if (this.outage)
      return new ConsumerFailure('DependencyUnavailable', 'inventory service unavailable (503)');
    return null;
  }

  /** Counts an order processed (and a key processed twice); may start a planned outage. */
  protected processed(key: string): void {
    const times = (this.seen.get(key) ?? 0) + 1;
    this.seen.set(key, times);
    if (times > 1) this.stats.processedTwice += 1;
    this.stats.processed += 1;
    if (this.outageAt && this.stats.processed >= this.outageAt.processed) {
      const { onStart } = this.outageAt;
      this.outageAt = undefined;
      this.startOutage();
      onStart?.();
    }
  }

  /** Counts a failed attempt, and the key as exposed when it had been dead-lettered before. */
  protected failed(key: string): void {
    this.stats.failedAttempts += 1;
    if (this.deadLettered.has(key) && !this.exposedKeys.has(key)) {
      this.exposedKeys.add(key);
      this.stats.exposed += 1;
    }
  }
}

/** A consumer of the demo's source queue; `start()` then `stop()`. */
export class DemoConsumer extends OrdersConsumer {
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly received = new Map<string, Message>();
  private readonly annotated = new Set<string>();
  private readonly handler: BatchHandler;

  public constructor(private readonly options: ConsumerOptions) {
    super();
    this.handler = middy<SQSEvent, SQSBatchResponse>()
      .use(
        consumerIdempotency({
          consumer: CONSUMER_NAME,
          tableName: pipelineConfig().tableName,
          producerKey: { jsonPath: options.keyPath ?? '$.orderId' },
          ...(options.processedKeys ? { store: options.processedKeys } : {}),
        }),
      )
      .handler(async (event) => {
        const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
        for (const record of event.Records) {
          if (!(await this.process(record))) batchItemFailures.push({ itemIdentifier: record.messageId });
        }
        return { batchItemFailures };
      }) as unknown as BatchHandler;
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
            VisibilityTimeout: this.options.processingVisibilitySeconds ?? 10,
            MessageAttributeNames: ['All'],
            AttributeNames: ['All'],
            MessageSystemAttributeNames: ['All'],
          }),
        );
        messages = out.Messages ?? [];
        if (messages.length > 0) await this.dispatch(messages);
      } catch {
        if (!this.running) return;
        await sleep(200);
      }
    }
  }

  /** What the event source mapping does with one received batch. */
  private async dispatch(messages: Message[]): Promise<void> {
    const { sqs, queueUrl } = this.options;
    for (const message of messages) {
      this.received.set(message.MessageId as string, message);
      this.deliveries.push(this.delivery(message));
    }
    const context = lambdaContext({ functionName: 'OrdersConsumer', timeoutMs: 30_000 });
    try {
      const response = await this.handler(
        { Records: messages.map((m) => sqsRecordOf(m, this.options.queueArn)) },
        context,
      );
      this.stats.duplicatesSkipped += consumerIdempotencyState(context)?.skipped.length ?? 0;
      const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      const done = messages.filter(
        (m) => !failed.has(m.MessageId as string) && !this.annotated.has(m.MessageId as string),
      );
      if (done.length > 0)
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle as string })),
          }),
        );
      // Failed messages come back after the retry delay (each receive counts toward maxReceiveCount).
      const retry = messages.filter(
        (m) => failed.has(m.MessageId as string) && !this.annotated.has(m.MessageId as string),
      );
      if (retry.length > 0)
        await sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: queueUrl,
            Entries: retry.map((m, i) => ({
              Id: String(i),
              ReceiptHandle: m.ReceiptHandle as string,
              VisibilityTimeout: this.options.retryDelaySeconds ?? 1,
            })),
          }),
        );
    } finally {
      for (const m of messages) {
        this.received.delete(m.MessageId as string);
        this.annotated.delete(m.MessageId as string);
      }
    }
  }

  private delivery(message: Message): Delivery {
    return {
      messageId: message.MessageId ?? '',
      key: readJsonPath(message.Body ?? '', this.options.keyPath ?? '$.orderId') ?? message.MessageId ?? '',
      pipelineKey: message.MessageAttributes?.['idempotency-key']?.StringValue ?? null,
      redriveId: message.MessageAttributes?.['redrive-id']?.StringValue ?? null,
    };
  }

  /** Processes one record; false when it failed (it then returns to the queue). */
  private async process(record: SQSRecord): Promise<boolean> {
    const key = readJsonPath(record.body, this.options.keyPath ?? '$.orderId') ?? record.messageId;
    const failure = this.failureOf(record.body);
    if (!failure) {
      this.processed(key);
      const after = this.options.outageAfterProcessed;
      if (after !== undefined && this.stats.processed === after) this.startOutage();
      return true;
    }
    this.failed(key);
    const message = this.received.get(record.messageId);
    if (message && !message.MessageAttributes?.[ERROR_CLASS]) {
      await this.annotate(message, failure);
      this.annotated.add(record.messageId);
    } else if (Number(record.attributes.ApproximateReceiveCount) >= (this.options.maxReceiveCount ?? 3)) {
      this.deadLettered.add(key);
    }
    return false;
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
        // FIFO: the copy stays in its message group, and its own deduplication id keeps a
        // content-based queue from dropping it as a duplicate of the original.
        ...(queueUrl.endsWith('.fifo')
          ? {
              MessageGroupId: message.Attributes?.MessageGroupId ?? 'demo',
              MessageDeduplicationId: `annotated-${message.MessageId}`,
            }
          : {}),
      }),
    );
    await sqs.send(
      new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle as string }),
    );
  }
}
