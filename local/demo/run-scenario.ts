/**
 * Runs one fault scenario end to end on the local stack, in-process: the incident is prepared
 * (queues, registration, orders, a failing consumer), the DLQ alarm fires, the real triage handler
 * inventories the DLQ and starts the real `statemachines/redrive.asl.json`, whose Tasks run the
 * real handlers; the scenario's hooks act on the run; the report says where every message ended,
 * the exposure against its bound, and whether the run ended as the scenario expects.
 *
 * `npm start` (local/main.ts) and the scenario tests (test/workflow/scenarios.test.ts) both call
 * {@link runScenario}, so a scenario is tested on exactly the path a user runs. The local stack
 * must be running (startLocalStack) and the SDK pointed at it.
 */
import { createAuditTrail } from '#incident/audit-trail.js';
import { createIncidentStore } from '#incident/incident-store.js';
import { buildOnCallReport, type OnCallReport } from '#incident/on-call-report.js';
import { sqsClient } from '#platform/clients.js';
import { createAlarmEvaluator } from '../alarm-evaluator.js';
import { type Approver, autoApprover } from '../approver.js';
import { LocalWorkflowRunner } from '../runner.js';
import { createLocalWorkflowStarter } from '../workflow-starter-local.js';
import { queueDepth } from './queues.js';
import {
  conservationProblems,
  countsAddUp,
  exposureProblems,
  type ReconcileCounts,
  type RunReport,
} from './report.js';
import { prepareIncident } from './scenario.js';
import type { ExposureBound, Scenario, ScenarioContext } from './scenarios/types.js';
import { runTriage } from './triage-local.js';

/**
 * The verification margin local runs put in the execution input, seconds: the demo queues fail a
 * message within seconds, and the deployed default (30 s) would only make every run slower. The
 * window itself is the product's (destination DelaySeconds + visibility timeout x maxReceiveCount
 * + margin, computed by Preflight), never shortened by the runner.
 */
export const LOCAL_VERIFY_MARGIN_SECONDS = 2;

/** Options of {@link runScenario}. */
export interface RunScenarioOptions {
  /** `--messages`: the incident's size (undefined: the scenario's own). */
  messages?: number;
  /** @default auto-approval */
  approver?: Approver;
  /** Receives the run's story line by line. @default silent */
  say?: (line: string) => void;
  /** Sees each Task's result (progress bars). */
  onTaskResult?: (state: string, result: unknown, ctx: ScenarioContext) => void;
  /** Wait between Retry attempts, milliseconds. @default 200 */
  retryIntervalMs?: number;
}

type Json = Record<string, unknown>;

const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/**
 * The exposure bound of a ramp that runs at `rate` msg/s: a consumer that breaks is detected
 * within one dwell plus one return window, so at most rate x (return window + dwell) messages
 * reach it in the meantime.
 */
export function rampExposureBound(
  rate: number,
  returnWindowSeconds: number,
  dwellSeconds: number,
  sampled = 0,
): ExposureBound {
  const value = sampled + rate * (returnWindowSeconds + dwellSeconds);
  const ramp = `${rate} msg/s x (${returnWindowSeconds} s return window + ${dwellSeconds} s dwell)`;
  return { value, basis: sampled > 0 ? `${sampled} sampled + ${ramp}` : ramp };
}

/** The return window the ramp reported, else the verification window Preflight computed. */
export function returnWindowOf(taskResults: Readonly<Record<string, unknown>>): number {
  const ramp = taskResults.CheckProgress ?? taskResults.StepUp ?? taskResults.StartMoveTask;
  const fromRamp = (ramp as Json | undefined)?.returnWindowSeconds;
  if (typeof fromRamp === 'number') return fromRamp;
  return num((taskResults.Preflight as Json | undefined)?.verifyWindowSeconds);
}

/**
 * The bound that applies to any run: the samples, plus, when the ramp ran, its worst step
 * (rate x (return window + dwell)).
 */
function defaultExposureBound(
  report: RunReport,
  rampSteps: ReadonlyArray<{ rate: number; dwellSeconds: number }>,
  returnWindowSeconds: number,
): ExposureBound {
  if (rampSteps.length === 0)
    return { value: report.sampled, basis: `${report.sampled} sampled; nothing bulk-moved` };
  const cost = (s: { rate: number; dwellSeconds: number }) => s.rate * (returnWindowSeconds + s.dwellSeconds);
  const worst = rampSteps.reduce((a, b) => (cost(b) > cost(a) ? b : a));
  return rampExposureBound(worst.rate, returnWindowSeconds, worst.dwellSeconds, report.sampled);
}

/** Why the run ended where it did, from the slot of the state that decided it. */
function reasonOf(outcome: string | null, results: Readonly<Record<string, unknown>>, cause: string | null) {
  const field = (state: string, key: string): string | null => {
    const value = (results[state] as Json | undefined)?.[key];
    return typeof value === 'string' && value.length > 0 ? value : null;
  };
  const ramp =
    field('CheckProgress', 'reason') ?? field('StepUp', 'reason') ?? field('StartMoveTask', 'reason');
  switch (outcome) {
    case 'SampleFailed':
      return field('VerifySample', 'reason');
    case 'RedriveRefused':
      return field('CheckDlqStillHasMessages', 'refusal') ?? field('Preflight', 'refusal') ?? ramp;
    case 'RedriveHalted':
    case 'Done':
      return ramp ?? field('VerifySample', 'reason');
    case 'Failed':
      return cause;
    default:
      return null;
  }
}

/**
 * Runs `scenario` and returns its report; never throws for a run that ends badly (the report says
 * so), only when the run cannot be set up (the alarm did not fire, triage started nothing).
 */
export async function runScenario(scenario: Scenario, options: RunScenarioOptions = {}): Promise<RunReport> {
  const startedAt = Date.now();
  const say = options.say ?? (() => undefined);
  const elapsed = () => `${((Date.now() - startedAt) / 1000).toFixed(1)}s`;
  const sqs = sqsClient();
  const setup = scenario.incident(options.messages);
  say(
    `[${elapsed()}] Scenario ${scenario.name}: ${scenario.summary}\n[${elapsed()}] Producing ${setup.messages ?? 300} orders; the consumer fails on poison payloads and, after a while, its dependency goes down...`,
  );
  const incident = await prepareIncident(sqs, setup);
  const { queues, consumer } = incident;
  const taskResults: Record<string, unknown> = {};
  const ctx: ScenarioContext = {
    sqs,
    incident,
    say: (line) => say(`[${elapsed()}] ${line}`),
    elapsed,
    taskResults,
    notes: {},
  };
  const rampSteps: Array<{ rate: number; dwellSeconds: number }> = [];
  try {
    ctx.say(
      `Source queue drained: ${consumer.stats.processed} processed, ${incident.dlqDepth} dead-lettered to ${queues.dlqArn} (${incident.produced.poisonIds.length} poison).`,
    );
    await scenario.beforeTriage?.(ctx);
    const approver = options.approver ?? autoApprover();
    const extra = scenario.runner?.(ctx) ?? {};
    const runner = new LocalWorkflowRunner({
      retryIntervalMs: options.retryIntervalMs ?? 200,
      ...extra,
      approver: {
        name: approver.name,
        requestApproval: (request, callbacks) =>
          approver.requestApproval(request, {
            sendTaskSuccess: async (token, output) => {
              if ((output as { decision?: string }).decision === 'approved') {
                if (scenario.onApproved) await scenario.onApproved(ctx);
                else {
                  consumer.endOutage();
                  ctx.say('Approved. The dependency is back (fix deployed): the consumer is healthy again.');
                }
              } else ctx.say('Rejected: nothing will be moved.');
              await callbacks.sendTaskSuccess(token, output);
            },
            sendTaskFailure: (token, error, cause) => callbacks.sendTaskFailure(token, error, cause),
          }),
      },
      onTaskResult: async (state, result, executionName) => {
        taskResults[state] = result;
        const r = (result ?? {}) as Json;
        narrate(ctx, state, r);
        if ((state === 'StartMoveTask' || state === 'StepUp' || state === 'CheckProgress') && r.taskHandle)
          rampSteps.push({ rate: num(r.rate), dwellSeconds: num(r.dwellSeconds) });
        options.onTaskResult?.(state, result, ctx);
        await scenario.onTaskResult?.(ctx, state, result);
        await extra.onTaskResult?.(state, result, executionName);
      },
    });
    const starter = createLocalWorkflowStarter(runner, {
      inputDefaults: { verifyMarginSeconds: LOCAL_VERIFY_MARGIN_SECONDS },
    });
    const dlqName = queues.dlqArn.split(':').pop() as string;
    const alarm = await createAlarmEvaluator({ dlqUrl: queues.dlqUrl, queueName: dlqName }).evaluate();
    if (!alarm) throw new Error(`the ${dlqName} alarm did not fire: the DLQ is empty`);
    ctx.say(
      `DLQ alarm ${dlqName}-not-empty: ApproximateNumberOfMessagesVisible >= 1 -> ALARM; triage runs...`,
    );
    const triage = await runTriage(alarm, starter);
    ctx.say(`Triage: ${triage.message}`);
    const execution = starter.executions[0];
    if (!execution) throw new Error(`triage started no workflow: ${triage.message}`);
    ctx.say(`Workflow ${execution.executionName} started; waiting for approval (${approver.name})...`);
    const result = await execution.result;
    await consumer.stop();

    const reconcile = result.taskResults.Reconcile as ReconcileCounts | undefined;
    const outcome = result.path.at(-1) ?? null;
    const dlqNow = await queueDepth(sqs, queues.dlqUrl);
    const inventoried = reconcile?.inventoried ?? incident.dlqDepth;
    const sample = (result.taskResults.SampleRedrive ?? {}) as Json;
    const ramp = (result.taskResults.CheckProgress ??
      result.taskResults.StepUp ??
      result.taskResults.StartMoveTask ??
      {}) as Json;
    const report: RunReport = {
      scenario: scenario.name,
      expected: `${scenario.expected.outcome}: ${scenario.expected.text}`,
      asExpected: false,
      problems: [],
      incidentId: triage.queues[0]?.incidentId ?? null,
      executionName: execution.executionName,
      status: result.status,
      outcome,
      reason: reasonOf(outcome, result.taskResults, result.cause),
      inventoried,
      redriven: reconcile?.redriven ?? 0,
      parked: reconcile?.parked ?? 0,
      discarded: reconcile?.discarded ?? 0,
      remaining: reconcile?.inDlq ?? dlqNow.visible + dlqNow.inFlight,
      lost: reconcile?.lost ?? 0,
      lateArrivals: reconcile?.lateArrivals ?? 0,
      lateMovedUnclassified: reconcile?.lateMovedUnclassified ?? 0,
      returned: reconcile?.returned ?? 0,
      sampled: num(sample.sent) + num(sample.alreadySent),
      bulkMoved: num(ramp.movedBefore) + num(ramp.moved),
      duplicateSendsPrevented: reconcile?.duplicateSendsPrevented ?? 0,
      possibleDuplicateSends: reconcile?.possibleDuplicateSends ?? 0,
      countsAddUp: reconcile ? countsAddUp(reconcile) : dlqNow.visible + dlqNow.inFlight === inventoried,
      exposed: consumer.stats.exposed,
      exposureBound: 0,
      exposureBoundBasis: '',
      stateTransitions: result.stateTransitions,
      consumer: {
        processed: consumer.stats.processed,
        duplicatesSkipped: consumer.stats.duplicatesSkipped,
        processedTwice: consumer.stats.processedTwice,
      },
      durationMs: 0,
    };
    const bound =
      scenario.exposureBound?.(ctx, report) ??
      defaultExposureBound(report, rampSteps, returnWindowOf(result.taskResults));
    report.exposureBound = bound.value;
    report.exposureBoundBasis = bound.basis;
    if (result.status !== 'SUCCEEDED')
      ctx.say(`Workflow ended ${result.status}: ${result.error ?? ''} ${result.cause ?? ''}`.trim());
    const problems: string[] = [];
    if (outcome !== scenario.expected.outcome)
      problems.push(`ended ${outcome ?? 'nowhere'}, expected ${scenario.expected.outcome}`);
    problems.push(...(scenario.check ?? defaultCheck)(report, ctx));
    report.problems = problems;
    report.asExpected = problems.length === 0;
    report.durationMs = Date.now() - startedAt;
    report.startedAt = new Date(startedAt).toISOString();
    report.endedAt = new Date().toISOString();
    report.onCall = report.incidentId ? await onCallReportOf(report.incidentId) : null;
    return report;
  } finally {
    await consumer.stop();
  }
}

/** The incident's on-call report as `dlq show` builds it (stores of the environment's stack). */
export async function onCallReportOf(incidentId: string): Promise<OnCallReport | null> {
  const incident = await createIncidentStore().getIncident(incidentId);
  if (!incident) return null;
  return buildOnCallReport(incident, await createAuditTrail().list(incidentId), Date.now());
}

/** Nothing lost, the counts add up, exposure within its bound. */
function defaultCheck(report: RunReport): string[] {
  return [...conservationProblems(report), ...exposureProblems(report)];
}

/** The run's story, one line per step that matters to an SRE watching it. */
function narrate(ctx: ScenarioContext, state: string, r: Json): void {
  if (state === 'Park') ctx.say(`Parked ${r.parked} messages that must not be redriven (poison/permanent).`);
  if (state === 'SampleRedrive')
    ctx.say(
      `Sample redrive: ${r.sent} sent (${r.alreadySent} already sent); verifying after ${r.verifyAfterSeconds} s (DelaySeconds + visibility timeout x maxReceiveCount + margin)...`,
    );
  if (state === 'VerifySample') ctx.say(`Verification: ${r.verdict} (${r.reason}).`);
  if (state === 'StartMoveTask') ctx.say(`Ramped redrive started (StartMessageMoveTask): ${r.reason}.`);
  if ((state === 'CheckProgress' || state === 'StepUp') && r.decision !== 'hold')
    ctx.say(`${state}: ${r.decision} (${r.reason}).`);
}
