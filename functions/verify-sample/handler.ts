/**
 * VerifySample: `{ plan, sample }` in, `$.verify` out. Peeks the DLQ for returned samples and counts
 * samples consumers recorded as processed.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { createProcessedKeys } from '#consumer/consumer-idempotency.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { standardMiddleware } from '#platform/middleware.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import {
  type VerifySampleDeps,
  VerifySampleInput,
  type VerifySampleResult,
  verifySample,
} from './verify-sample.js';

function deps(): VerifySampleDeps {
  return { queues: createSqsQueues(), envelopes: createEnvelopeStore(), processed: createProcessedKeys() };
}

/** The Lambda handler. */
export const handler = middy<VerifySampleInput, VerifySampleResult>()
  .use(standardMiddleware())
  .use(parser({ schema: VerifySampleInput }))
  .handler((input) => verifySample(input, deps()));
