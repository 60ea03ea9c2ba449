/**
 * The demo's queues on the local SQS stand-in: a source queue with a redrive policy to its DLQ,
 * and a parking queue for messages kept out of the bulk move.
 *
 * Short visibility timeouts keep a local run fast: a failing message reaches the DLQ after
 * `maxReceiveCount` receives, one visibility timeout apart.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 */
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { sleep } from '#platform/sleep.js';

/** URLs and ARNs of one source queue, its DLQ and its parking queue. */
export interface DemoQueues {
  sourceUrl: string;
  sourceArn: string;
  dlqUrl: string;
  dlqArn: string;
  parkingUrl: string;
  parkingArn: string;
  /** The source queue's visibility timeout, seconds. */
  visibilityTimeoutSeconds: number;
  maxReceiveCount: number;
  /** The source queue's DelaySeconds (a delay queue when above 0). */
  delaySeconds: number;
}

/** Options of {@link createDemoQueues}. */
export interface DemoQueueOptions {
  /** Source queue name; the DLQ is `<name>-dlq`, the parking queue `<name>-parking`. @default 'orders' */
  name?: string;
  /** Source queue visibility timeout, seconds. @default 1 */
  visibilityTimeoutSeconds?: number;
  /** Receives before SQS moves a message to the DLQ. @default 3 */
  maxReceiveCount?: number;
  /** DLQ visibility timeout, seconds (inventory receives hide messages this long). @default 2 */
  dlqVisibilityTimeoutSeconds?: number;
  /** DLQ retention period, seconds. @default 1209600 (14 days) */
  dlqRetentionSeconds?: number;
  /** Source queue DelaySeconds: every new message, a redriven one too, is hidden this long. @default 0 */
  delaySeconds?: number;
  /** Source queue MaximumMessageSize, bytes (body plus attributes). @default SQS's 1 MiB */
  maximumMessageSize?: number;
  /**
   * FIFO queues (`<name>.fifo`, `<name>-dlq.fifo`, `<name>-parking.fifo`, content-based
   * deduplication). @default false
   */
  fifo?: boolean;
}

/** FIFO queue attributes when `fifo`, else none. */
const fifoAttributes = (fifo: boolean | undefined): Record<string, string> =>
  fifo ? { FifoQueue: 'true', ContentBasedDeduplication: 'true' } : {};

async function arnOf(sqs: SQSClient, queueUrl: string): Promise<string> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  const arn = out.Attributes?.QueueArn;
  if (!arn) throw new Error(`no QueueArn for ${queueUrl}`);
  return arn;
}

/** Creates `<name>-dlq` and `<name>-parking`: the queues of every demo incident, whatever feeds the DLQ. */
export async function createDlqAndParking(
  sqs: SQSClient,
  name: string,
  options: Pick<DemoQueueOptions, 'dlqVisibilityTimeoutSeconds' | 'dlqRetentionSeconds' | 'fifo'> = {},
): Promise<Pick<DemoQueues, 'dlqUrl' | 'dlqArn' | 'parkingUrl' | 'parkingArn'>> {
  const suffix = options.fifo ? '.fifo' : '';
  const dlq = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${name}-dlq${suffix}`,
      Attributes: {
        ...fifoAttributes(options.fifo),
        VisibilityTimeout: String(options.dlqVisibilityTimeoutSeconds ?? 2),
        MessageRetentionPeriod: String(options.dlqRetentionSeconds ?? 1_209_600),
      },
    }),
  );
  const dlqUrl = dlq.QueueUrl as string;
  const parking = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${name}-parking${suffix}`,
      Attributes: fifoAttributes(options.fifo),
    }),
  );
  const parkingUrl = parking.QueueUrl as string;
  return { dlqUrl, dlqArn: await arnOf(sqs, dlqUrl), parkingUrl, parkingArn: await arnOf(sqs, parkingUrl) };
}

/**
 * Creates the DLQ, the parking queue and the source queue (with its redrive policy).
 *
 * @param sqs - an SQS client pointed at the local stack.
 */
export async function createDemoQueues(sqs: SQSClient, options: DemoQueueOptions = {}): Promise<DemoQueues> {
  const name = options.name ?? 'orders';
  const visibilityTimeoutSeconds = options.visibilityTimeoutSeconds ?? 1;
  const maxReceiveCount = options.maxReceiveCount ?? 3;
  const { dlqUrl, dlqArn, parkingUrl, parkingArn } = await createDlqAndParking(sqs, name, options);
  const source = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${name}${options.fifo ? '.fifo' : ''}`,
      Attributes: {
        ...fifoAttributes(options.fifo),
        VisibilityTimeout: String(visibilityTimeoutSeconds),
        ...(options.delaySeconds ? { DelaySeconds: String(options.delaySeconds) } : {}),
        ...(options.maximumMessageSize ? { MaximumMessageSize: String(options.maximumMessageSize) } : {}),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount }),
      },
    }),
  );
  const sourceUrl = source.QueueUrl as string;
  return {
    sourceUrl,
    sourceArn: await arnOf(sqs, sourceUrl),
    dlqUrl,
    dlqArn,
    parkingUrl,
    parkingArn,
    visibilityTimeoutSeconds,
    maxReceiveCount,
    delaySeconds: options.delaySeconds ?? 0,
  };
}

/**
 * Visible, in-flight and delayed message counts of a queue (approximate, as SQS reports them:
 * ApproximateNumberOfMessages counts visible messages only, so visible + in flight counts each
 * message once).
 */
export async function queueDepth(
  sqs: SQSClient,
  queueUrl: string,
): Promise<{ visible: number; inFlight: number; delayed: number }> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  return {
    visible: Number(out.Attributes?.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(out.Attributes?.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}

/**
 * Waits until a queue has no visible, in-flight or delayed messages for `quietMs`.
 * @throws Error when it has held no fewer messages for `timeoutMs` (a stall; a queue that keeps
 * draining is waited for however long it takes).
 */
export async function waitUntilDrained(
  sqs: SQSClient,
  queueUrl: string,
  options: {
    timeoutMs?: number;
    quietMs?: number;
    pollMs?: number;
    /** Called every `progressMs` with what the queue still holds (npm start's story). */
    onProgress?: (left: number) => void | Promise<void>;
    /** @default 3000 */
    progressMs?: number;
  } = {},
): Promise<void> {
  // The deadline is for a stall, not for the whole drain: it moves on whenever the queue holds fewer
  // messages than ever before, so a slow consumer on a loaded machine still drains a deep queue.
  const stallMs = options.timeoutMs ?? 60_000;
  let deadline = Date.now() + stallMs;
  let fewest = Number.POSITIVE_INFINITY;
  const quietMs = options.quietMs ?? 500;
  let quietSince: number | undefined;
  let lastProgress = Date.now();
  for (;;) {
    const { visible, inFlight, delayed } = await queueDepth(sqs, queueUrl);
    if (visible + inFlight + delayed < fewest) {
      fewest = visible + inFlight + delayed;
      deadline = Date.now() + stallMs;
    }
    if (options.onProgress && Date.now() - lastProgress >= (options.progressMs ?? 3000)) {
      lastProgress = Date.now();
      await options.onProgress(visible + inFlight + delayed);
    }
    if (visible === 0 && inFlight === 0 && delayed === 0) {
      quietSince ??= Date.now();
      if (Date.now() - quietSince >= quietMs) return;
    } else quietSince = undefined;
    if (Date.now() > deadline)
      throw new Error(
        `queue ${queueUrl} still has ${visible} visible, ${inFlight} in-flight and ${delayed} delayed messages, and held no fewer for ${stallMs / 1000} s`,
      );
    await sleep(options.pollMs ?? 100);
  }
}
