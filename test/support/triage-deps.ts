/**
 * Triage's ports on the local stack, as the triage integration tests build them: the real stores
 * (SQS stand-in, DynamoDB Local), a workflow starter the test passes in, silent logs.
 */
import { createIncidentStore } from '#incident/incident-store.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { createInventorySessionStore } from '#inventory/inventory-session.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import type { TriageConfig, TriageDeps } from '../../functions/triage/triage.js';
import type { WorkflowStarter } from '../../functions/triage/workflow-starter.js';

/**
 * @param options.budgets - over 5,000 messages, 10,000 pages, a 1 s safety margin.
 * @param options.remainingTimeMs - the invocation's time left. @default 60 s
 * @param options.requestId - the Lambda request id (a retry repeats it).
 */
export function localTriageDeps(
  workflow: WorkflowStarter,
  options: {
    budgets?: Partial<TriageConfig['budgets']>;
    remainingTimeMs?: () => number;
    requestId?: string;
  } = {},
): TriageDeps {
  return {
    queues: createSqsQueues(),
    envelopes: createEnvelopeStore(),
    sessions: createInventorySessionStore(),
    incidents: createIncidentStore(),
    registry: createQueueRegistry(),
    workflow,
    now: () => Date.now(),
    remainingTimeMs: options.remainingTimeMs ?? (() => 60_000),
    config: {
      budgets: { messageBudget: 5000, pageBudget: 10_000, safetyMarginMs: 1_000, ...options.budgets },
      alarmQueueMap: {},
    },
    log: { info: () => undefined, warn: () => undefined },
    ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
  };
}
