/**
 * SampleRedrive: `{ plan, preflight }` in, `$.sample` out. Sends `plan.sampleSize` messages back
 * to their source queues one by one (record -> send -> delete), safe to retry after a crash.
 * Tests and the local runner can simulate a crash with `setTransferFaultHook` (message-transfer.ts).
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { standardMiddleware } from '#platform/middleware.js';
import { createSampleRedriveDeps } from './deps.js';
import { SampleRedriveInput, type SampleRedriveResult, sampleRedrive } from './sample-redrive.js';

/** The Lambda handler. */
export const handler = middy<SampleRedriveInput, SampleRedriveResult>()
  .use(standardMiddleware())
  .use(parser({ schema: SampleRedriveInput }))
  .handler((input) => sampleRedrive(input, createSampleRedriveDeps()));
