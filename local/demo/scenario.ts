/**
 * The incident the local run (and the workflow tests) reproduce: an `orders` queue whose consumer
 * fails on poison payloads and, during a dependency outage, on every message, so SQS dead-letters
 * healthy messages too. Used by `npm start` (local/main.ts) and by test/workflow.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { ProcessedKeyStore } from '@dlq-redrive/consumer-idempotency';
import { createQueueRegistry } from '#incident/queue-registry.js';
import type { QueueRegistration } from '#inventory/model.js';
import { DemoConsumer } from './consumer.js';
import { type Produced, produceOrders } from './producer.js';
import { createDemoQueues, type DemoQueues, queueDepth, waitUntilDrained } from './queues.js';
import { seedDeadLetters } from './seed.js';

/**
 * What feeds an origin incident's DLQ (local/demo/origins.ts): an SNS subscription, an EventBridge
 * rule's target, or a function's asynchronous invocations.
 */
export type OriginKind = 'sns' | 'eventbridge' | 'lambda';

/** Options of {@link prepareIncident}. */
export interface ScenarioOptions {
  /** Source queue name (unique per test). @default 'orders' */
  name?: string;
  /** Messages produced. @default 300 */
  messages?: number;
  /** Prefix of the order ids (`<prefix>-000042`). @default the queue name */
  orderPrefix?: string;
  /** Order ids are integers from this one on, JSON numbers in the body (producer.ts). */
  numericIdsFrom?: bigint;
  /** Every n-th message is poison (0: none). @default 20 */
  poisonEvery?: number;
  /** The dependency goes down after this many messages were processed. @default 40% of messages */
  outageAfterProcessed?: number;
  /** @default 1 */
  visibilityTimeoutSeconds?: number;
  /** @default 3 */
  maxReceiveCount?: number;
  /** Source queue DelaySeconds. @default 0 */
  delaySeconds?: number;
  /** Source queue MaximumMessageSize, bytes. @default 1 MiB */
  maximumMessageSize?: number;
  /** Registration overrides (sampleSize, rampRates, dwellSeconds...). */
  registration?: Partial<QueueRegistration>;
  processedKeys?: ProcessedKeyStore;
  /** Parallel receive loops of the consumer. @default 2 */
  consumerConcurrency?: number;
  /** How long to wait for the source queue to drain, milliseconds. @default 60000 */
  drainTimeoutMs?: number;
  /** Gets a progress line every few seconds while the source queue drains. */
  onProgress?: (line: string) => void;
  /**
   * Fill the DLQ straight with this many messages (seed.ts: the same dead-lettering, without the
   * consumer's rounds) instead of producing `messages` orders through the failing consumer.
   */
  dlqDepth?: number;
  /** Told how many messages are in the DLQ while it is seeded (`dlqDepth`). */
  onSeedProgress?: (deadLettered: number) => void;
  /** The consumer's own SQS client (a benchmark counts the pipeline's calls apart). @default the `sqs` given */
  consumerSqs?: SQSClient;
  /**
   * What feeds the DLQ: an SQS source queue's redrive policy (the default), an SNS subscription's
   * redrive policy, an EventBridge rule target's DLQ, or a Lambda function's asynchronous-invocation
   * DLQ (local/demo/origins.ts).
   * @default 'sqs'
   */
  origin?: 'sqs' | OriginKind;
  /** FIFO queues; the producer's MessageGroupId of the i-th message. */
  fifo?: { groupOf: (i: number) => string };
  /** Which produced messages are poison, by 0-based index (replaces `poisonEvery`). */
  poisonAt?: (i: number) => boolean;
}

/**
 * What the run and the scenarios use of the incident's consumer: the SQS consumer
 * (local/demo/consumer.ts) or the function an SNS topic or asynchronous invocations feed
 * (local/demo/origins.ts).
 */
export type IncidentConsumer = Pick<
  DemoConsumer,
  | 'stats'
  | 'deliveries'
  | 'exposedKeys'
  | 'startOutage'
  | 'endOutage'
  | 'outageAfter'
  | 'acceptPoison'
  | 'start'
  | 'stop'
>;

/** A prepared incident: the DLQ holds the dead-lettered messages, the consumer is still running. */
export interface PreparedIncident {
  /**
   * The DLQ and parking queue; the source queue of an SQS incident. An SNS, EventBridge or Lambda
   * incident has no source queue: `sourceUrl` is empty and `sourceArn` the topic, event bus or
   * function ({@link origin}).
   */
  queues: DemoQueues;
  registration: QueueRegistration;
  produced: Produced;
  consumer: IncidentConsumer;
  /** The topic, event bus or function an origin incident redrives to (absent: an SQS source queue). */
  origin?: { kind: OriginKind; arn: string };
  /** Messages in the DLQ once the source queue drained. */
  dlqDepth: number;
}

/** The demo's registration of a DLQ and its parking queue, with the scenario's overrides (the registry parses it). */
export function demoRegistration(
  queues: Pick<DemoQueues, 'dlqArn' | 'parkingArn'>,
  overrides: Partial<QueueRegistration> = {},
): Record<string, unknown> {
  return {
    dlqArn: queues.dlqArn,
    owner: 'orders-team',
    producerKey: { jsonPath: '$.orderId' },
    sampleSize: 5,
    rampRates: [5, 50, 200],
    dwellSeconds: 2,
    maxRedrives: 3,
    parkingQueueArn: queues.parkingArn,
    ...overrides,
  };
}

/**
 * Creates the queues and the registration, produces the orders and lets the failing consumer run
 * until the source queue is empty (every message processed or dead-lettered). The outage is still
 * on when this returns: call `consumer.endOutage()` when the fix is "deployed".
 */
export async function prepareIncident(
  sqs: SQSClient,
  options: ScenarioOptions = {},
): Promise<PreparedIncident> {
  const messages = options.messages ?? 300;
  const queues = await createDemoQueues(sqs, {
    name: options.name ?? 'orders',
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds ?? 1,
    maxReceiveCount: options.maxReceiveCount ?? 3,
    ...(options.delaySeconds ? { delaySeconds: options.delaySeconds } : {}),
    ...(options.maximumMessageSize ? { maximumMessageSize: options.maximumMessageSize } : {}),
    ...(options.fifo ? { fifo: true } : {}),
  });
  const registration = await createQueueRegistry().putRegistration(
    demoRegistration(queues, options.registration),
  );
  const consumer = new DemoConsumer({
    sqs: options.consumerSqs ?? sqs,
    queueUrl: queues.sourceUrl,
    queueArn: queues.sourceArn,
    maxReceiveCount: queues.maxReceiveCount,
    // A seeded DLQ had its outage already: the consumer breaks again only when a scenario says so.
    ...(options.dlqDepth === undefined
      ? { outageAfterProcessed: options.outageAfterProcessed ?? Math.floor(messages * 0.4) }
      : options.outageAfterProcessed !== undefined
        ? { outageAfterProcessed: options.outageAfterProcessed }
        : {}),
    ...(options.processedKeys ? { processedKeys: options.processedKeys } : {}),
    ...(options.consumerConcurrency ? { concurrency: options.consumerConcurrency } : {}),
  });
  if (options.dlqDepth !== undefined) {
    // Seeded straight: every order is dead-lettered already; the consumer stays broken until the
    // fix is deployed (on approval), and knows which keys went to the DLQ (exposure).
    consumer.startOutage();
    const produced = await seedDeadLetters(sqs, queues, {
      count: options.dlqDepth,
      poisonEvery: options.poisonEvery ?? 20,
      prefix: options.orderPrefix ?? options.name ?? 'order',
      ...(options.onSeedProgress ? { onProgress: options.onSeedProgress } : {}),
    });
    consumer.markDeadLettered(produced.orderIds);
    consumer.start();
    const depth = await queueDepth(sqs, queues.dlqUrl);
    return { queues, registration, produced, consumer, dlqDepth: depth.visible + depth.inFlight };
  }
  if ((options.outageAfterProcessed ?? 1) === 0) consumer.startOutage();
  consumer.start();
  const produced = await produceOrders(sqs, queues.sourceUrl, {
    count: messages,
    poisonEvery: options.poisonEvery ?? 20,
    prefix: options.orderPrefix ?? options.name ?? 'order',
    ...(options.fifo ? { groupOf: options.fifo.groupOf } : {}),
    ...(options.poisonAt ? { poisonAt: options.poisonAt } : {}),
    ...(options.numericIdsFrom !== undefined ? { numericIdsFrom: options.numericIdsFrom } : {}),
  });
  const { onProgress } = options;
  await waitUntilDrained(sqs, queues.sourceUrl, {
    timeoutMs: options.drainTimeoutMs ?? 60_000,
    quietMs: 300,
    ...(onProgress
      ? {
          onProgress: async (left: number) => {
            const dlq = await queueDepth(sqs, queues.dlqUrl);
            onProgress(
              `draining: ${left} of ${messages} still in the source queue, ${consumer.stats.processed} processed, ${dlq.visible + dlq.inFlight} dead-lettered so far`,
            );
          },
        }
      : {}),
  });
  const depth = await queueDepth(sqs, queues.dlqUrl);
  return { queues, registration, produced, consumer, dlqDepth: depth.visible + depth.inFlight };
}
