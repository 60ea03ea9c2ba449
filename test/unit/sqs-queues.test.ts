import { describe, expect, it } from 'vitest';
import { AccessDeniedError, QueueNotFoundError, TransientError } from '#platform/errors.js';
import { adaptSqsError } from '#platform/sqs-queues.js';

const sdkError = (name: string, status: number, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status }, ...extra });

describe('SQS error adaptation', () => {
  it('turns QueueDoesNotExist (JSON protocol) and AWS.SimpleQueueService.NonExistentQueue (query protocol) into QueueNotFoundError naming the queue', () => {
    const json = adaptSqsError(sdkError('QueueDoesNotExist', 400), 'sqs:GetQueueUrl', 'orders-dlq');
    const query = adaptSqsError(
      sdkError('SomethingElse', 400, { Code: 'AWS.SimpleQueueService.NonExistentQueue' }),
      'sqs:GetQueueUrl',
      'orders-dlq',
    );
    for (const e of [json, query]) {
      expect(e).toBeInstanceOf(QueueNotFoundError);
      expect((e as Error).message).toBe('queue not found: orders-dlq');
    }
  });

  it('turns AccessDenied into AccessDeniedError naming the action and resource', () => {
    const e = adaptSqsError(sdkError('AccessDenied', 403), 'sqs:ReceiveMessage', 'orders-dlq');
    expect(e).toBeInstanceOf(AccessDeniedError);
    expect((e as Error).message).toBe('access denied: sqs:ReceiveMessage on orders-dlq');
  });

  it('turns throttling and 5xx into a retryable TransientError and passes anything else through', () => {
    expect(adaptSqsError(sdkError('RequestThrottled', 400), 'sqs:ReceiveMessage', 'q')).toBeInstanceOf(
      TransientError,
    );
    expect(adaptSqsError(sdkError('InternalError', 500), 'sqs:ReceiveMessage', 'q')).toBeInstanceOf(
      TransientError,
    );
    const other = sdkError('InvalidAttributeName', 400);
    expect(adaptSqsError(other, 'sqs:GetQueueAttributes', 'q')).toBe(other);
  });
});
