/**
 * Sending the recording mover's copies to their targets, ten at a time where the API batches:
 * SQS `SendMessageBatch`, SNS `PublishBatch`, EventBridge `PutEvents`, and Lambda `Invoke`
 * (`InvocationType: Event`, one call per copy, run side by side). A target in another account or
 * Region than the DLQ is reached with the clients of its scope (`scopedClients`: the registered
 * role, the Region, locally its endpoint); anything else with the function's own clients.
 *
 * Each copy gets its own outcome (batch entries fail one by one). A whole call that throttles or
 * fails with a 5xx throws `Redrive.Transient` (the step is retried; what was recorded is resumed);
 * any other failure (access denied, target gone, a refused entry) is the copies' outcome, not
 * retryable, so the mover leaves those messages where they are and says why.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html
 * @see https://docs.aws.amazon.com/sns/latest/api/API_PublishBatch.html
 * @see https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEvents.html
 * @see https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html
 */
import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { PublishBatchCommand } from '@aws-sdk/client-sns';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { eventBridgeClient, snsClient, sqsClient } from '#platform/clients.js';
import { awsErrorName, errorMessage, isRetryable, TransientError } from '#platform/errors.js';
import {
  type ClientScope,
  lambdaInvoker,
  type ScopedClients,
  scopedClients,
} from '#platform/scoped-clients.js';
import type { Copy, MoverTarget } from './copy.js';

/** The outcome of one copy. */
export type SendOutcome = { ok: true; sentId: string | null } | { ok: false; code: string; message: string };

/** The sending port of the mover. */
export interface TargetSender {
  /**
   * Sends up to ten copies to one target; outcomes in the copies' order.
   * @param scope - the target's account and Region with its role, when it is not the DLQ's.
   * @throws TransientError when the whole call throttled or failed with a 5xx.
   */
  send(target: MoverTarget, copies: readonly Copy[], scope?: ClientScope): Promise<SendOutcome[]>;
}

/** The function's own clients (the DLQ's account and Region). */
const own: ScopedClients = { sqs: sqsClient, sns: snsClient, eventBridge: eventBridgeClient, lambdaInvoker };

/** Every copy failed with the same error (a whole call refused). */
function allFailed(copies: readonly Copy[], error: unknown, action: string, target: string): SendOutcome[] {
  if (isRetryable(error) || /Throttl|TooManyRequests|RequestLimitExceeded/.test(awsErrorName(error) ?? ''))
    throw new TransientError(`${action} to ${target}: ${errorMessage(error)}`, error);
  const code = awsErrorName(error) ?? 'Error';
  return copies.map(() => ({ ok: false, code, message: errorMessage(error) }));
}

/** The outcome of each entry `0..n-1` of a SendMessageBatch or PublishBatch answer (the same shape). */
function batchOutcomes(
  n: number,
  out: {
    Successful?: Array<{ Id?: string | undefined; MessageId?: string | undefined }> | undefined;
    Failed?:
      | Array<{ Id?: string | undefined; Code?: string | undefined; Message?: string | undefined }>
      | undefined;
  },
): SendOutcome[] {
  return Array.from({ length: n }, (_, i): SendOutcome => {
    const ok = out.Successful?.find((s) => s.Id === String(i));
    if (ok) return { ok: true, sentId: ok.MessageId ?? null };
    const failed = out.Failed?.find((f) => f.Id === String(i));
    return {
      ok: false,
      code: failed?.Code ?? 'Unknown',
      message: failed?.Message ?? 'not in the batch answer',
    };
  });
}

/**
 * Creates the sender.
 * @param options.clients - @default the shared clients, or `scopedClients(scope)` for a scoped target
 */
export function createTargetSender(
  options: { clients?: (scope: ClientScope | undefined) => ScopedClients } = {},
): TargetSender {
  const clientsOf = options.clients ?? ((scope) => (scope ? scopedClients(scope) : own));
  return {
    async send(target, copies, scope) {
      const clients = clientsOf(scope);
      if (copies.length === 0) return [];
      if (target.kind === 'sqs') {
        const entries = copies.map((c, i) => {
          if (c.kind !== 'sqs') throw new Error(`copy ${i} is not for SQS`);
          return {
            Id: String(i),
            MessageBody: c.body,
            ...(Object.keys(c.attributes).length > 0 ? { MessageAttributes: c.attributes } : {}),
            ...(c.groupId ? { MessageGroupId: c.groupId } : {}),
            ...(c.deduplicationId ? { MessageDeduplicationId: c.deduplicationId } : {}),
          };
        });
        try {
          const out = await clients
            .sqs()
            .send(new SendMessageBatchCommand({ QueueUrl: target.url, Entries: entries }));
          return batchOutcomes(copies.length, out);
        } catch (error) {
          return allFailed(copies, error, 'sqs:SendMessageBatch', target.arn);
        }
      }
      if (target.kind === 'sns') {
        const entries = copies.map((c, i) => {
          if (c.kind !== 'sns') throw new Error(`copy ${i} is not for SNS`);
          return {
            Id: String(i),
            Message: c.message,
            ...(c.subject ? { Subject: c.subject } : {}),
            ...(Object.keys(c.attributes).length > 0 ? { MessageAttributes: c.attributes } : {}),
            ...(c.groupId ? { MessageGroupId: c.groupId } : {}),
            ...(c.deduplicationId ? { MessageDeduplicationId: c.deduplicationId } : {}),
          };
        });
        try {
          const out = await clients
            .sns()
            .send(new PublishBatchCommand({ TopicArn: target.arn, PublishBatchRequestEntries: entries }));
          return batchOutcomes(copies.length, out);
        } catch (error) {
          return allFailed(copies, error, 'sns:PublishBatch', target.arn);
        }
      }
      if (target.kind === 'eventbridge') {
        const entries = copies.map((c, i) => {
          if (c.kind !== 'eventbridge') throw new Error(`copy ${i} is not for EventBridge`);
          return {
            Source: c.source,
            DetailType: c.detailType,
            Detail: c.detail,
            Resources: c.resources,
            Time: c.time,
            EventBusName: c.eventBusName,
          };
        });
        try {
          const out = await clients.eventBridge().send(new PutEventsCommand({ Entries: entries }));
          return copies.map((_, i) => {
            const entry = out.Entries?.[i];
            return entry?.EventId
              ? { ok: true, sentId: entry.EventId }
              : {
                  ok: false,
                  code: entry?.ErrorCode ?? 'Unknown',
                  message: entry?.ErrorMessage ?? 'no EventId',
                };
          });
        } catch (error) {
          return allFailed(copies, error, 'events:PutEvents', target.arn);
        }
      }
      // One asynchronous invocation per copy (Lambda has no batch invoke), side by side.
      const invoker = clients.lambdaInvoker();
      return Promise.all(
        copies.map(async (c, i): Promise<SendOutcome> => {
          if (c.kind !== 'lambda') throw new Error(`copy ${i} is not for Lambda`);
          const out = await invoker.invokeAsync(target.arn, c.payload);
          return out.ok ? { ok: true, sentId: out.requestId } : out;
        }),
      );
    },
  };
}
