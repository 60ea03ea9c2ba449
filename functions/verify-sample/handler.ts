/**
 * VerifySample: `{ plan, sample }` in, `$.verify` out. Peeks the DLQ for returned samples and counts
 * samples consumers recorded as processed.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { standardMiddleware } from '#platform/middleware.js';
import { createVerifySampleDeps } from './deps.js';
import { VerifySampleInput, type VerifySampleResult, verifySample } from './verify-sample.js';

/** The Lambda handler. */
export const handler = middy<VerifySampleInput, VerifySampleResult>()
  .use(standardMiddleware())
  .use(parser({ schema: VerifySampleInput }))
  .handler((input) => verifySample(input, createVerifySampleDeps()));
