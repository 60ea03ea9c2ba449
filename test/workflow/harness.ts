/**
 * Workflow test harness: one incident end to end on the local stack, with the real triage handler,
 * the real ASL and the real task handlers (through {@link LocalWorkflowRunner}), and the demo's
 * failing consumer, on the same path as `npm start` (local/demo/run-scenario.ts `runLocalIncident`).
 * Each test file starts its own local stack; scenarios use distinct queue names.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import type { EnvelopeState, QueueRegistration } from '#inventory/model.js';
import type { TriageResult } from '../../functions/triage/triage.js';
import { type Approver, autoApprover } from '../../local/approver.js';
import { queueDepth } from '../../local/demo/queues.js';
import { type ReconcileCounts, reconcileOf } from '../../local/demo/report.js';
import { runLocalIncident } from '../../local/demo/run-scenario.js';
import type { PreparedIncident } from '../../local/demo/scenario.js';
import type { ExecutionResult, LocalWorkflowRunner, RunnerOptions } from '../../local/runner.js';
import type { LocalWorkflowStarter } from '../../local/workflow-starter-local.js';
import { scaled } from '../support/timeouts.js';

/** Options of {@link runIncident}. */
export interface IncidentOptions {
  /** Source queue name, unique within the test file. */
  name: string;
  /** @default 60 */
  messages?: number;
  /** @default 10 */
  poisonEvery?: number;
  /** @default 0 (the dependency is down from the start: every message dead-letters) */
  outageAfterProcessed?: number;
  /** Parallel receive loops of the consumer. @default 2 */
  consumerConcurrency?: number;
  /** @default auto-approval */
  approver?: Approver;
  /** End the outage when the approval arrives (the fix is deployed). @default true */
  fixOnApproval?: boolean;
  /** Extra runner options (bindings, timeouts). */
  runner?: Partial<RunnerOptions>;
  registration?: Partial<QueueRegistration>;
  /** Runs after the DLQ is full and before the alarm fires. */
  beforeTriage?: (incident: PreparedIncident) => Promise<void>;
  /** Runs after each Task state's result (a fault between two steps: a queue changed by hand...). */
  afterTask?: (state: string, incident: PreparedIncident) => Promise<void>;
  /** Execution input fields triage does not set (selection, unpark, transform). */
  input?: Record<string, unknown>;
  /** Order ids are integers from this one on, JSON numbers in the body. */
  numericIdsFrom?: bigint;
}

/** Everything a test may assert on. */
export interface IncidentRun {
  incident: PreparedIncident;
  runner: LocalWorkflowRunner;
  starter: LocalWorkflowStarter;
  triage: TriageResult;
  alarmEvent: unknown;
  incidentId: string;
  result: ExecutionResult;
  reconcile: ReconcileCounts | undefined;
  /** Visible + in-flight messages left in the DLQ after the run. */
  dlqDepthAfter: number;
}

/** Fills a DLQ, fires its alarm through the real triage handler and waits for the workflow. */
export async function runIncident(sqs: SQSClient, options: IncidentOptions): Promise<IncidentRun> {
  const approver = options.approver ?? autoApprover();
  const fix = options.fixOnApproval ?? true;
  const { beforeTriage, runner, afterTask } = options;
  const run = await runLocalIncident({
    setup: {
      name: options.name,
      messages: options.messages ?? 60,
      poisonEvery: options.poisonEvery ?? 10,
      outageAfterProcessed: options.outageAfterProcessed ?? 0,
      registration: { dwellSeconds: 1, rampRates: [50, 500], ...options.registration },
      ...(options.consumerConcurrency ? { consumerConcurrency: options.consumerConcurrency } : {}),
      ...(options.numericIdsFrom !== undefined ? { numericIdsFrom: options.numericIdsFrom } : {}),
    },
    approver,
    onApproved: (ctx) => {
      if (fix) ctx.incident.consumer.endOutage();
    },
    ...(beforeTriage ? { beforeTriage: (ctx) => beforeTriage(ctx.incident) } : {}),
    ...(runner ? { runner: () => runner } : {}),
    ...(afterTask ? { onTaskResult: (ctx, state) => afterTask(state, ctx.incident) } : {}),
    retryIntervalMs: 100,
    lambdaTimeoutMs: scaled(60_000),
    ...(options.input ? { input: options.input } : {}),
  });
  const after = await queueDepth(sqs, run.incident.queues.dlqUrl);
  return {
    incident: run.incident,
    runner: run.runner,
    starter: run.starter,
    triage: run.triage,
    alarmEvent: run.alarmEvent,
    incidentId: run.triage.queues[0]?.incidentId ?? '',
    result: run.result,
    reconcile: reconcileOf(run.result),
    dlqDepthAfter: after.visible + after.inFlight,
  };
}

/** Envelope counts by state for one DLQ, from the envelope store. */
export async function envelopeStates(dlqArn: string): Promise<Record<EnvelopeState, number>> {
  const counts: Record<EnvelopeState, number> = { IN_DLQ: 0, REDRIVEN: 0, PARKED: 0, DISCARDED: 0 };
  for await (const envelope of createEnvelopeStore().listEnvelopes(dlqArn)) counts[envelope.state] += 1;
  return counts;
}

/** Tasks that move messages out of the DLQ. */
export const MOVING_TASKS = ['Park', 'SampleRedrive', 'StartMoveTask', 'StepUp'] as const;
