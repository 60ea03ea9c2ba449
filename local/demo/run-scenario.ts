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
import { randomBytes } from 'node:crypto';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { createAuditTrail } from '#incident/audit-trail.js';
import { createIncidentStore, incidentIdOf } from '#incident/incident-store.js';
import { buildOnCallReport, type OnCallReport } from '#incident/on-call-report.js';
import { sqsClient } from '#platform/clients.js';
import { exposureBoundOf, type RampReason } from '#platform/reasons.js';
import { exposureBasisText } from '#platform/reasons-text.js';
import { normaliseAlarmEvent } from '../../functions/triage/alarm-event.js';
import type { TriageResult } from '../../functions/triage/triage.js';
import { createAlarmEvaluator } from '../alarm-evaluator.js';
import { type Approver, autoApprover } from '../approver.js';
import type { Standins } from '../aws-standins/index.js';
import {
  type ExecutionResult,
  LocalWorkflowRunner,
  type RunnerOptions,
  type RunningExecution,
} from '../runner.js';
import { createLocalWorkflowStarter, type LocalWorkflowStarter } from '../workflow-starter-local.js';
import { ORIGIN_DELIVERY, prepareOriginIncident } from './origins.js';
import { queueDepth } from './queues.js';
import {
  conservationProblems,
  countsAddUp,
  exposureProblems,
  type LaterRun,
  type RunReport,
  reconcileOf,
  workflowEndedLine,
} from './report.js';
import { type PreparedIncident, prepareIncident, type ScenarioOptions } from './scenario.js';
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
  /** `--dlq-depth`: seed the DLQ straight with this many messages instead of producing orders. */
  dlqDepth?: number;
  /** Told when a phase of the run starts (seeding, inventory, park, sample, verify, ramp, reconcile). */
  onPhase?: (phase: RunPhase, ctx: PhaseContext) => void;
  /** @default auto-approval */
  approver?: Approver;
  /** Receives the run's story line by line. @default silent */
  say?: (line: string) => void;
  /** Sees each Task's result (progress bars). */
  onTaskResult?: (state: string, result: unknown, ctx: ScenarioContext) => void;
  /** Wait between Retry attempts, milliseconds. @default 200 */
  retryIntervalMs?: number;
  /** Extra execution input fields (e.g. `historyEventLimit`), under triage's own. */
  input?: Record<string, unknown>;
  /** Runner options over the scenario's (e.g. `maxHistoryEvents`, to see a continuation). */
  runner?: Partial<Pick<RunnerOptions, 'maxHistoryEvents' | 'lambdaTimeoutMs'>>;
  /** The demo consumer's own SQS client (a benchmark counts the pipeline's calls apart). */
  consumerSqs?: SQSClient;
  /** The in-process stack's stand-ins (SNS and Lambda incidents need them). */
  standins?: Standins;
}

type Json = Record<string, unknown>;

/** The phases of a run that can take more than a few seconds (a progress display per phase). */
export type RunPhase =
  | 'seeding'
  | 'inventory'
  | 'approval'
  | 'park'
  | 'sample'
  | 'verify'
  | 'ramp'
  | 'reconcile'
  | 'done';

/** What a progress display can watch during a phase. */
export interface PhaseContext {
  sqs: SQSClient;
  queues: { dlqUrl: string; dlqArn: string; parkingUrl: string };
  /** Messages the phase works through, when known (DLQ depth, messages to park...). */
  total: number | undefined;
  /** The incident id, once the alarm fired. */
  incidentId?: string | undefined;
  /** Seconds a wait phase lasts (verify). */
  waitSeconds?: number;
  /** Seeding only: the seeder reports the DLQ depth here. */
  seeded?: (n: number) => void;
}

/** The state entered -> the phase it starts. */
const PHASE_OF_STATE: Record<string, RunPhase> = {
  Preflight: 'approval',
  Park: 'park',
  SampleRedrive: 'sample',
  WaitForVerification: 'verify',
  StartMoveTask: 'ramp',
  Reconcile: 'reconcile',
  ReconcileAfterFailure: 'reconcile',
  Notify: 'done',
  RecordFailure: 'done',
};

/** The states whose result is `$.ramp`. */
const RAMP_STATES = new Set(['StartMoveTask', 'CheckProgress', 'StepUp', 'ResumeRamp', 'MoverStep']);

const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/**
 * The bound that applies to any run: the samples, plus, when the ramp ran, the bound the ramp
 * policy stated (the rates in force over the return window: functions/shared/transfer/ramp-policy.ts).
 */
export function policyExposureBound(ramp: unknown, sampled: number): ExposureBound {
  const stated = exposureBoundOf(ramp);
  if (!stated) return { value: sampled, basis: `${sampled} sampled; nothing bulk-moved` };
  const basis = exposureBasisText(stated.basis);
  return {
    value: sampled + stated.bound,
    basis: sampled > 0 ? `${sampled} sampled + ${basis}` : basis,
  };
}

/** RecordFailure's sentence (a Failed run's reason), if the run got that far. */
function recordFailureText(taskResults: Record<string, unknown>): string | null {
  const text = (taskResults.RecordFailure as Json | undefined)?.text;
  return typeof text === 'string' && text.length > 0 ? text : null;
}

/** Why the run ended where it did, from the slot of the state that decided it. */
function reasonOf(
  outcome: string | null,
  ctx: Pick<ScenarioContext, 'ramp' | 'taskResults'>,
  cause: string | null,
): string | null {
  const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : null);
  const field = (state: string, key: string) => text((ctx.taskResults[state] as Json | undefined)?.[key]);
  const ramp = text(ctx.ramp?.reason);
  switch (outcome) {
    case 'SampleFailed':
      // The last verification decided: a re-check of an inconclusive one, else the first.
      return field('ReverifySample', 'reason') ?? field('VerifySample', 'reason');
    case 'RedriveRefused':
      return field('CheckDlqStillHasMessages', 'refusal') ?? field('Preflight', 'refusal') ?? ramp;
    case 'RedriveHalted':
    case 'Done':
      return ramp ?? field('VerifySample', 'reason');
    case 'Failed':
      // RecordFailure's sentence names the failed step's error (and, when the failure was
      // reconciled, where the messages are); the Fail state's own cause only points at $.error.
      return recordFailureText(ctx.taskResults) ?? cause;
    default:
      return null;
  }
}

/** Hooks and options of {@link runLocalIncident}: a scenario, or a test's own choices. */
export interface LocalIncidentOptions {
  /** The incident to prepare (queues, orders, consumer, registration). */
  setup: ScenarioOptions & { name: string };
  approver?: Approver;
  /** Receives the run's story line by line. @default silent */
  say?: (line: string) => void;
  /** Extra runner options (Task bindings, Wait overrides). */
  runner?: (ctx: ScenarioContext) => Partial<RunnerOptions>;
  beforeTriage?: (ctx: ScenarioContext) => Promise<void>;
  /** On approval. @default the fix is deployed: `consumer.endOutage()` */
  onApproved?: (ctx: ScenarioContext) => void | Promise<void>;
  /** After each Task (the execution waits for a returned promise). */
  onTaskResult?: (ctx: ScenarioContext, state: string, result: unknown) => void | Promise<void>;
  /** Wait between Retry attempts, milliseconds. @default 200 */
  retryIntervalMs?: number;
  /** Each function's timeout, milliseconds. @default the runner's (the function's deployed timeout, at least 300 s) */
  lambdaTimeoutMs?: number;
  /** The in-process stack's stand-ins (an SNS, EventBridge or Lambda incident needs them). */
  standins?: Standins;
  /**
   * Fields of the execution input triage does not set (a selection, un-park, a transform, a
   * `historyEventLimit`), as an operator would add them starting the run from the console or the CLI.
   */
  input?: Record<string, unknown>;
  /** The runner's history-event limit per execution. @default the runner's (25,000, as AWS) */
  maxHistoryEvents?: number;
  /** Told when a phase of the run starts (seeding, inventory, park, sample, verify, ramp, reconcile). */
  onPhase?: (phase: RunPhase, ctx: PhaseContext) => void;
}

/** Everything one local run produced, for a report or a test's assertions. */
export interface LocalIncidentRun {
  ctx: ScenarioContext;
  incident: PreparedIncident;
  runner: LocalWorkflowRunner;
  starter: LocalWorkflowStarter;
  alarmEvent: unknown;
  triage: TriageResult;
  execution: RunningExecution;
  /**
   * The last execution of the run (a long run continues in new executions before 25,000 history
   * events), with the task results of the earlier ones under its own.
   */
  result: ExecutionResult;
  /** Every execution of the run, first to last. */
  chain: ExecutionResult[];
  startedAt: number;
}

/**
 * One incident end to end on the local stack: prepare it, fire the DLQ alarm, run the real triage
 * handler (which starts the workflow through the local starter) and wait for the execution. The
 * consumer is stopped before this returns.
 *
 * @throws Error when the alarm does not fire or triage starts no workflow.
 */
export async function runLocalIncident(options: LocalIncidentOptions): Promise<LocalIncidentRun> {
  const startedAt = Date.now();
  const say = options.say ?? (() => undefined);
  const elapsed = () => `${((Date.now() - startedAt) / 1000).toFixed(1)}s`;
  const sqs = sqsClient();
  const setup = { ...options.setup, onProgress: (line: string) => say(`[${elapsed()}] ${line}`) };
  const phaseQueues = { dlqUrl: '', dlqArn: '', parkingUrl: '' };
  if (setup.dlqDepth !== undefined && options.onPhase) {
    const seedCtx: PhaseContext = { sqs, queues: phaseQueues, total: setup.dlqDepth };
    options.onPhase('seeding', seedCtx);
    setup.onSeedProgress = (n) => seedCtx.seeded?.(n);
  }
  const { origin } = setup;
  const incident =
    origin !== undefined && origin !== 'sqs'
      ? await prepareOriginIncident(sqs, options.standins, { ...setup, origin })
      : await prepareIncident(sqs, setup);
  Object.assign(phaseQueues, {
    dlqUrl: incident.queues.dlqUrl,
    dlqArn: incident.queues.dlqArn,
    parkingUrl: incident.queues.parkingUrl,
  });
  const { queues, consumer } = incident;
  const taskResults: Record<string, unknown> = {};
  let incidentId: string | undefined;
  const ctx: { -readonly [K in keyof ScenarioContext]: ScenarioContext[K] } = {
    sqs,
    incident,
    say: (line) => say(`[${elapsed()}] ${line}`),
    elapsed,
    taskResults,
    ramp: undefined,
    notes: {},
    starter: undefined,
    laterRuns: [],
    standins: options.standins,
  };
  try {
    ctx.say(
      `${incident.origin ? `Every ${ORIGIN_DELIVERY[incident.origin.kind]} ended` : 'Source queue drained'}: ${consumer.stats.processed} processed, ${incident.dlqDepth} dead-lettered to ${queues.dlqArn} (${incident.produced.poisonIds.length} poison).`,
    );
    await options.beforeTriage?.(ctx);
    const approver = options.approver ?? autoApprover();
    const extra = options.runner?.(ctx) ?? {};
    const runner = new LocalWorkflowRunner({
      retryIntervalMs: options.retryIntervalMs ?? 200,
      ...(options.lambdaTimeoutMs ? { lambdaTimeoutMs: options.lambdaTimeoutMs } : {}),
      ...(options.maxHistoryEvents ? { maxHistoryEvents: options.maxHistoryEvents } : {}),
      ...extra,
      approver: {
        name: approver.name,
        ...(approver.policy !== undefined ? { policy: approver.policy } : {}),
        requestApproval: (request, callbacks) =>
          approver.requestApproval(request, {
            sendTaskSuccess: async (token, output) => {
              if ((output as { decision?: string }).decision === 'approved') {
                if (options.onApproved) await options.onApproved(ctx);
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
      onEvent: (event, executionName) => {
        extra.onEvent?.(event, executionName);
        const phase = event.type === 'StateEntered' ? PHASE_OF_STATE[event.state?.name ?? ''] : undefined;
        if (phase && options.onPhase)
          options.onPhase(phase, {
            sqs,
            queues: phaseQueues,
            total: phase === 'sample' ? num((taskResults.ValidateInput as Json)?.sampleSize) : undefined,
            incidentId,
            ...(phase === 'verify'
              ? { waitSeconds: num((taskResults.SampleRedrive as Json)?.verifyAfterSeconds) }
              : {}),
          });
      },
      onTaskResult: async (state, result, executionName) => {
        taskResults[state] = result;
        const r = (result ?? {}) as Json;
        narrate(ctx, state, r);
        if (RAMP_STATES.has(state)) ctx.ramp = r;
        await options.onTaskResult?.(ctx, state, result);
        await extra.onTaskResult?.(state, result, executionName);
      },
    });
    const starter = createLocalWorkflowStarter(runner, {
      inputDefaults: { verifyMarginSeconds: LOCAL_VERIFY_MARGIN_SECONDS, ...options.input },
    });
    ctx.starter = starter;
    const dlqName = queues.dlqArn.split(':').pop() as string;
    const alarmEvent = await createAlarmEvaluator({ dlqUrl: queues.dlqUrl, queueName: dlqName }).evaluate();
    if (!alarmEvent) throw new Error(`the ${dlqName} alarm did not fire: the DLQ is empty`);
    ctx.say(
      `DLQ alarm ${dlqName}-not-empty: ApproximateNumberOfMessagesVisible >= 1 -> ALARM; triage runs...`,
    );
    incidentId = incidentIdOfAlarm(alarmEvent, queues.dlqArn);
    options.onPhase?.('inventory', { sqs, queues: phaseQueues, total: incident.dlqDepth, incidentId });
    const triage = await runTriage(alarmEvent, starter);
    ctx.say(`Triage: ${triage.message}`);
    const execution = starter.executions[0];
    if (!execution) throw new Error(`triage started no workflow: ${triage.message}`);
    ctx.say(
      triage.queues[0]?.outcome === 'continuing'
        ? `Workflow ${execution.executionName} started: it finishes the inventory (ContinueInventory), then asks for approval (${approver.name})...`
        : `Workflow ${execution.executionName} started; waiting for approval (${approver.name})...`,
    );
    // A long run continues in new executions (25,000 history events each): follow the chain.
    const chain = await runner.chainOf(execution.executionName);
    const result = chain.at(-1) as ExecutionResult;
    for (const earlier of chain.slice(0, -1))
      for (const [state, value] of Object.entries(earlier.taskResults))
        if (!(state in result.taskResults)) result.taskResults[state] = value;
    options.onPhase?.('done', { sqs, queues: phaseQueues, total: undefined, incidentId });
    if (result.status !== 'SUCCEEDED')
      ctx.say(workflowEndedLine(result, recordFailureText(result.taskResults)));
    return {
      ctx,
      incident,
      runner,
      starter,
      alarmEvent,
      triage,
      execution,
      result,
      chain,
      startedAt,
    };
  } finally {
    await consumer.stop();
  }
}

/**
 * Runs `scenario` and returns its report; never throws for a run that ends badly (the report says
 * so), only when the run cannot be set up (the alarm did not fire, triage started nothing).
 */
export async function runScenario(scenario: Scenario, options: RunScenarioOptions = {}): Promise<RunReport> {
  const setup = scenario.incident(options.messages);
  // Order ids of this run only: a second run on the same stack (`npm run local`) is a new incident,
  // not one whose orders the consumer's records already hold.
  setup.orderPrefix ??= `${setup.name}-${randomBytes(2).toString('hex')}`;
  if (options.dlqDepth !== undefined) setup.dlqDepth = options.dlqDepth;
  if (options.consumerSqs) setup.consumerSqs = options.consumerSqs;
  options.say?.(
    setup.dlqDepth !== undefined
      ? `[0.0s] Scenario ${scenario.name}: ${scenario.summary}\n[0.0s] Seeding the DLQ with ${setup.dlqDepth} orders dead-lettered during the outage (through the source queue's RedrivePolicy, without the consumer's rounds)...`
      : `[0.0s] Scenario ${scenario.name}: ${scenario.summary}\n[0.0s] Producing ${setup.messages ?? 300} orders; the consumer fails on poison payloads and, after a while, its dependency goes down...`,
  );
  const run = await runLocalIncident({
    setup,
    ...(options.approver ? { approver: options.approver } : {}),
    ...(options.say ? { say: options.say } : {}),
    ...(scenario.runner ? { runner: scenario.runner } : {}),
    ...(scenario.beforeTriage ? { beforeTriage: scenario.beforeTriage } : {}),
    ...(scenario.onApproved ? { onApproved: scenario.onApproved } : {}),
    onTaskResult: async (ctx, state, result) => {
      options.onTaskResult?.(state, result, ctx);
      await scenario.onTaskResult?.(ctx, state, result);
    },
    ...(options.retryIntervalMs ? { retryIntervalMs: options.retryIntervalMs } : {}),
    ...(options.runner?.lambdaTimeoutMs ? { lambdaTimeoutMs: options.runner.lambdaTimeoutMs } : {}),
    ...(options.runner?.maxHistoryEvents ? { maxHistoryEvents: options.runner.maxHistoryEvents } : {}),
    ...(scenario.input || options.input ? { input: { ...scenario.input, ...options.input } } : {}),
    ...(options.onPhase ? { onPhase: options.onPhase } : {}),
    ...(options.standins ? { standins: options.standins } : {}),
  });
  const { incident, result, chain, triage, execution } = run;
  // The main run's slots as it ended: an afterRun's own executions (an un-park run) write into the
  // live ones, and are reported apart (laterRuns), each from its own states.
  const ctx: ScenarioContext = { ...run.ctx, ramp: run.ctx.ramp, taskResults: { ...run.ctx.taskResults } };
  await scenario.afterRun?.(run.ctx);
  const reconcile = reconcileOf(result);
  const outcome = result.path.at(-1) ?? null;
  const dlqNow = await queueDepth(ctx.sqs, incident.queues.dlqUrl);
  const inventoried = reconcile?.inventoried ?? incident.dlqDepth;
  // The recording mover's sample has SampleRedrive's shape; its `moved` counts the sample too.
  const byMover = result.taskResults.MoverSample !== undefined;
  const sample = (result.taskResults.SampleRedrive ?? result.taskResults.MoverSample ?? {}) as Json;
  const ramp = ctx.ramp ?? {};
  const { consumer } = incident;
  const report: RunReport = {
    scenario: scenario.name,
    expected: `${scenario.expected.outcome}: ${scenario.expected.text}`,
    asExpected: false,
    problems: [],
    incidentId: triage.queues[0]?.incidentId ?? null,
    executionName: execution.executionName,
    status: result.status,
    outcome,
    reason: reasonOf(outcome, ctx, result.cause),
    rampReason: (ramp.why as RampReason | undefined) ?? null,
    inventoried,
    redriven: reconcile?.redriven ?? 0,
    parked: reconcile?.parked ?? 0,
    discarded: reconcile?.discarded ?? 0,
    remaining: reconcile?.inDlq ?? dlqNow.visible + dlqNow.inFlight,
    inFlight: reconcile?.inFlight ?? 0,
    missing: reconcile?.missing ?? 0,
    missingMessages: reconcile?.missingMessages ?? [],
    lateArrivals: reconcile?.lateArrivals ?? num(ramp.lateArrivals),
    lateMovedUnclassified: reconcile?.lateMovedUnclassified ?? 0,
    returned: reconcile?.returned ?? 0,
    sampled: num(sample.sent) + num(sample.alreadySent),
    bulkMoved: byMover
      ? Math.max(0, num(ramp.moved) - num(sample.sent) - num(sample.alreadySent))
      : num(ramp.movedBefore) + num(ramp.moved),
    bulkMovedBy: byMover ? 'the recording mover' : 'move tasks',
    redrivenOutside: reconcile?.redrivenOutside ?? 0,
    duplicateSendsPrevented: reconcile?.duplicateSendsPrevented ?? 0,
    possibleDuplicateSends: reconcile?.possibleDuplicateSends ?? 0,
    possibleDuplicates: reconcile?.possibleDuplicates ?? [],
    countsAddUp: reconcile ? countsAddUp(reconcile) : dlqNow.visible + dlqNow.inFlight === inventoried,
    balanced: reconcile
      ? (reconcile.balanced ?? (reconcile.missing === 0 && countsAddUp(reconcile)))
      : dlqNow.visible + dlqNow.inFlight === inventoried,
    exposed: consumer.stats.exposed,
    exposureBound: 0,
    exposureBoundBasis: '',
    deadLettered: incident.dlqDepth,
    stateTransitions: chain.reduce((n, r) => n + r.stateTransitions, 0),
    executions: chain.length,
    historyEvents: Math.max(...chain.map((r) => r.historyEvents)),
    largestPayloadBytes: Math.max(...chain.map((r) => r.largestPayload.bytes)),
    inventoryInvocations:
      (triage.queues[0]?.summary?.coverage ? 1 : 0) +
      chain.reduce((n, r) => n + (r.invocations.ContinueInventory ?? 0), 0),
    taskInvocations: sumByKey(chain.map((r) => r.invocations)),
    taskInvocationMs: sumByKey(chain.map((r) => r.invocationMs)),
    consumer: {
      processed: consumer.stats.processed,
      duplicatesSkipped: consumer.stats.duplicatesSkipped,
      processedTwice: consumer.stats.processedTwice,
    },
    durationMs: 0,
  };
  const bound = scenario.exposureBound?.(ctx, report) ?? policyExposureBound(ctx.ramp, report.sampled);
  report.exposureBound = bound.value;
  report.exposureBoundBasis = bound.basis;
  const gateless = scenario.gatelessExposure?.(ctx, report);
  if (gateless) report.gatelessExposure = gateless;
  const problems: string[] = [];
  if (outcome !== scenario.expected.outcome)
    problems.push(`ended ${outcome ?? 'nowhere'}, expected ${scenario.expected.outcome}`);
  problems.push(...(scenario.check ?? defaultCheck)(report, ctx));
  report.problems = problems;
  report.asExpected = problems.length === 0;
  report.durationMs = Date.now() - run.startedAt;
  report.startedAt = new Date(run.startedAt).toISOString();
  report.endedAt = new Date().toISOString();
  if (ctx.laterRuns.length > 0) report.laterRuns = ctx.laterRuns.map(laterRunOf);
  report.onCall = report.incidentId ? await onCallReportOf(report.incidentId) : null;
  return report;
}

/** A later run's line of the report, from its own execution's states. */
function laterRunOf(result: ExecutionResult): LaterRun {
  const outcome = result.path.at(-1) ?? null;
  const lastRamp = result.path.findLast((state) => RAMP_STATES.has(state));
  const ramp = lastRamp ? (result.taskResults[lastRamp] as Json | undefined) : undefined;
  const reconcile = reconcileOf(result);
  return {
    executionName: result.executionName,
    status: result.status,
    outcome,
    reason: reasonOf(outcome, { ramp, taskResults: result.taskResults }, result.cause),
    moved: num(ramp?.moved) + num(ramp?.movedBefore),
    reconcile: reconcile
      ? {
          inventoried: reconcile.inventoried,
          redriven: reconcile.redriven,
          parked: reconcile.parked,
          inDlq: reconcile.inDlq,
          missing: reconcile.missing,
        }
      : null,
  };
}

/** The incident's on-call report as `dlq show` builds it (stores of the environment's stack). */
export async function onCallReportOf(incidentId: string): Promise<OnCallReport | null> {
  const incident = await createIncidentStore().getIncident(incidentId);
  if (!incident) return null;
  return buildOnCallReport(incident, await createAuditTrail().list(incidentId), Date.now());
}

/** Per-key sums of several count records. */
function sumByKey(records: ReadonlyArray<Readonly<Record<string, number>>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) for (const [k, v] of Object.entries(r)) out[k] = (out[k] ?? 0) + v;
  return out;
}

/** The incident triage opens for this alarm event and DLQ (incident-store.ts `incidentIdOf`). */
function incidentIdOfAlarm(event: unknown, dlqArn: string): string | undefined {
  const normalised = normaliseAlarmEvent(event);
  return normalised.kind === 'state-change'
    ? incidentIdOf(normalised.record.alarmArn, normalised.record.stateTimestamp, dlqArn)
    : undefined;
}

/** Nothing missing, the counts add up, exposure within its bound. */
function defaultCheck(report: RunReport): string[] {
  return [...conservationProblems(report), ...exposureProblems(report)];
}

/** The run's story, one line per step that matters to an SRE watching it. */
function narrate(ctx: ScenarioContext, state: string, r: Json): void {
  if (state === 'Park') ctx.say(`Parked ${r.parked} messages that must not be redriven (poison/permanent).`);
  if (state === 'SampleRedrive') {
    ctx.say(
      `Sample redrive: ${r.sent} sent (${r.alreadySent} already sent); verifying after ${r.verifyAfterSeconds} s (DelaySeconds + visibility timeout x maxReceiveCount + margin)...`,
    );
    if (Number(r.tooLarge) > 0)
      ctx.say(
        `  ${r.tooLarge} message(s) left in the DLQ: with the pipeline's attributes they exceed the destination's MaximumMessageSize.`,
      );
  }
  if (state === 'VerifySample' || state === 'ReverifySample')
    ctx.say(`Verification: ${r.verdict} (${r.reason}).`);
  if (state === 'StartMoveTask') ctx.say(`Ramped redrive started (StartMessageMoveTask): ${r.reason}.`);
  if (state === 'MoverSample')
    ctx.say(
      `Recording mover sample: ${r.sent} sent (${r.alreadySent} already sent); verifying after ${r.verifyAfterSeconds} s...`,
    );
  if (state === 'MoverStep' && r.decision !== 'continue')
    ctx.say(`Recording mover: ${r.decision} (${r.reason}).`);
  if ((state === 'CheckProgress' || state === 'StepUp') && r.decision !== 'hold')
    ctx.say(`${state}: ${r.decision} (${r.reason}).`);
}
