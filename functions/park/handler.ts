/**
 * Park: `{ plan }` in, `$.park` out. Moves do-not-redrive messages from the DLQ to the parking
 * queue (or discards them when `plan.discardPoison`), record -> send -> delete (case C07).
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { standardMiddleware } from '#platform/middleware.js';
import { transferDepsFromEnv } from '#transfer/transfer-deps.js';
import { type ParkDeps, ParkInput, type ParkResult, park } from './park.js';

function deps(): ParkDeps {
  return transferDepsFromEnv();
}

/** The Lambda handler. */
export const handler = middy<ParkInput, ParkResult>()
  .use(standardMiddleware())
  .use(parser({ schema: ParkInput }))
  .handler((input) => park(input, deps()));
