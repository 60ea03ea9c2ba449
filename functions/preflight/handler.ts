/**
 * Preflight (states `Preflight` and `CheckDlqStillHasMessages`): `{ action, plan, executionName? }` in, the
 * preflight slot out. Refusals are data (`ok: false`); only AWS failures throw.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ListMessageMoveTasks.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { createWorkflowLeaseStore } from '#incident/workflow-lease.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { standardMiddleware } from '#platform/middleware.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { createMoveTasks } from '#transfer/move-tasks.js';
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
