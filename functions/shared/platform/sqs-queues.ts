/**
 * SQS access for triage (and anyone who needs queue lookups): queue URL and attributes,
 * dead-letter source queues, the inventory's receive and release calls. SDK errors are adapted at
 * this boundary: `QueueDoesNotExist` becomes {@link QueueNotFoundError}, `AccessDenied` becomes
 * {@link AccessDeniedError}, throttling and 5xx become {@link TransientError}.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_Operations.html
 */
import {
  ChangeMessageVisibilityBatchCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListDeadLetterSourceQueuesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { sqsClient } from './clients.js';
import {
  AccessDeniedError,
  awsErrorName,
  isRetryable,
  KmsKeyError,
  QueueNotFoundError,
  TransientError,
} from './errors.js';

/** The facts about a queue that triage and the workflow use. */
export interface QueueInfo {
  url: string;
  arn: string;
  name: string;
  fifo: boolean;
  /** MessageRetentionPeriod, seconds. */
  retentionPeriodSeconds: number;
  /** VisibilityTimeout, seconds. */
  visibilityTimeoutSeconds: number;
  /**
   * ApproximateNumberOfMessages at lookup time: visible messages (`visible + inFlight + delayed`
   * is the queue's depth).
   */
  visible: number;
  /** ApproximateNumberOfMessagesNotVisible at lookup time. */
  inFlight: number;
  /** ApproximateNumberOfMessagesDelayed at lookup time (delay queues, per-message timers). */
  delayed: number;
  /** DelaySeconds: how long every new message stays hidden, seconds. */
  delaySeconds: number;
  /** MaximumMessageSize: body plus message attributes, bytes. */
  maximumMessageSize: number;
  /** The queue's own RedrivePolicy, parsed, when it has one. */
  redrivePolicy: { deadLetterTargetArn: string; maxReceiveCount: number } | null;
  attributes: Record<string, string>;
}

/** The SQS port. */
export interface SqsQueues {
  /** GetQueueUrl (with the owner account) then GetQueueAttributes(All). */
  resolveByName(queueName: string, ownerAccount?: string): Promise<QueueInfo>;
  describe(url: string): Promise<QueueInfo>;
  /** ListDeadLetterSourceQueues, all pages: the source queue URLs of a DLQ. */
  listDeadLetterSourceQueues(dlqUrl: string): Promise<string[]>;
  /** One ReceiveMessage of up to 10 messages with every attribute. */
  receive(
    url: string,
    opts: { visibilityTimeoutSeconds: number; waitTimeSeconds: number },
  ): Promise<Message[]>;
  /** ChangeMessageVisibilityBatch in groups of 10; returns how many failed. */
  changeVisibility(
    url: string,
    receiptHandles: readonly string[],
    visibilityTimeoutSeconds: number,
  ): Promise<number>;
}

/**
 * Maps an SQS SDK error to the pipeline's errors.
 * @param resource - the queue name or URL, for the message.
 */
export function adaptSqsError(error: unknown, action: string, resource: string): unknown {
  const name = awsErrorName(error) ?? (error as { name?: string } | null)?.name;
  const code = (error as { Code?: string } | null)?.Code;
  if (
    name === 'QueueDoesNotExist' ||
    name === 'AWS.SimpleQueueService.NonExistentQueue' ||
    code === 'AWS.SimpleQueueService.NonExistentQueue'
  )
    return new QueueNotFoundError(resource, error);
  if (name === 'AccessDenied' || name === 'AccessDeniedException' || code === 'AccessDenied')
    return new AccessDeniedError(action, resource, error);
  const kms = kmsErrorName(name, code);
  // A throttled KMS call is transient (the ASL retries Redrive.Transient); the rest are the key's state.
  if (kms === 'KmsThrottled') return new TransientError(`${action} on ${resource}: ${kms}`, error);
  if (kms) return new KmsKeyError(resource, kmsActionOf(action), kms, (error as Error).message, error);
  if (isRetryable(error) || name === 'RequestThrottled' || name === 'ThrottlingException')
    return new TransientError(`${action} on ${resource}: ${(error as Error).message}`, error);
  return error;
}

/** SQS's KMS error names, by their legacy (query) codes too. */
const KMS_ERRORS: Readonly<Record<string, string>> = {
  'KMS.AccessDeniedException': 'KmsAccessDenied',
  'KMS.DisabledException': 'KmsDisabled',
  'KMS.InvalidKeyUsageException': 'KmsInvalidKeyUsage',
  'KMS.InvalidStateException': 'KmsInvalidState',
  'KMS.NotFoundException': 'KmsNotFound',
  'KMS.OptInRequired': 'KmsOptInRequired',
  'KMS.ThrottlingException': 'KmsThrottled',
};

function kmsErrorName(name: string | undefined, code: string | undefined): string | undefined {
  if (name && Object.values(KMS_ERRORS).includes(name)) return name;
  return (name && KMS_ERRORS[name]) ?? (code && KMS_ERRORS[code]) ?? undefined;
}

/**
 * The KMS action SQS needed for the caller: receiving decrypts, sending generates a data key.
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-key-management.html
 */
function kmsActionOf(sqsAction: string): string {
  return /SendMessage/.test(sqsAction) ? 'kms:GenerateDataKey' : 'kms:Decrypt';
}

function parseRedrivePolicy(raw: string | undefined): QueueInfo['redrivePolicy'] {
  if (!raw) return null;
  try {
    const p = JSON.parse(raw) as { deadLetterTargetArn?: string; maxReceiveCount?: number | string };
    if (!p.deadLetterTargetArn) return null;
    return { deadLetterTargetArn: p.deadLetterTargetArn, maxReceiveCount: Number(p.maxReceiveCount ?? 0) };
  } catch {
    return null;
  }
}

/** Visible + in flight + delayed: every message a queue holds (approximate, as SQS counts). */
export function queueDepth(info: Pick<QueueInfo, 'visible' | 'inFlight' | 'delayed'>): number {
  return info.visible + info.inFlight + info.delayed;
}

/** Queue name from a queue URL (last path segment). */
export function queueNameOfUrl(url: string): string {
  return url.replace(/\/+$/, '').split('/').pop() ?? url;
}

/**
 * Creates the SQS port.
 * @param options.client - @default the shared client
 */
export function createSqsQueues(options: { client?: SQSClient } = {}): SqsQueues {
  const client = () => options.client ?? sqsClient();
  const call = async <T>(action: string, resource: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      throw adaptSqsError(error, action, resource);
    }
  };

  const describe = async (url: string): Promise<QueueInfo> => {
    const out = await call('sqs:GetQueueAttributes', url, () =>
      client().send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] })),
    );
    const a = out.Attributes ?? {};
    const arn = a.QueueArn ?? '';
    const name = arn.split(':').pop() || queueNameOfUrl(url);
    const inFlight = Number(a.ApproximateNumberOfMessagesNotVisible ?? 0);
    return {
      url,
      arn,
      name,
      fifo: a.FifoQueue === 'true' || name.endsWith('.fifo'),
      retentionPeriodSeconds: Number(a.MessageRetentionPeriod ?? 345_600),
      visibilityTimeoutSeconds: Number(a.VisibilityTimeout ?? 30),
      visible: Number(a.ApproximateNumberOfMessages ?? 0),
      inFlight,
      delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
      delaySeconds: Number(a.DelaySeconds ?? 0),
      maximumMessageSize: Number(a.MaximumMessageSize ?? 262_144),
      redrivePolicy: parseRedrivePolicy(a.RedrivePolicy),
      attributes: a,
    };
  };

  return {
    async resolveByName(queueName, ownerAccount) {
      const out = await call('sqs:GetQueueUrl', queueName, () =>
        client().send(
          new GetQueueUrlCommand({
            QueueName: queueName,
            ...(ownerAccount ? { QueueOwnerAWSAccountId: ownerAccount } : {}),
          }),
        ),
      );
      if (!out.QueueUrl) throw new QueueNotFoundError(queueName);
      return describe(out.QueueUrl);
    },
    describe,
    async listDeadLetterSourceQueues(dlqUrl) {
      const urls: string[] = [];
      let token: string | undefined;
      do {
        const out = await call('sqs:ListDeadLetterSourceQueues', dlqUrl, () =>
          client().send(
            new ListDeadLetterSourceQueuesCommand({
              QueueUrl: dlqUrl,
              MaxResults: 1000,
              ...(token ? { NextToken: token } : {}),
            }),
          ),
        );
        urls.push(...(out.queueUrls ?? []));
        token = out.NextToken;
      } while (token);
      return urls;
    },
    async receive(url, opts) {
      const out = await call('sqs:ReceiveMessage', url, () =>
        client().send(
          new ReceiveMessageCommand({
            QueueUrl: url,
            MaxNumberOfMessages: 10,
            VisibilityTimeout: opts.visibilityTimeoutSeconds,
            WaitTimeSeconds: opts.waitTimeSeconds,
            MessageAttributeNames: ['All'],
            // Both the current parameter and the older one SQS still takes.
            MessageSystemAttributeNames: ['All'],
            AttributeNames: ['All'],
          }),
        ),
      );
      return out.Messages ?? [];
    },
    async changeVisibility(url, receiptHandles, visibilityTimeoutSeconds) {
      const slices: string[][] = [];
      for (let i = 0; i < receiptHandles.length; i += 10) slices.push(receiptHandles.slice(i, i + 10));
      let failed = 0;
      let next = 0;
      // A few batches at a time: releasing thousands of held messages should not take minutes.
      const worker = async () => {
        while (next < slices.length) {
          const slice = slices[next++] as string[];
          const out = await call('sqs:ChangeMessageVisibilityBatch', url, () =>
            client().send(
              new ChangeMessageVisibilityBatchCommand({
                QueueUrl: url,
                Entries: slice.map((ReceiptHandle, j) => ({
                  Id: String(j),
                  ReceiptHandle,
                  VisibilityTimeout: visibilityTimeoutSeconds,
                })),
              }),
            ),
          );
          failed += out.Failed?.length ?? 0;
        }
      };
      await Promise.all(Array.from({ length: Math.min(4, slices.length) }, worker));
      return failed;
    },
  };
}
