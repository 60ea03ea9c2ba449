/**
 * Reconcile: `{ plan, outcome }` in, `$.reconcile` out. Final inventory, one state per envelope,
 * conservation check written to the incident.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { standardMiddleware } from '#platform/middleware.js';
import { createReconcileDeps } from './deps.js';
import { ReconcileInput, type ReconcileResult, reconcile } from './reconcile.js';

/** The Lambda handler. */
export const handler = middy<ReconcileInput, ReconcileResult>()
  .use(standardMiddleware())
  .use(parser({ schema: ReconcileInput }))
  .handler((input, context) => reconcile(input, createReconcileDeps(context)));
