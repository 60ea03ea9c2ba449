/**
 * ContinueInventory: `{ plan, loop, executionName }` in, `$.inventory` out. One bounded step of the
 * inventory triage handed over; the workflow loops until it is complete.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { standardMiddleware } from '#platform/middleware.js';
import {
  ContinueInventoryInput,
  type ContinueInventoryResult,
  continueInventory,
} from './continue-inventory.js';
import { createContinueInventoryDeps } from './deps.js';

/** The Lambda handler. */
export const handler = middy<ContinueInventoryInput, ContinueInventoryResult>()
  .use(standardMiddleware())
  .use(parser({ schema: ContinueInventoryInput }))
  .handler(async (input, context) => continueInventory(input, await createContinueInventoryDeps(context)));
