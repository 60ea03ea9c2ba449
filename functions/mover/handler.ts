/**
 * Mover (states `MoverSample` and `MoverStep`): `{ action, plan, preflight, mover? }` in; `$.sample`
 * (action `sample`) or `$.mover` (action `step`) out. The recording mover for what a move task
 * cannot do: non-SQS DLQs, selections, un-park, edits, other accounts and Regions (mover.ts).
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { standardMiddleware } from '#platform/middleware.js';
import { createMoverDeps } from './deps.js';
import { MoverInput, type MoverSampleResult, type MoverState, moverSample, moverStep } from './mover.js';

/** The Lambda handler. */
export const handler = middy<MoverInput, MoverSampleResult | MoverState>()
  .use(standardMiddleware())
  .use(parser({ schema: MoverInput }))
  .handler((input, context) =>
    input.action === 'sample'
      ? moverSample(input, createMoverDeps(context))
      : moverStep(input, createMoverDeps(context)),
  );
