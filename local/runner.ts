/**
 * Runs the real `statemachines/redrive.asl.json` in-process with `aws-local-stepfunctions`.
 *
 * - Every `${...}` placeholder is replaced the way CDK's definition substitutions would: each
 *   `${<Name>FunctionArn}` by `arn:aws:lambda:<region>:<account>:function:<Name>`, others from
 *   {@link RunnerOptions.substitutions}. An unresolved placeholder is an error naming it.
 * - Every Task is bound **by state name** to the real handler of the function it names
 *   (`${SampleRedriveFunctionArn}` -> `functions/sample-redrive/handler.ts`), invoked with a
 *   Lambda-like context (`getRemainingTimeInMillis` counts down the function timeout). A thrown
 *   error reaches Retry/Catch under its `name`, with a Lambda-shaped JSON `Cause`, as on AWS.
 * - The `.waitForTaskToken` approval Task gets a token from a local {@link TaskTokenRegistry}
 *   (through `$$.Task.Token`) and waits for an {@link Approver} to answer, or for its
 *   TimeoutSeconds (which {@link RunnerOptions.timeoutSecondsOverrides} can shorten).
 * - Wait states can be shortened per state (milliseconds) or by a scale factor.
 * - State transitions are counted from the library's event log (each state entered or retried is
 *   one billed transition in a Standard workflow).
 * - History events are counted the way a Standard workflow records them (state entered/exited, and
 *   scheduled/started/succeeded-or-failed per Task attempt) and the service's limit is enforced: an
 *   execution that would pass {@link RunnerOptions.maxHistoryEvents} (25,000) fails with
 *   `States.Runtime`, which no Catch can handle, as on AWS.
 * - `arn:aws:states:::states:startExecution` Tasks start another execution of this runner (the
 *   continuation of a long run in a new execution); `$$.Execution.Input` is the execution input.
 * - The size of the execution input and of every state's input and output is measured (Step
 *   Functions refuses payloads over 256 KiB).
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-amazon-states-language.html
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/input-output-contextobject.html
 * @see https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.aws_stepfunctions.StateMachine.html (definitionSubstitutions)
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html (25,000 history events, 256 KiB payloads)
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/connect-stepfunctions.html (startExecution)
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { FUNCTION_ACCESS } from '@dlq-redrive/cdk/function-catalog';
import type { Context } from 'aws-lambda';
import {
  ExecutionAbortedError,
  ExecutionError,
  ExecutionTimeoutError,
  type RunOptions,
  StateMachine,
  type StateMachineDefinition,
} from 'aws-local-stepfunctions';
import { createAuditTrail } from '#incident/audit-trail.js';
import { sleep } from '#platform/sleep.js';
import { ALIAS_PLACEHOLDER, DEFAULT_WORKFLOW_ALIAS } from '../infra/asl.js';
import { type Approver, autoApprover } from './approver.js';
import type { FaultInjector } from './fault-injection.js';
import { lambdaContext } from './lambda-context.js';
import { type TaskTokenCallbacks, TaskTokenRegistry } from './task-tokens.js';

/** The deployed definition, relative to this file. */
export const DEFINITION_URL = new URL('../statemachines/redrive.asl.json', import.meta.url);
const FUNCTIONS_URL = new URL('../functions/', import.meta.url);

const WAIT_FOR_TOKEN = 'arn:aws:states:::lambda:invoke.waitForTaskToken';
const START_EXECUTION = 'arn:aws:states:::states:startExecution';
/** Step Functions' hard quota of events in one Standard execution's history. */
export const MAX_HISTORY_EVENTS = 25_000;
/** Step Functions' limit on an execution input and on each state's input and output, bytes. */
export const MAX_PAYLOAD_BYTES = 256 * 1024;
const LAMBDA_INVOKE = 'arn:aws:states:::lambda:invoke';
const PLACEHOLDER = /\$\{([A-Za-z0-9_]+)\}/g;

/** What a bound Task receives besides its payload. */
export interface TaskInvocation {
  stateName: string;
  /** The function folder under `functions/` (e.g. `sample-redrive`). */
  functionFolder: string;
  /** The Lambda-like context for this invocation. */
  context: Context;
  executionName: string;
}

/** A local implementation of one Task: payload in, function result out (JSON values). */
export type TaskBinding = (payload: unknown, invocation: TaskInvocation) => Promise<unknown>;

/** One event of the library's execution log (StateEntered, StateExited, StateFailed...). */
export type ExecutionEvent = { type: string; timestamp: number; state?: { name: string } } & Record<
  string,
  unknown
>;

/** Options of {@link LocalWorkflowRunner}. */
export interface RunnerOptions {
  /** The ASL definition (with placeholders). @default statemachines/redrive.asl.json */
  definition?: unknown;
  /** Values for placeholders other than `${<Name>FunctionArn}`. */
  substitutions?: Record<string, string>;
  /** @default process.env.AWS_REGION or 'us-east-1' */
  region?: string;
  /** @default '123456789012' */
  accountId?: string;
  /** Replaces the real handler of a Task, by state name (fault injection, custom ports). */
  bindings?: Record<string, TaskBinding>;
  /**
   * Runs every Task invocation through this fault injector (local/fault-injection.ts), so an armed
   * crash kills the invocation right after the chosen AWS call. @default none
   */
  faults?: FaultInjector;
  /** Answers the approval Task. @default auto-approval */
  approver?: Approver;
  /**
   * `approver`: the approver answers directly (the request-approval function is not called).
   * `handler`: the real request-approval handler runs with the token (it posts the request and
   * stores the token); the answer comes through {@link LocalWorkflowRunner.tokens}, e.g. from the
   * real Slack interaction handler. @default 'approver'
   */
  approvalMode?: 'approver' | 'handler';
  /** Wait durations by state name, milliseconds (passed to the library as is). */
  waitTimeOverrides?: Record<string, number>;
  /** Multiplies the `Seconds` of every Wait state that has a fixed `Seconds`. @default 1 */
  waitScale?: number;
  /** TimeoutSeconds by state name (e.g. `{ RequestApproval: 2 }` to test approval expiry). */
  timeoutSecondsOverrides?: Record<string, number>;
  /** Wait between retries of every Retry block, milliseconds. @default the ASL's IntervalSeconds */
  retryIntervalMs?: number;
  /**
   * Every function's timeout, milliseconds (getRemainingTimeInMillis, and the Task's timeout).
   * @default {@link localFunctionTimeoutMs}: the function's deployed timeout, at least 300 s
   */
  lambdaTimeoutMs?: number;
  /**
   * Called with each Task's result as it completes (progress bars, logs, fault scenarios); the
   * execution goes on once a returned promise settles (a rejection fails the Task).
   */
  onTaskResult?: (stateName: string, result: unknown, executionName: string) => void | Promise<void>;
  /** Called with every event of the library's log. */
  onEvent?: (event: ExecutionEvent, executionName: string) => void;
  /**
   * History events one execution may record; the next one fails it with `States.Runtime`, which
   * no Retry or Catch handles (tests lower it to see a continuation happen). @default 25000
   */
  maxHistoryEvents?: number;
}

/** How a local execution ended. */
export type ExecutionStatus = 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

/** The record of one local execution. */
export interface ExecutionResult {
  executionName: string;
  executionArn: string;
  status: ExecutionStatus;
  /** The execution output (SUCCEEDED only). */
  output: unknown;
  /** Error and cause of a FAILED execution (a Fail state's Error/Cause, or an uncaught error). */
  error: string | null;
  cause: string | null;
  /** Billed state transitions: states entered plus retries. */
  stateTransitions: number;
  /**
   * Events of the execution's history as a Standard workflow records them: execution started and
   * ended, each state entered and exited, and per Task attempt scheduled, started (submitted for a
   * callback) and succeeded or failed.
   */
  historyEvents: number;
  /** The largest payload of the run, bytes: the execution input, or a state's input or output. */
  largestPayload: { bytes: number; state: string; kind: 'execution input' | 'input' | 'output' };
  /** Executions this one started with `states:startExecution` (its continuations), by name. */
  startedExecutions: string[];
  /** State names in the order they were entered. */
  path: string[];
  /** Invocations per Task state name (retries included). */
  invocations: Record<string, number>;
  /**
   * Time the bound functions ran, milliseconds, per Task state name (retries included; a callback
   * Task's wait for its answer excluded): with each function's memory, the run's GB-seconds.
   */
  invocationMs: Record<string, number>;
  /** Each Task's last result, by state name. */
  taskResults: Record<string, unknown>;
  events: ExecutionEvent[];
  durationMs: number;
}

/** A started execution. */
export interface RunningExecution {
  executionName: string;
  executionArn: string;
  /** The ARN it was started on: the alias (as every start here), a version, or the unqualified ARN. */
  stateMachineArn: string;
  result: Promise<ExecutionResult>;
  abort(): void;
}

/** Raised when the definition cannot be prepared (unresolved placeholder, unknown function). */
export class RunnerSetupError extends Error {
  public override readonly name = 'RunnerSetupError';
}

/** The execution passed Step Functions' history quota: it fails, uncatchable. */
class HistoryLimitError extends Error {
  public override readonly name = 'States.Runtime';
  public constructor(limit: number) {
    super(`The execution reached the maximum number of history events (${limit}).`);
  }
}

/** A Lambda function error as Step Functions sees it: `Error` = errorType, `Cause` = JSON. */
class LambdaFunctionError extends Error {
  public constructor(errorType: string, errorMessage: string, trace: string[]) {
    super(JSON.stringify({ errorType, errorMessage, trace }));
    this.name = errorType;
  }
}

type Json = Record<string, unknown>;
type StateDef = Json & { Type?: string; Resource?: string; Parameters?: Json; Seconds?: number };

interface TaskPlan {
  stateName: string;
  /**
   * `direct` (Resource is the function ARN), `invoke` (lambda:invoke), `callback`
   * (waitForTaskToken), `start-execution` (states:startExecution: another execution of this runner).
   */
  kind: 'direct' | 'invoke' | 'callback' | 'start-execution';
  functionFolder: string;
  functionName: string;
  timeoutSeconds: number | null;
}

/**
 * The least time the local runner gives any function, milliseconds: local services on a shared
 * machine answer far slower than AWS, so a function deployed with 30 s gets 300 s here.
 */
export const LOCAL_MIN_FUNCTION_TIMEOUT_MS = 300_000;

/**
 * The timeout of `folder`'s function in the local runner, milliseconds: its deployed timeout
 * (`packages/cdk/src/function-catalog.ts`, e.g. Park's 900 s for a scan of a 100,000-message DLQ), never less
 * than {@link LOCAL_MIN_FUNCTION_TIMEOUT_MS}. A Task without TimeoutSeconds waits this long, as on
 * AWS it waits for the function's own timeout.
 * @see https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html
 */
export function localFunctionTimeoutMs(folder: string): number {
  const deployed = (FUNCTION_ACCESS as Record<string, { timeoutSeconds: number } | undefined>)[folder];
  return Math.max(LOCAL_MIN_FUNCTION_TIMEOUT_MS, (deployed?.timeoutSeconds ?? 0) * 1000);
}

/** `SampleRedriveFunctionArn` -> `sample-redrive`. */
export function functionFolderOf(placeholder: string): string {
  const base = placeholder.replace(/FunctionArn$/, '');
  return base.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
}

function placeholderOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^\$\{([A-Za-z0-9_]+FunctionArn)\}$/.exec(value);
  return match?.[1];
}

function loadDefinition(definition: unknown): Json {
  const raw = definition ?? JSON.parse(readFileSync(DEFINITION_URL, 'utf8'));
  return JSON.parse(JSON.stringify(raw)) as Json;
}

function eachState(definition: Json, visit: (name: string, state: StateDef) => void): void {
  const states = (definition.States ?? {}) as Record<string, StateDef>;
  for (const [name, state] of Object.entries(states)) {
    visit(name, state);
    for (const branch of (state.Branches as Json[] | undefined) ?? []) eachState(branch, visit);
    const processor = (state.ItemProcessor ?? state.Iterator) as Json | undefined;
    if (processor) eachState(processor, visit);
  }
}

/** Finds every Task and the function it calls, before substitution. */
function planTasks(definition: Json): Map<string, TaskPlan> {
  const plans = new Map<string, TaskPlan>();
  eachState(definition, (stateName, state) => {
    if (state.Type !== 'Task') return;
    const resource = state.Resource ?? '';
    if (resource === START_EXECUTION) {
      plans.set(stateName, {
        stateName,
        kind: 'start-execution',
        functionFolder: '',
        functionName: '',
        timeoutSeconds: typeof state.TimeoutSeconds === 'number' ? state.TimeoutSeconds : null,
      });
      return;
    }
    const direct = placeholderOf(resource);
    const viaParameters = placeholderOf(state.Parameters?.FunctionName);
    const placeholder = direct ?? viaParameters;
    if (!placeholder)
      throw new RunnerSetupError(
        `Task ${stateName}: Resource ${resource} names no \${<Name>FunctionArn} placeholder to bind`,
      );
    const kind = direct ? 'direct' : resource === WAIT_FOR_TOKEN ? 'callback' : 'invoke';
    if (kind === 'invoke' && resource !== LAMBDA_INVOKE)
      throw new RunnerSetupError(`Task ${stateName}: unsupported Resource ${resource}`);
    const timeout = typeof state.TimeoutSeconds === 'number' ? state.TimeoutSeconds : null;
    plans.set(stateName, {
      stateName,
      kind,
      functionFolder: functionFolderOf(placeholder),
      functionName: placeholder.replace(/Arn$/, ''),
      timeoutSeconds: timeout,
    });
  });
  return plans;
}

function substitute(
  definition: Json,
  region: string,
  accountId: string,
  substitutions: Record<string, string>,
): Json {
  const missing = new Set<string>();
  const text = JSON.stringify(definition).replace(PLACEHOLDER, (whole, name: string) => {
    if (name in substitutions) return substitutions[name] as string;
    if (name.endsWith('FunctionArn'))
      return `arn:aws:lambda:${region}:${accountId}:function:${name.replace(/Arn$/, '')}`;
    missing.add(name);
    return whole;
  });
  if (missing.size > 0)
    throw new RunnerSetupError(
      `unresolved placeholders in the definition: ${[...missing].map((m) => `\${${m}}`).join(', ')}`,
    );
  return JSON.parse(text) as Json;
}

type Handler = (event: unknown, context: Context) => Promise<unknown>;
const handlerCache = new Map<string, Promise<Handler>>();

/**
 * Imports `functions/<folder>/handler.ts` and returns its `handler` export.
 * @throws RunnerSetupError when the module has no `handler` function.
 */
export function loadHandler(folder: string): Promise<Handler> {
  let cached = handlerCache.get(folder);
  if (!cached) {
    const url = new URL(`${folder}/handler.js`, FUNCTIONS_URL).href;
    cached = import(url).then((module: { handler?: unknown }) => {
      if (typeof module.handler !== 'function')
        throw new RunnerSetupError(`functions/${folder}/handler.ts exports no handler function`);
      return module.handler as Handler;
    });
    handlerCache.set(folder, cached);
    cached.catch(() => handlerCache.delete(folder));
  }
  return cached;
}

function asJson(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

function stackLines(error: unknown): string[] {
  return error instanceof Error && error.stack ? error.stack.split('\n').slice(1, 6) : [];
}

/** Runs the redrive state machine locally; one instance can run many executions. */
/**
 * The task-token callbacks a local approver answers with, recording its decision in the
 * incident's audit trail first (on AWS the Slack interaction handler does): who, and for an
 * approver no person drives (auto-approval), the policy that decided.
 */
function auditedCallbacks(
  tokens: TaskTokenCallbacks,
  approver: Approver,
  payload: unknown,
  executionName: string,
): TaskTokenCallbacks {
  const incidentId = (payload as { plan?: { incidentId?: unknown } } | null)?.plan?.incidentId;
  return {
    sendTaskSuccess: async (token, output) => {
      // The Task first (a closed token throws and records nothing), then the audit entry.
      await tokens.sendTaskSuccess(token, output);
      const answer = output as { decision?: unknown; approvedBy?: unknown; reason?: unknown };
      if (
        typeof incidentId === 'string' &&
        (answer.decision === 'approved' || answer.decision === 'rejected')
      )
        await createAuditTrail().record({
          incidentId,
          entryId: `run#${executionName}#local-decision`,
          kind: answer.decision,
          at: Date.now(),
          by: typeof answer.approvedBy === 'string' ? answer.approvedBy : null,
          via: 'local',
          executionName,
          text: approver.policy
            ? `${answer.decision} by policy: ${approver.policy}`
            : `${answer.decision} with the local ${approver.name} approver${typeof answer.reason === 'string' ? ` (${answer.reason})` : ''}`,
        });
    },
    sendTaskFailure: (token, error, cause) => tokens.sendTaskFailure(token, error, cause),
  };
}

export class LocalWorkflowRunner {
  /** Task tokens of callback Tasks; answer them with `sendTaskSuccess` / `sendTaskFailure`. */
  public readonly tokens = new TaskTokenRegistry();
  /** The definition after substitution and local adjustments. */
  public readonly definition: Json;
  private readonly machine: StateMachine;
  private readonly plans: Map<string, TaskPlan>;
  private readonly region: string;
  private readonly accountId: string;
  /** The state machine's unqualified ARN (`$$.StateMachine.Id`). */
  private readonly machineArn: string;
  /** The alias executions start through unless told otherwise. */
  private readonly aliasArn: string;
  private readonly options: RunnerOptions;
  private readonly executions = new Map<string, RunningExecution>();
  /** Each execution's input as JSON text (StartExecution's idempotency compares it). */
  private readonly inputs = new Map<string, string>();
  /** Names of the executions that have ended (StartExecution is no longer idempotent for them). */
  private readonly ended = new Set<string>();

  /**
   * Prepares the definition and validates it (the library's own checks).
   * @throws RunnerSetupError for unresolved placeholders or Tasks that name no function.
   */
  public constructor(options: RunnerOptions = {}) {
    this.options = options;
    this.region = options.region ?? process.env.AWS_REGION ?? 'us-east-1';
    this.accountId = options.accountId ?? '123456789012';
    const raw = loadDefinition(options.definition);
    this.plans = planTasks(raw);
    const substitutions = { [ALIAS_PLACEHOLDER]: DEFAULT_WORKFLOW_ALIAS, ...options.substitutions };
    this.machineArn = `arn:aws:states:${this.region}:${this.accountId}:stateMachine:redrive`;
    this.aliasArn = `${this.machineArn}:${substitutions[ALIAS_PLACEHOLDER]}`;
    const definition = substitute(raw, this.region, this.accountId, substitutions);
    eachState(definition, (name, state) => {
      const override = options.timeoutSecondsOverrides?.[name];
      if (override !== undefined) {
        state.TimeoutSeconds = override;
        delete state.TimeoutSecondsPath;
        const plan = this.plans.get(name);
        if (plan) plan.timeoutSeconds = override;
      } else if (state.Type === 'Task' && state.TimeoutSeconds === undefined && !state.TimeoutSecondsPath) {
        // On AWS a Lambda Task without TimeoutSeconds waits for the function's own timeout; the
        // library would give up after 60 s, so give it the function timeout instead.
        state.TimeoutSeconds = Math.ceil(this.functionTimeoutMs(this.plans.get(name)) / 1000);
      }
    });
    this.definition = definition;
    this.machine = new StateMachine(definition as unknown as StateMachineDefinition, {
      validationOptions: { checkPaths: true, checkArn: true },
    });
  }

  /** The Task states and the function folder each is bound to (Lambda Tasks only). */
  public taskBindings(): Record<string, string> {
    return Object.fromEntries(
      [...this.plans.values()]
        .filter((p) => p.functionFolder !== '')
        .map((p) => [p.stateName, p.functionFolder]),
    );
  }

  /**
   * The results of a chain of executions, in order: `name`'s own, then, when it continued in a new
   * execution (`states:startExecution`), that one's, and so on; the last one is where the run ended.
   * @throws RunnerSetupError when `name` was not started by this runner.
   */
  public async chainOf(name: string): Promise<ExecutionResult[]> {
    const chain: ExecutionResult[] = [];
    let next: string | undefined = name;
    while (next !== undefined) {
      const running = this.executions.get(next);
      if (!running) throw new RunnerSetupError(`no execution named ${next} in this runner`);
      const result = await running.result;
      chain.push(result);
      next = result.startedExecutions.at(-1);
    }
    return chain;
  }

  /** Looks up an execution started by this runner. */
  public execution(name: string): RunningExecution | undefined {
    return this.executions.get(name);
  }

  /**
   * Starts an execution and returns at once; `result` settles when it ends (never rejects).
   *
   * @param input - the execution input (JSON).
   * @param name - execution name; @default `local-<uuid>`.
   * @param stateMachineArn - the ARN it is started on; @default the alias.
   */
  public start(
    input: unknown,
    name: string = `local-${randomUUID()}`,
    stateMachineArn: string = this.aliasArn,
  ): RunningExecution {
    const executionArn = `arn:aws:states:${this.region}:${this.accountId}:execution:redrive:${name}`;
    const startedAt = Date.now();
    const events: ExecutionEvent[] = [];
    const path: string[] = [];
    const invocations: Record<string, number> = {};
    const invocationMs: Record<string, number> = {};
    const timed = async <T>(state: string, run: () => Promise<T>): Promise<T> => {
      const t0 = performance.now();
      try {
        return await run();
      } finally {
        invocationMs[state] = (invocationMs[state] ?? 0) + (performance.now() - t0);
      }
    };
    const taskResults: Record<string, unknown> = {};
    const openTokens = new Set<string>();
    let unclaimedToken: string | undefined;
    const tokens = this.tokens;

    const startedExecutions: string[] = [];
    const limit = this.options.maxHistoryEvents ?? MAX_HISTORY_EVENTS;
    // ExecutionStarted; the closing event is added when the run ends.
    let historyEvents = 1;
    let historyLimitReached = false;
    const inputBytes = Buffer.byteLength(JSON.stringify(asJson(input)));
    let largestPayload: ExecutionResult['largestPayload'] = {
      bytes: inputBytes,
      state: name,
      kind: 'execution input',
    };
    const measure = (state: string, kind: 'input' | 'output', value: unknown) => {
      const bytes = Buffer.byteLength(JSON.stringify(value ?? null));
      if (bytes > largestPayload.bytes) largestPayload = { bytes, state, kind };
    };
    // `abort` is bound once the library has started the run.
    let abortRun: () => void = () => undefined;
    /** Adds events to the history; past the limit the execution fails with States.Runtime. */
    const record = (events: number) => {
      historyEvents += events;
      if (historyEvents >= limit && !historyLimitReached) {
        historyLimitReached = true;
        abortRun();
      }
    };

    const context = {
      Execution: {
        Id: executionArn,
        Input: asJson(input),
        Name: name,
        RoleArn: `arn:aws:iam::${this.accountId}:role/redrive-state-machine`,
        StartTime: new Date(startedAt).toISOString(),
      },
      StateMachine: { Id: this.machineArn, Name: 'redrive' },
      // `$$.Task.Token` is read while a callback Task's Parameters are evaluated: mint it then.
      Task: {
        get Token(): string {
          if (!unclaimedToken) {
            unclaimedToken = tokens.create().taskToken;
            openTokens.add(unclaimedToken);
          }
          return unclaimedToken;
        },
      },
    };

    const handlers: Record<string, (input: unknown) => Promise<unknown>> = {};
    for (const plan of this.plans.values()) {
      handlers[plan.stateName] = async (payload: unknown) => {
        invocations[plan.stateName] = (invocations[plan.stateName] ?? 0) + 1;
        // Scheduled, started (and submitted, for a callback), then succeeded or failed.
        record(plan.kind === 'callback' ? 4 : 3);
        if (historyLimitReached) throw new HistoryLimitError(limit);
        let result: unknown;
        if (plan.kind === 'start-execution') {
          result = this.startContinuation(payload as Json, name);
          startedExecutions.push(String((payload as Json).Name ?? ''));
        } else if (plan.kind === 'callback') {
          const token = unclaimedToken ?? context.Task.Token;
          unclaimedToken = undefined;
          result = await this.awaitCallback(plan, payload, token, name);
        } else {
          const event = plan.kind === 'invoke' ? (payload as Json).Payload : payload;
          const out = await timed(plan.stateName, () => this.invoke(plan, event, name));
          result =
            plan.kind === 'invoke' ? { Payload: out, StatusCode: 200, ExecutedVersion: '$LATEST' } : out;
        }
        taskResults[plan.stateName] = result;
        await this.options.onTaskResult?.(plan.stateName, result, name);
        return result as never;
      };
    }

    const waitTimeOverrides: Record<string, number> = {};
    const scale = this.options.waitScale;
    if (scale !== undefined) {
      eachState(this.definition, (stateName, state) => {
        if (state.Type === 'Wait' && typeof state.Seconds === 'number')
          waitTimeOverrides[stateName] = Math.round(state.Seconds * 1000 * scale);
      });
    }
    Object.assign(waitTimeOverrides, this.options.waitTimeOverrides);

    const overrides: NonNullable<RunOptions['overrides']> = {
      taskResourceLocalHandlers: handlers as never,
      waitTimeOverrides,
    };
    if (this.options.retryIntervalMs !== undefined) {
      const retryIntervalOverrides: Record<string, number> = {};
      eachState(this.definition, (stateName, state) => {
        if (Array.isArray(state.Retry))
          retryIntervalOverrides[stateName] = this.options.retryIntervalMs as number;
      });
      overrides.retryIntervalOverrides = retryIntervalOverrides;
    }

    const run = this.machine.run(asJson(input) as never, { overrides, context: context as never });
    abortRun = run.abort;
    const collecting = (async () => {
      for await (const raw of run.eventLogs) {
        const event = raw as unknown as ExecutionEvent;
        events.push(event);
        const state = event.state as { name: string; input?: unknown; output?: unknown } | undefined;
        if (event.type === 'StateEntered' && state) {
          path.push(state.name);
          measure(state.name, 'input', state.input);
          record(1);
        } else if (event.type === 'StateExited' && state) {
          measure(state.name, 'output', state.output);
          record(1);
        }
        this.options.onEvent?.(event, name);
      }
    })();

    const result = (async (): Promise<ExecutionResult> => {
      let status: ExecutionStatus = 'SUCCEEDED';
      let output: unknown = null;
      let error: string | null = null;
      let cause: string | null = null;
      try {
        output = await run.result;
      } catch (thrown) {
        if (thrown instanceof ExecutionTimeoutError) status = 'TIMED_OUT';
        else if (thrown instanceof ExecutionAbortedError && !historyLimitReached) status = 'ABORTED';
        else if (historyLimitReached) {
          status = 'FAILED';
          error = 'States.Runtime';
          cause = new HistoryLimitError(limit).message;
        } else {
          status = 'FAILED';
          const inner = thrown instanceof ExecutionError ? (thrown.cause as Error | undefined) : thrown;
          error = inner instanceof Error ? inner.name : 'Error';
          cause = inner instanceof Error ? inner.message : String(inner);
        }
      }
      for (const token of openTokens) tokens.close(token);
      // The log closes when the execution ends; an aborted or timed-out run may stop early.
      await Promise.race([collecting, sleep(200)]);
      // The last states' events arrive after the run settles: passing the quota there fails it too.
      if (historyLimitReached && error !== 'States.Runtime') {
        status = 'FAILED';
        output = null;
        error = 'States.Runtime';
        cause = new HistoryLimitError(limit).message;
      }
      this.ended.add(name);
      const stateTransitions = events.filter(
        (e) => e.type === 'StateEntered' || e.type === 'StateRetried',
      ).length;
      return {
        executionName: name,
        executionArn,
        status,
        output,
        error,
        cause,
        stateTransitions,
        // ExecutionSucceeded / ExecutionFailed / ...
        historyEvents: historyEvents + 1,
        largestPayload,
        startedExecutions,
        path,
        invocations,
        invocationMs,
        taskResults,
        events,
        durationMs: Date.now() - startedAt,
      };
    })();

    const running: RunningExecution = {
      executionName: name,
      executionArn,
      stateMachineArn,
      result,
      abort: run.abort,
    };
    this.executions.set(name, running);
    this.inputs.set(name, JSON.stringify(asJson(input)));
    return running;
  }

  /** Starts an execution and waits for it to end. */
  public run(input: unknown, name?: string): Promise<ExecutionResult> {
    return this.start(input, name).result;
  }

  /**
   * `states:startExecution` (request-response): starts `Name` with `Input` in this runner, as the
   * service would start another execution of the same state machine. A name already started is
   * returned as is when its input is the same and it still runs (a retried Task), like
   * StartExecution's idempotency.
   * @throws Error named `StepFunctions.ExecutionAlreadyExistsException` for a name with another
   *   input, or of an execution that has ended; `StepFunctions.StateMachineDoesNotExistException`
   *   for an ARN of another state machine.
   */
  private startContinuation(parameters: Json, parent: string): Json {
    const name = typeof parameters.Name === 'string' ? parameters.Name : `local-${randomUUID()}`;
    const target = String(parameters.StateMachineArn ?? '');
    if (target !== this.machineArn && !target.startsWith(`${this.machineArn}:`)) {
      const error = new Error(`State machine does not exist: '${target}'`);
      error.name = 'StepFunctions.StateMachineDoesNotExistException';
      throw error;
    }
    const raw = parameters.Input;
    const input = typeof raw === 'string' ? (JSON.parse(raw) as unknown) : (raw ?? {});
    const existing = this.executions.get(name);
    if (existing) {
      if (this.inputs.get(name) !== JSON.stringify(input) || this.ended.has(name)) {
        const error = new Error(
          `execution ${name} already exists, ended or with another input (started by ${parent})`,
        );
        error.name = 'StepFunctions.ExecutionAlreadyExistsException';
        throw error;
      }
    } else this.start(input, name, target);
    const started = this.executions.get(name) as RunningExecution;
    return { ExecutionArn: started.executionArn, StartDate: new Date().toISOString() };
  }

  /** The timeout of the function a Task calls, milliseconds (the option, else {@link localFunctionTimeoutMs}). */
  private functionTimeoutMs(plan: TaskPlan | undefined): number {
    return (
      this.options.lambdaTimeoutMs ??
      (plan?.functionFolder ? localFunctionTimeoutMs(plan.functionFolder) : LOCAL_MIN_FUNCTION_TIMEOUT_MS)
    );
  }

  private async invoke(plan: TaskPlan, event: unknown, executionName: string): Promise<unknown> {
    const context = lambdaContext({
      functionName: plan.functionName,
      timeoutMs: this.functionTimeoutMs(plan),
      region: this.region,
      accountId: this.accountId,
    });
    const custom = this.options.bindings?.[plan.stateName];
    const call = async () =>
      custom
        ? await custom(asJson(event), {
            stateName: plan.stateName,
            functionFolder: plan.functionFolder,
            context,
            executionName,
          })
        : await (await loadHandler(plan.functionFolder))(asJson(event), context);
    try {
      const faults = this.options.faults;
      const out = faults ? await faults.invoke(plan.functionFolder, call) : await call();
      return asJson(out);
    } catch (error) {
      if (error instanceof RunnerSetupError) throw error;
      const name = error instanceof Error ? error.name : 'Error';
      const message = error instanceof Error ? error.message : String(error);
      throw new LambdaFunctionError(name, message, stackLines(error));
    }
  }

  private async awaitCallback(
    plan: TaskPlan,
    payload: unknown,
    taskToken: string,
    executionName: string,
  ): Promise<unknown> {
    if (plan.timeoutSeconds !== null) this.tokens.expireAfter(taskToken, plan.timeoutSeconds);
    const outcome = this.tokens.outcome(taskToken);
    const event = (payload as Json | null)?.Payload ?? payload;
    if ((this.options.approvalMode ?? 'approver') === 'handler' || this.options.bindings?.[plan.stateName]) {
      await this.invoke(plan, event, executionName);
    } else {
      const approver = this.options.approver ?? autoApprover();
      // The approver may answer later (a prompt) or never (the Task's TimeoutSeconds decides).
      void approver
        .requestApproval(
          { taskToken, executionName, payload: asJson(event), timeoutSeconds: plan.timeoutSeconds },
          auditedCallbacks(this.tokens, approver, event, executionName),
        )
        .catch((error: unknown) => {
          if (this.tokens.isOpen(taskToken))
            void this.tokens.sendTaskFailure(taskToken, 'Local.ApproverFailed', String(error));
        });
    }
    const settled = await outcome;
    if (settled.kind === 'success') return settled.output;
    const failure = new Error(settled.cause ?? '');
    failure.name = settled.error;
    throw failure;
  }
}
