/**
 * Reconcile: `{ plan, outcome }` in, `$.reconcile` out. Final inventory, one state per envelope,
 * conservation check written to the incident.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { createEnvelopeStore } from '../shared/envelope-store.js';
import { createIncidentStore } from '../shared/incident-store.js';
import { standardMiddleware } from '../shared/middleware.js';
import { createMoveTasks } from '../shared/move-tasks.js';
import { createQueueRegistry } from '../shared/queue-registry.js';
import { createRedriveLedger } from '../shared/redrive-ledger.js';
import { createSqsQueues } from '../shared/sqs-queues.js';
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
