/**
 * Queue ARN to queue URL, with GetQueueUrl: the ARN's name as `QueueName` and its account as
 * `QueueOwnerAWSAccountId` (so a DLQ owned by another account resolves when its policy allows).
 * SDK errors become pipeline errors at this boundary.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_GetQueueUrl.html
 */
import { GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import {
  AccessDeniedError,
  awsErrorName,
  InvalidInputError,
  QueueNotFoundError,
  toRedriveError,
} from '../shared/errors.js';
import { parseSqsArn } from '../shared/execution-input.js';
import type { QueueLocator } from './validate-input.js';

/** SDK error names of a missing queue (JSON protocol, then the legacy Query protocol code). */
const NOT_FOUND = new Set([
  'QueueDoesNotExist',
  'AWS.SimpleQueueService.NonExistentQueue',
  'NonExistentQueue',
]);
const DENIED = new Set(['AccessDenied', 'AccessDeniedException', 'KMS.AccessDeniedException']);

/**
 * A {@link QueueLocator} over an SQS client.
 *
 * @param sqs - the SQS client (its region is the only region it can resolve).
 * @throws QueueNotFoundError (`Redrive.QueueNotFound`), AccessDeniedError (`Redrive.AccessDenied`),
 *   TransientError (`Redrive.Transient`) for throttling and 5xx, from `queueUrl`.
 */
export function createQueueLocator(sqs: SQSClient): QueueLocator {
  return {
    async queueUrl(queueArn) {
      const arn = parseSqsArn(queueArn);
      if (!arn) throw new InvalidInputError('invalid queue ARN', [`${queueArn}: must be an SQS ARN`]);
      try {
        const out = await sqs.send(
          new GetQueueUrlCommand({ QueueName: arn.queueName, QueueOwnerAWSAccountId: arn.accountId }),
        );
        if (!out.QueueUrl) throw new QueueNotFoundError(queueArn);
        return out.QueueUrl;
      } catch (error) {
        const name = awsErrorName(error) ?? '';
        if (NOT_FOUND.has(name)) throw new QueueNotFoundError(queueArn, error);
        if (DENIED.has(name)) throw new AccessDeniedError('sqs:GetQueueUrl', queueArn, error);
        throw toRedriveError(error);
      }
    },
  };
}
