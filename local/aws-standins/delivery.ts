/**
 * What the SNS, Lambda and EventBridge stand-ins share: local handlers that stand in for the
 * functions and endpoints AWS would deliver to, asynchronous delivery with retries, and sending
 * what finally fails to an SQS DLQ on the local SQS server, with the attributes the real service
 * puts on it. A stand-in records every delivery, so tests and scenarios can assert what reached a
 * consumer, and {@link Deliveries.idle} waits until nothing is in flight.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  GetQueueUrlCommand,
  type MessageAttributeValue,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';

/**
 * A local stand-in for a Lambda function, an SNS HTTP(S) endpoint or an EventBridge target: it
 * gets the event as the service would deliver it and fails by throwing.
 */
export type LocalHandler = (event: unknown, context: { requestId: string; attempt: number }) => unknown;

/** One delivery attempt, as recorded. */
export interface Delivery {
  /** The function ARN or endpoint URL. */
  target: string;
  event: unknown;
  requestId: string;
  /** 1 for the first attempt. */
  attempt: number;
  ok: boolean;
  error?: string;
}

/** The handlers the stand-ins deliver to, by function ARN (unqualified) or endpoint URL. */
export interface LocalHandlers {
  define(target: string, handler: LocalHandler): void;
  get(target: string): LocalHandler | undefined;
}

/** Creates the handler registry the Lambda, SNS and EventBridge stand-ins share. */
export function createLocalHandlers(): LocalHandlers {
  const handlers = new Map<string, LocalHandler>();
  const norm = (target: string) =>
    target.startsWith('arn:aws:lambda:') ? target.split(':').slice(0, 7).join(':') : target;
  return {
    define: (target, handler) => handlers.set(norm(target), handler),
    get: (target) => handlers.get(norm(target)),
  };
}

/** What a failed delivery sends to a DLQ: a body and SQS message attributes. */
export interface DeadLetter {
  body: string;
  attributes: Record<string, MessageAttributeValue>;
  groupId?: string;
}

/** Asynchronous deliveries with retries, and the DLQ sends of the ones that fail for good. */
export interface Deliveries {
  readonly log: Delivery[];
  /** Messages sent to DLQs, oldest first. */
  readonly deadLettered: Array<DeadLetter & { dlqArn: string }>;
  /**
   * Runs `handler` (now and up to `retries` more times, `retryDelayMs` apart) without waiting; when
   * every attempt failed, sends `deadLetter(lastError, requestId)` to `dlqArn` (if any).
   */
  deliver(request: {
    target: string;
    event: unknown;
    handler: LocalHandler | undefined;
    retries: number;
    dlqArn: string | undefined;
    deadLetter: (error: Error, requestId: string, attempts: number) => DeadLetter;
  }): void;
  /** Sends a message to a queue of the local SQS server (a DLQ, a queue subscription). */
  sendToQueue(queueArn: string, letter: DeadLetter & { deduplicationId?: string }): Promise<void>;
  /** Resolves once no delivery (or DLQ send) is in flight. */
  idle(): Promise<void>;
  /** Waits for {@link idle}, then releases the SQS client. */
  close(): Promise<void>;
}

/** Options of {@link createDeliveries}. */
export interface DeliveryOptions {
  /** The local SQS endpoint DLQ messages are sent to. */
  sqsEndpoint: string;
  region: string;
  /** Milliseconds between attempts (AWS waits minutes; locally it is short). @default 50 */
  retryDelayMs?: number;
}

/** Creates the delivery engine. */
export function createDeliveries(options: DeliveryOptions): Deliveries {
  const sqs = new SQSClient({
    region: options.region,
    endpoint: options.sqsEndpoint,
    credentials: { accessKeyId: 'local-aws-service', secretAccessKey: 'local' },
  });
  const log: Delivery[] = [];
  const deadLettered: Array<DeadLetter & { dlqArn: string }> = [];
  const inFlight = new Set<Promise<void>>();
  const urls = new Map<string, string>();
  const delay = options.retryDelayMs ?? 50;
  const idle = async () => {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  };

  const queueUrl = async (arn: string) => {
    let url = urls.get(arn);
    if (!url) {
      const [, , , , account, name] = arn.split(':');
      url = (await sqs.send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account })))
        .QueueUrl as string;
      urls.set(arn, url);
    }
    return url;
  };

  const sendToQueue: Deliveries['sendToQueue'] = async (queueArn, letter) => {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: await queueUrl(queueArn),
        MessageBody: letter.body,
        ...(Object.keys(letter.attributes).length > 0 ? { MessageAttributes: letter.attributes } : {}),
        ...(letter.groupId
          ? { MessageGroupId: letter.groupId, MessageDeduplicationId: letter.deduplicationId ?? randomUUID() }
          : {}),
      }),
    );
  };

  const run: Deliveries['deliver'] = (request) => {
    const requestId = randomUUID();
    const task = (async () => {
      let lastError: Error = new Error(`no handler for ${request.target}`);
      for (let attempt = 1; attempt <= request.retries + 1; attempt++) {
        if (attempt > 1) await sleep(delay);
        const entry: Delivery = {
          target: request.target,
          event: request.event,
          requestId,
          attempt,
          ok: false,
        };
        try {
          if (!request.handler) throw lastError;
          await request.handler(request.event, { requestId, attempt });
          log.push({ ...entry, ok: true });
          return;
        } catch (error) {
          lastError = error instanceof Error ? error : new Error(String(error));
          log.push({ ...entry, error: lastError.message });
        }
      }
      if (!request.dlqArn) return;
      const letter = request.deadLetter(lastError, requestId, request.retries + 1);
      await sendToQueue(request.dlqArn, letter);
      deadLettered.push({ ...letter, dlqArn: request.dlqArn });
    })();
    inFlight.add(task);
    void task.finally(() => inFlight.delete(task)).catch(() => undefined);
  };

  return {
    log,
    deadLettered,
    deliver: run,
    sendToQueue,
    idle,
    async close() {
      await idle();
      sqs.destroy();
    },
  };
}

/** A String message attribute. */
export function stringAttribute(value: string): MessageAttributeValue {
  return { DataType: 'String', StringValue: value };
}
