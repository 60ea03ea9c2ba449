/**
 * Queue ARN to queue URL, with GetQueueUrl: the ARN's name as `QueueName` and its account as
 * `QueueOwnerAWSAccountId` (so a DLQ owned by another account resolves when its policy allows).
 * SDK errors become pipeline errors at this boundary, with the shared SQS error adapter.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_GetQueueUrl.html
 */
import { GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { parseSqsArn } from '#incident/execution-input.js';
import { InvalidInputError, QueueNotFoundError, toRedriveError } from '#platform/errors.js';
import { adaptSqsError } from '#platform/sqs-queues.js';
import type { QueueLocator } from './validate-input.js';

/**
 * A {@link QueueLocator} over an SQS client.
 *
 * @param sqs - the SQS client (its region is the only region it can resolve).
 * @throws from `queueUrl`: QueueNotFoundError (`Redrive.QueueNotFound`), AccessDeniedError
 *   (`Redrive.AccessDenied`), TransientError (`Redrive.Transient`) for throttling and 5xx.
 */
export function createQueueLocator(sqs: SQSClient): QueueLocator {
  return {
    async queueUrl(queueArn) {
      const arn = parseSqsArn(queueArn);
      if (!arn) throw new InvalidInputError('invalid queue ARN', [`${queueArn}: must be an SQS ARN`]);
      const out = await sqs
        .send(new GetQueueUrlCommand({ QueueName: arn.queueName, QueueOwnerAWSAccountId: arn.accountId }))
        .catch((error: unknown) => {
          throw toRedriveError(adaptSqsError(error, 'sqs:GetQueueUrl', queueArn));
        });
      if (!out.QueueUrl) throw new QueueNotFoundError(queueArn);
      return out.QueueUrl;
    },
  };
}
