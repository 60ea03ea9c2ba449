/**
 * Incidents whose DLQ no SQS redrive policy feeds (docs/local-run.md, "Fault scenarios"): the
 * `orders` events reach a Lambda function, either through an SNS topic subscription whose redrive
 * policy names the DLQ (`sns`), as the target of an EventBridge rule whose target DLQ it is
 * (`eventbridge`), or as asynchronous invocations of a function whose DLQ it is (`lambda`). The
 * function fails on poison payloads and, during a dependency outage, on every message; after the
 * service's retries the stand-in (local/aws-standins/) dead-letters the message as the service
 * does: SNS and Lambda the payload (raw delivery) with `RequestID`, `ErrorCode` and
 * `ErrorMessage`; EventBridge the event JSON with `RULE_ARN`, `TARGET_ARN`, `ERROR_CODE`,
 * `ERROR_MESSAGE`. Redriven copies go back to the topic, the event bus or the function (the
 * recording mover).
 *
 * The stand-ins run in this process (`startLocalStack`): their local handlers are functions of
 * this process, so these incidents cannot use the stack of `npm run local` in another process.
 *
 * @see https://docs.aws.amazon.com/sns/latest/dg/sns-dead-letter-queues.html
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html
 * @see https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html
 */
import {
  CreateEventBusCommand,
  EventBridgeClient,
  PutEventsCommand,
  PutRuleCommand,
  PutTargetsCommand,
} from '@aws-sdk/client-eventbridge';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { CreateTopicCommand, PublishCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { createQueueRegistry } from '#incident/queue-registry.js';
import type { QueueRegistration } from '#inventory/model.js';
import type { Standins } from '../aws-standins/index.js';
import { OrdersConsumer } from './consumer.js';
import { orderMessages } from './producer.js';
import { createDlqAndParking, queueDepth } from './queues.js';
import {
  demoRegistration,
  type OriginKind,
  type PreparedIncident,
  type ScenarioOptions,
} from './scenario.js';

/**
 * Attempts a delivery gets before it is dead-lettered: SNS's local retries (3) + 1, the rule
 * target's `RetryPolicy.MaximumRetryAttempts` ({@link EVENTBRIDGE_RETRIES}) + 1, Lambda's
 * maximumRetryAttempts (2) + 1.
 */
const EVENTBRIDGE_RETRIES = 2;
const ATTEMPTS: Record<OriginKind, number> = { sns: 4, eventbridge: EVENTBRIDGE_RETRIES + 1, lambda: 3 };

/** How the run's story names one delivery of each origin. */
export const ORIGIN_DELIVERY: Record<OriginKind, string> = {
  sns: 'SNS delivery',
  eventbridge: 'EventBridge delivery to the rule target',
  lambda: 'asynchronous invocation',
};

/** The `source` and `detail-type` of the orders events (what the rule matches). */
const ORDER_EVENT = { source: 'com.example.orders', detailType: 'OrderPlaced' } as const;

/** A failure as the function throws it: the class becomes SNS's `ErrorCode`, EventBridge's `ERROR_CODE` and Lambda's `errorType`. */
function thrown(errorClass: string, message: string): Error {
  return Object.assign(new Error(message), { name: errorClass, code: errorClass });
}

/**
 * The orders function: the consumer of an origin incident, counted like the SQS demo consumer
 * (local/demo/consumer.ts). The stand-ins call it (push), so `start` and `stop` only open and
 * close it: a stopped subscriber fails every delivery as unavailable.
 */
export class DemoSubscriber extends OrdersConsumer {
  private running = false;

  public constructor(
    private readonly kind: OriginKind,
    private readonly idle: () => Promise<void>,
  ) {
    super();
  }

  public start(): void {
    this.running = true;
  }

  /** Waits for the deliveries in flight (retries and dead-letter sends included), then closes. */
  public async stop(): Promise<void> {
    await this.idle();
    this.running = false;
  }

  /** The function's handler, as the stand-ins call it (an SNS event, an EventBridge event, or the invocation payload). */
  public readonly handler = (event: unknown, context: { attempt: number }): void => {
    const { body, pipelineKey, redriveId } = this.unwrap(event);
    const key = (JSON.parse(body) as { orderId?: string }).orderId ?? body;
    this.deliveries.push({ messageId: `${key}#${this.deliveries.length}`, key, pipelineKey, redriveId });
    const failure = this.running
      ? this.failureOf(body)
      : { errorClass: 'ServiceUnavailable', message: 'the orders function is stopped' };
    if (!failure) {
      this.processed(key);
      return;
    }
    this.failed(key);
    if (context.attempt >= ATTEMPTS[this.kind]) this.deadLettered.add(key);
    throw thrown(failure.errorClass, failure.message);
  };

  private unwrap(event: unknown): { body: string; pipelineKey: string | null; redriveId: string | null } {
    const sns = (event as { Records?: Array<{ Sns?: SnsRecord }> }).Records?.[0]?.Sns;
    if (this.kind === 'sns' && sns) {
      const attr = (name: string) => sns.MessageAttributes?.[name]?.Value ?? null;
      return { body: sns.Message, pipelineKey: attr('idempotency-key'), redriveId: attr('redrive-id') };
    }
    // An EventBridge event carries no attributes: the order is its detail.
    if (this.kind === 'eventbridge') {
      const detail = (event as { detail?: unknown }).detail;
      return { body: JSON.stringify(detail ?? {}), pipelineKey: null, redriveId: null };
    }
    // An asynchronous invocation's payload carries no attributes: the order itself.
    return { body: JSON.stringify(event), pipelineKey: null, redriveId: null };
  }
}

interface SnsRecord {
  Message: string;
  MessageAttributes?: Record<string, { Type: string; Value: string }>;
}

/**
 * Creates the DLQ, the parking queue, the origin (topic and subscribed function, bus with a rule
 * whose target is the function, or the function with its DLQ) and the registration (`origin`, `returnWindowSeconds`), sends the orders, and waits
 * until every delivery ended (processed or dead-lettered). The outage is on when this returns.
 *
 * @throws Error when the stand-ins are not in this process.
 */
export async function prepareOriginIncident(
  sqs: SQSClient,
  standins: Standins | undefined,
  options: ScenarioOptions & { name: string; origin: OriginKind },
): Promise<PreparedIncident> {
  if (!standins)
    throw new Error(
      `the ${options.origin} incident needs the SNS, EventBridge and Lambda stand-ins in this process: run npm start without npm run local's variables`,
    );
  const { name, origin } = options;
  const messages = options.messages ?? 100;
  const dlq = await createDlqAndParking(sqs, name);
  const subscriber = new DemoSubscriber(origin, () => standins.deliveries.idle());
  const functionArn = standins.lambda.defineFunction({
    name: `${name}-fn`,
    handler: subscriber.handler,
    ...(origin === 'lambda' ? { deadLetterArn: dlq.dlqArn } : {}),
  });
  const sns = new SNSClient({});
  const events = new EventBridgeClient({});
  let originArn = functionArn;
  let registered: Record<string, unknown> = { kind: 'lambda', functionArn };
  if (origin === 'sns') {
    const topic = await sns.send(new CreateTopicCommand({ Name: `${name}-events` }));
    originArn = topic.TopicArn as string;
    await sns.send(
      new SubscribeCommand({
        TopicArn: originArn,
        Protocol: 'lambda',
        Endpoint: functionArn,
        Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.dlqArn }) },
      }),
    );
    registered = { kind: 'sns', topicArn: originArn };
  } else if (origin === 'eventbridge') {
    const bus = await events.send(new CreateEventBusCommand({ Name: `${name}-bus` }));
    originArn = bus.EventBusArn as string;
    await events.send(
      new PutRuleCommand({
        Name: `${name}-rule`,
        EventBusName: originArn,
        EventPattern: JSON.stringify({
          source: [ORDER_EVENT.source],
          'detail-type': [ORDER_EVENT.detailType],
        }),
      }),
    );
    await events.send(
      new PutTargetsCommand({
        Rule: `${name}-rule`,
        EventBusName: originArn,
        Targets: [
          {
            Id: 'orders-fn',
            Arn: functionArn,
            DeadLetterConfig: { Arn: dlq.dlqArn },
            RetryPolicy: { MaximumRetryAttempts: EVENTBRIDGE_RETRIES },
          },
        ],
      }),
    );
    registered = { kind: 'eventbridge', eventBusArn: originArn };
  }
  const registration = await createQueueRegistry().putRegistration(
    demoRegistration(dlq, {
      // The stand-ins retry within a fraction of a second: a copy that fails again is back by then.
      origin: { ...registered, returnWindowSeconds: 3 } as QueueRegistration['origin'],
      // An event's key is its content (source, detail-type, time, resources, detail), which a
      // re-put keeps; the demo's `$.orderId` is not on an event (its order is the detail).
      ...(origin === 'eventbridge' ? { producerKey: undefined } : {}),
      ...options.registration,
    }),
  );
  const outageAfter = options.outageAfterProcessed ?? Math.floor(messages * 0.4);
  if (outageAfter === 0) subscriber.startOutage();
  else subscriber.outageAfter(outageAfter);
  subscriber.start();
  const { orders, produced } = orderMessages({
    count: messages,
    poisonEvery: options.poisonEvery ?? 20,
    prefix: name,
  });
  const lambda = new LambdaClient({});
  try {
    if (origin === 'eventbridge')
      for (let i = 0; i < orders.length; i += 10) {
        const out = await events.send(
          new PutEventsCommand({
            Entries: orders.slice(i, i + 10).map((order) => ({
              Source: ORDER_EVENT.source,
              DetailType: ORDER_EVENT.detailType,
              Detail: order.body,
              EventBusName: originArn,
            })),
          }),
        );
        if (out.FailedEntryCount) throw new Error(`PutEvents refused ${out.FailedEntryCount} orders events`);
      }
    for (const order of origin === 'eventbridge' ? [] : orders) {
      if (origin === 'sns') await sns.send(new PublishCommand({ TopicArn: originArn, Message: order.body }));
      else
        await lambda.send(
          new InvokeCommand({ FunctionName: functionArn, InvocationType: 'Event', Payload: order.body }),
        );
    }
  } finally {
    sns.destroy();
    events.destroy();
    lambda.destroy();
  }
  await standins.deliveries.idle();
  options.onProgress?.(
    `every delivery ended: ${subscriber.stats.processed} processed, ${standins.deliveries.deadLettered.filter((d) => d.dlqArn === dlq.dlqArn).length} dead-lettered by ${{ sns: 'SNS', eventbridge: 'EventBridge', lambda: 'Lambda' }[origin]}`,
  );
  const depth = await queueDepth(sqs, dlq.dlqUrl);
  return {
    queues: {
      ...dlq,
      sourceUrl: '',
      sourceArn: originArn,
      visibilityTimeoutSeconds: 0,
      maxReceiveCount: 0,
      delaySeconds: 0,
    },
    registration,
    produced,
    consumer: subscriber,
    dlqDepth: depth.visible + depth.inFlight,
    origin: { kind: origin, arn: originArn },
  };
}
