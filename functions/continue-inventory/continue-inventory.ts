/**
 * ContinueInventory: one bounded step of the inventory that triage handed over (the workflow's
 * inventory loop, before Preflight and the approval). Each invocation runs
 * `inventoryStep` (functions/shared/inventory/inventory-session.ts) within its Lambda's time and
 * message budget, updates the incident's summary, and says whether the loop goes on, is done, or
 * must continue in a new execution because this one's history is filling up.
 *
 * The loop costs `HISTORY_EVENTS_PER_STEP` history events and 2 state transitions per step, and a
 * step inventories up to the message budget (5,000 by default): transitions grow with pages of
 * messages, never with messages.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html (25,000 history events)
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/connect-stepfunctions.html (startExecution)
 */
import { ExecutionPlan } from '#incident/execution-input.js';
import type { IncidentStore } from '#incident/incident-store.js';
import type { Notifier } from '#incident/notifier.js';
import type { QueueRegistry } from '#incident/queue-registry.js';
import type { EnvelopeStore } from '#inventory/envelope-store.js';
import type { InventoryBudgets } from '#inventory/inventory.js';
import {
  HANDOVER_MARGIN_MS,
  type InventorySessionStore,
  inventoryStep,
  summaryOfSession,
} from '#inventory/inventory-session.js';
import { RecordNotFoundError, RedriveRefusedError } from '#platform/errors.js';
import type { SqsQueues } from '#platform/sqs-queues.js';
import * as z from '#platform/zod.js';

/**
 * History events before the loop's first step: ExecutionStarted, ValidateInput (entered,
 * scheduled, started, succeeded, exited), `InventoryPending?` and `StartInventoryLoop` (2 each).
 */
export const HISTORY_EVENTS_BEFORE_LOOP = 10;
/**
 * History events of one step: ContinueInventory (5) and `InventoryDone?` (2), plus room for one
 * retried attempt (3): the estimate never counts fewer events than Step Functions records.
 */
export const HISTORY_EVENTS_PER_STEP = 10;
/**
 * Share of an execution's history events the inventory loop may use before it continues in a new
 * execution; the rest is left to the approval, park, sample, verification and the ramp's own
 * loop, which is bounded separately.
 */
export const INVENTORY_HISTORY_SHARE = 0.2;

/** The loop's state between steps (`$.inventory` of the previous step, or the loop's start). */
export const InventoryLoop = z.looseObject({
  /** Steps this execution has run. */
  steps: z._default(z.number().check(z.int(), z.gte(0)), 0),
});

/** Input of the ContinueInventory function. */
export const ContinueInventoryInput = z.object({
  plan: ExecutionPlan,
  loop: z._default(InventoryLoop, { steps: 0 }),
  /** `$$.Execution.Name`: names the continuation execution. */
  executionName: z.string().check(z.minLength(1, 'executionName must not be empty')),
});
export type ContinueInventoryInput = z.infer<typeof ContinueInventoryInput>;

/** `$.inventory` (docs/contracts.md): ids and counts only. Times are epoch milliseconds. */
export interface ContinueInventoryResult {
  inventoryId: string;
  status: 'running' | 'complete';
  /** Steps this execution has run (the loop's counter). */
  steps: number;
  /** Steps of the whole inventory, triage's first one included. */
  invocations: number;
  inventoried: number;
  depthAtStart: number;
  held: number;
  holdUntil: number;
  sampled: boolean;
  /** Messages of the DLQ this inventory did not see (an estimate: depth at start - inventoried). */
  unseen: number;
  /** History events this execution has used, estimated from above. */
  historyEvents: number;
  /** True when this execution must hand the loop to a new one (`ContinueInventoryInNewExecution`). */
  continueAsNew: boolean;
  /** The new execution: its name and the input fields merged into this one's. Null unless `continueAsNew`. */
  continuation: { executionName: string; input: { inventoryId: string; continuation: number } } | null;
}

/** Ports of {@link continueInventory}. */
export interface ContinueInventoryDeps {
  queues: Pick<SqsQueues, 'describe' | 'receive' | 'changeVisibility'>;
  envelopes: EnvelopeStore;
  sessions: InventorySessionStore;
  incidents: Pick<IncidentStore, 'updateIncident' | 'claimInventory' | 'releaseInventory'>;
  registry: QueueRegistry;
  notifier?: Notifier;
  budgets: InventoryBudgets;
  /** Lambda's `context.getRemainingTimeInMillis`. */
  remainingTimeMs: () => number;
  /** Epoch milliseconds. */
  now: () => number;
}

/** Step Functions' limit on execution names. */
const MAX_EXECUTION_NAME = 80;

/** The name of the `n`-th continuation of an execution: `<first execution's name>-c<n>`, at most 80 characters. */
export function continuationName(executionName: string, n: number): string {
  const base = executionName.replace(/-c\d+$/, '');
  const suffix = `-c${n}`;
  return `${base.slice(0, MAX_EXECUTION_NAME - suffix.length)}${suffix}`;
}

/**
 * Runs one step of the plan's inventory.
 *
 * @throws RedriveRefusedError when another inventory holds the DLQ's inventory lease.
 * @throws TransientError on throttling/5xx (the step is safe to retry: what it could not record
 *   is released, and its retry does not count twice what it stored).
 */
export async function continueInventory(
  input: ContinueInventoryInput,
  deps: ContinueInventoryDeps,
): Promise<ContinueInventoryResult> {
  const { plan } = input;
  const inventoryId = plan.inventoryId ?? plan.incidentId;
  const dlq = await deps.queues.describe(plan.dlqUrl);
  const registration = await deps.registry.getRegistration(plan.dlqArn);
  const before = await deps.sessions.get(plan.dlqArn, inventoryId);
  const leaseOwner = before?.leaseOwner ?? plan.incidentId;
  if (before?.status !== 'COMPLETE') {
    const lease = await deps.incidents.claimInventory(
      {
        dlqArn: plan.dlqArn,
        owner: leaseOwner,
        leaseExpiresAt:
          Math.max(before?.holdUntil ?? 0, deps.now() + deps.remainingTimeMs()) + HANDOVER_MARGIN_MS,
      },
      deps.now(),
    );
    if (!lease.claimed)
      throw new RedriveRefusedError(
        `another inventory (${lease.holder ?? 'unknown'}) holds ${dlq.name} now; this one cannot go on without holding what it has seen`,
      );
  }
  const step = await inventoryStep(
    { dlq, registration, incidentId: inventoryId, leaseOwner, budgets: deps.budgets },
    deps,
  );
  const { session } = step;
  const complete = step.status === 'complete';
  const now = deps.now();
  const { summary, incidentClassification } = summaryOfSession(session, now);
  // A console start that took over a triage that died before opening its incident (ValidateInput,
  // abandoned session) has no incident item: the run's records and report carry the counts.
  await deps.incidents
    .updateIncident(plan.incidentId, { summary, updatedAt: new Date(now).toISOString() })
    .catch((error: unknown) => {
      if (!(error instanceof RecordNotFoundError)) throw error;
    });
  if (complete) {
    await deps.incidents.releaseInventory(plan.dlqArn, leaseOwner);
    if (incidentClassification && step.run)
      await deps.notifier?.notify({
        incidentId: plan.incidentId,
        kind: 'systemic',
        text: `${dlq.name}: ${incidentClassification.reason} (${summary.messageCount} messages, ${summary.causes[0]?.errorClass ?? '<none>'})`,
        fields: { dlqArn: plan.dlqArn, messages: summary.messageCount },
      });
  } else
    await deps.incidents.claimInventory(
      { dlqArn: plan.dlqArn, owner: leaseOwner, leaseExpiresAt: session.holdUntil + HANDOVER_MARGIN_MS },
      now,
    );

  const steps = input.loop.steps + 1;
  const historyEvents = HISTORY_EVENTS_BEFORE_LOOP + steps * HISTORY_EVENTS_PER_STEP;
  const budget = Math.floor(plan.historyEventLimit * INVENTORY_HISTORY_SHARE);
  const continueAsNew = !complete && historyEvents + HISTORY_EVENTS_PER_STEP > budget;
  const next = plan.continuation + 1;
  return {
    inventoryId,
    status: complete ? 'complete' : 'running',
    steps,
    invocations: session.invocations,
    inventoried: session.inventoried,
    depthAtStart: session.depthAtStart,
    held: session.held,
    holdUntil: session.holdUntil,
    sampled: session.sampled,
    unseen: Math.max(0, session.depthAtStart - session.inventoried),
    historyEvents,
    continueAsNew,
    continuation: continueAsNew
      ? {
          executionName: continuationName(input.executionName, next),
          input: { inventoryId, continuation: next },
        }
      : null,
  };
}
