/**
 * Reconcile: `{ plan, outcome }` in, `$.reconcile` out. Final inventory, one state per envelope,
 * conservation check written to the incident.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { createIncidentStore } from '#incident/incident-store.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { standardMiddleware } from '#platform/middleware.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { createMoveTasks } from '#transfer/move-tasks.js';
import { createRedriveLedger } from '#transfer/redrive-ledger.js';
import { type ReconcileDeps, ReconcileInput, type ReconcileResult, reconcile } from './reconcile.js';

function deps(context: Context): ReconcileDeps {
  return {
    queues: createSqsQueues(),
    envelopes: createEnvelopeStore(),
    ledger: createRedriveLedger(),
    moveTasks: createMoveTasks(),
    registrations: createQueueRegistry(),
    incidents: createIncidentStore(),
    remainingTimeMs: () => context.getRemainingTimeInMillis?.() ?? 300_000,
    now: Date.now,
  };
}

/** The Lambda handler. */
export const handler = middy<ReconcileInput, ReconcileResult>()
  .use(standardMiddleware())
  .use(parser({ schema: ReconcileInput }))
  .handler((input, context) => reconcile(input, deps(context)));
