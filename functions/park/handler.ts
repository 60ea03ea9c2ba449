/**
 * Park: `{ plan }` in, `$.park` out. Moves do-not-redrive messages from the DLQ to the parking
 * queue (or discards them when `plan.discardPoison`), record -> send -> delete (case C07).
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { createEnvelopeStore } from '../shared/envelope-store.js';
import { createTransferSqs } from '../shared/message-transfer.js';
import { standardMiddleware } from '../shared/middleware.js';
import { createRedriveLedger } from '../shared/redrive-ledger.js';
import { createSqsQueues } from '../shared/sqs-queues.js';
import { type ParkDeps, ParkInput, type ParkResult, park } from './park.js';

function deps(): ParkDeps {
  const vt = Number(process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS);
  return {
    queues: createSqsQueues(),
    envelopes: createEnvelopeStore(),
    ledger: createRedriveLedger(),
    sqs: createTransferSqs(),
    ...(Number.isInteger(vt) && vt > 0 ? { visibilityTimeoutSeconds: vt } : {}),
  };
}

/** The Lambda handler. */
export const handler = middy<ParkInput, ParkResult>()
  .use(standardMiddleware())
  .use(parser({ schema: ParkInput }))
  .handler((input) => park(input, deps()));
