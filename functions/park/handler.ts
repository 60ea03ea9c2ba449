/**
 * Park: `{ plan }` in, `$.park` out. Moves do-not-redrive messages from the DLQ to the parking
 * queue (or discards them when `plan.discardPoison`), record -> send -> delete.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { standardMiddleware } from '#platform/middleware.js';
import { createParkDeps } from './deps.js';
import { ParkInput, type ParkResult, park } from './park.js';

/** The Lambda handler. */
export const handler = middy<ParkInput, ParkResult>()
  .use(standardMiddleware())
  .use(parser({ schema: ParkInput }))
  .handler((input) => park(input, createParkDeps()));
