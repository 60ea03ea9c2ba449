/**
 * Workflow test harness: one incident end to end on the local stack, with the real triage handler,
 * the real ASL and the real task handlers (through {@link LocalWorkflowRunner}), and the demo's
 * failing consumer. Each test file starts its own local stack; scenarios use distinct queue names.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import type { EnvelopeState, QueueRegistration } from '#inventory/model.js';
import type { TriageResult } from '../../functions/triage/triage.js';
import { createAlarmEvaluator } from '../../local/alarm-evaluator.js';
import { type Approver, autoApprover } from '../../local/approver.js';
import { queueDepth } from '../../local/demo/queues.js';
import type { ReconcileCounts } from '../../local/demo/report.js';
import { type PreparedIncident, prepareIncident } from '../../local/demo/scenario.js';
import { runTriage } from '../../local/demo/triage-local.js';
import { type ExecutionResult, LocalWorkflowRunner, type RunnerOptions } from '../../local/runner.js';
import { createLocalWorkflowStarter, type LocalWorkflowStarter } from '../../local/workflow-starter-local.js';

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

/** The verification wait: source visibility timeout x maxReceiveCount, plus 1.5 s, milliseconds. */
export function verifyWindowMs(incident: PreparedIncident): number {
  return incident.queues.visibilityTimeoutSeconds * incident.queues.maxReceiveCount * 1000 + 1500;
}

/** Fills a DLQ, fires its alarm through the real triage handler and waits for the workflow. */
export async function runIncident(sqs: SQSClient, options: IncidentOptions): Promise<IncidentRun> {
  const incident = await prepareIncident(sqs, {
    name: options.name,
    messages: options.messages ?? 60,
    poisonEvery: options.poisonEvery ?? 10,
    outageAfterProcessed: options.outageAfterProcessed ?? 0,
    registration: { dwellSeconds: 1, rampRates: [50, 500], ...options.registration },
    ...(options.consumerConcurrency ? { consumerConcurrency: options.consumerConcurrency } : {}),
  });
  try {
    await options.beforeTriage?.(incident);
    const approver = options.approver ?? autoApprover();
    const fix = options.fixOnApproval ?? true;
    const runner = new LocalWorkflowRunner({
      approver: {
        name: approver.name,
        requestApproval: (request, callbacks) =>
          approver.requestApproval(request, {
            sendTaskSuccess: async (token, output) => {
              if (fix && (output as { decision?: string }).decision === 'approved')
                incident.consumer.endOutage();
              await callbacks.sendTaskSuccess(token, output);
            },
            sendTaskFailure: (token, error, cause) => callbacks.sendTaskFailure(token, error, cause),
          }),
      },
      waitTimeOverrides: { WaitForVerification: verifyWindowMs(incident) },
      retryIntervalMs: 100,
      lambdaTimeoutMs: 60_000,
      ...options.runner,
    });
    const starter = createLocalWorkflowStarter(runner);
    const alarmEvent = await createAlarmEvaluator({
      dlqUrl: incident.queues.dlqUrl,
      queueName: `${options.name}-dlq`,
    }).evaluate();
    if (!alarmEvent) throw new Error(`the ${options.name}-dlq alarm did not fire`);
    const triage = await runTriage(alarmEvent, starter);
    const execution = starter.executions[0];
    if (!execution) throw new Error(`triage started no workflow: ${JSON.stringify(triage)}`);
    const result = await execution.result;
    const after = await queueDepth(sqs, incident.queues.dlqUrl);
    return {
      incident,
      runner,
      starter,
      triage,
      alarmEvent,
      incidentId: triage.queues[0]?.incidentId ?? '',
      result,
      reconcile: result.taskResults.Reconcile as ReconcileCounts | undefined,
      dlqDepthAfter: after.visible + after.inFlight,
    };
  } finally {
    await incident.consumer.stop();
  }
}

/** Envelope counts by state for one DLQ, from the envelope store. */
export async function envelopeStates(dlqArn: string): Promise<Record<EnvelopeState, number>> {
  const counts: Record<EnvelopeState, number> = { IN_DLQ: 0, REDRIVEN: 0, PARKED: 0, DISCARDED: 0 };
  for await (const envelope of createEnvelopeStore().listEnvelopes(dlqArn)) counts[envelope.state] += 1;
  return counts;
}

/** Tasks that move messages out of the DLQ. */
export const MOVING_TASKS = ['Park', 'SampleRedrive', 'StartMoveTask', 'StepUp'] as const;
