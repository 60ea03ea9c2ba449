/**
 * Preflight (states `Preflight` and `CheckDlqStillHasMessages`): `{ action, plan, executionName? }` in, the
 * preflight slot out. Refusals are data (`ok: false`); only AWS failures throw.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ListMessageMoveTasks.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { createEnvelopeStore } from '../shared/envelope-store.js';
import { standardMiddleware } from '../shared/middleware.js';
import { createMoveTasks } from '../shared/move-tasks.js';
import { createSqsQueues } from '../shared/sqs-queues.js';
import { createWorkflowLeaseStore } from '../shared/workflow-lease.js';
import { type PreflightDeps, PreflightInput, type PreflightResult, preflight } from './preflight.js';

function deps(): PreflightDeps {
  return {
    queues: createSqsQueues(),
    moveTasks: createMoveTasks(),
    envelopes: createEnvelopeStore(),
    leases: createWorkflowLeaseStore(),
    now: Date.now,
  };
}

/** The Lambda handler. */
export const handler = middy<PreflightInput, PreflightResult>()
  .use(standardMiddleware())
  .use(parser({ schema: PreflightInput }))
  .handler((input) => preflight(input, deps()));
