/**
 * A local Step Functions API for the redrive state machine: the operations the `dlq` CLI and the
 * pipeline call (StartExecution, DescribeExecution, StopExecution, GetExecutionHistory,
 * ListExecutions, SendTaskSuccess, SendTaskFailure, SendTaskHeartbeat), served over the real AWS
 * JSON 1.0 protocol and backed by {@link LocalWorkflowRunner} (the real ASL, the real handlers).
 * The real `SFNClient` reaches it through `AWS_ENDPOINT_URL_SFN`.
 *
 * Behaviour copied from the service, because callers depend on it:
 * - StartExecution is idempotent for the same name and the same input while the execution runs
 *   (the existing execution is returned); another input, or the same name after it ended, is
 *   `ExecutionAlreadyExists`. Names are 1-80 characters of `A-Za-z0-9-_` (`InvalidName`);
 *   input must be a JSON document of at most 256 KiB (`InvalidExecutionInput`).
 * - Only the one state machine (or a qualified alias/version ARN of it) exists
 *   (`StateMachineDoesNotExist`); an unknown execution is `ExecutionDoesNotExist`.
 * - StopExecution of an ended execution is a no-op that returns its stop date.
 * - GetExecutionHistory returns the events the real service names (`ExecutionStarted`,
 *   `TaskStateEntered`, `TaskStateExited`, `ExecutionSucceeded`...), with `stateEnteredEventDetails`
 *   and `stateExitedEventDetails`; paged by `maxResults` / `nextToken`, `reverseOrder` supported.
 * - SendTask* map the local token registry's errors to the API's (`TaskTimedOut`,
 *   `TaskDoesNotExist`, `InvalidToken`, `InvalidOutput`).
 *
 * Not served: Map Run and activity APIs, versions/aliases management, redrive of failed executions.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_Operations.html
 */
import {
  awsJsonProtocol,
  requireString,
  type Standin,
  StandinError,
  startStandin,
} from './aws-standins/server.js';
import {
  type ExecutionEvent,
  type ExecutionResult,
  LocalWorkflowRunner,
  type RunnerOptions,
  type RunningExecution,
} from './runner.js';
import { TaskTokenError } from './task-tokens.js';

/** One history event as GetExecutionHistory returns it. */
export interface HistoryEvent {
  id: number;
  previousEventId: number;
  /** Epoch seconds (the JSON protocol's timestamp format). */
  timestamp: number;
  type: string;
  [details: string]: unknown;
}

interface ExecutionRecord {
  name: string;
  arn: string;
  input: string;
  startDate: number;
  stopDate: number | null;
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';
  output: string | null;
  error: string | null;
  cause: string | null;
  history: HistoryEvent[];
  running: RunningExecution;
}

/** Options of {@link startSfnStandIn}. */
export interface SfnStandInOptions extends RunnerOptions {
  /** @default 'redrive' */
  stateMachineName?: string;
  /** @default 0 (a free port) */
  port?: number;
  /** Called once per execution when it ends. */
  onExecutionEnded?: (result: ExecutionResult) => void;
}

/** A running stand-in. */
export interface SfnStandIn {
  endpoint: string;
  /** The skeleton's stand-in: its call record (`calls`) and fault injection (`fail`). */
  standin: Standin;
  stateMachineArn: string;
  runner: LocalWorkflowRunner;
  /** Waits for every execution started so far to end. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

const NAME = /^[A-Za-z0-9_-]{1,80}$/;
const MAX_INPUT_BYTES = 256 * 1024;
const seconds = (ms: number) => ms / 1000;

type MappedEvent = { timestamp: number; type: string; [details: string]: unknown };

/** How a Task state's attempts appear in the history: by the kind of its Resource. */
type TaskKind = {
  prefix: 'Task' | 'LambdaFunction';
  resourceType: string;
  resource: string;
  callback: boolean;
};

function taskKindOf(definition: Record<string, unknown>): (state: string) => TaskKind {
  const kinds = new Map<string, TaskKind>();
  const visit = (states: unknown) => {
    for (const [name, state] of Object.entries((states ?? {}) as Record<string, Record<string, unknown>>)) {
      const resource = String(state.Resource ?? '');
      if (state.Type === 'Task') {
        const [, service = 'lambda', action = 'invoke'] =
          /^arn:aws:states:::([a-z0-9-]+):([A-Za-z.]+)$/.exec(resource) ?? [];
        kinds.set(name, {
          prefix: resource.startsWith('arn:aws:lambda:') ? 'LambdaFunction' : 'Task',
          resourceType: service,
          resource: action,
          callback: resource.endsWith('.waitForTaskToken'),
        });
      }
      for (const branch of (state.Branches as Array<Record<string, unknown>> | undefined) ?? [])
        visit(branch.States);
      visit(((state.ItemProcessor ?? state.Iterator) as Record<string, unknown> | undefined)?.States);
    }
  };
  visit(definition.States);
  return (state) =>
    kinds.get(state) ?? { prefix: 'Task', resourceType: 'lambda', resource: 'invoke', callback: false };
}

/**
 * The history events of one library event. A Task records, besides entered and exited, per attempt
 * scheduled, started (submitted, for a callback) and succeeded or failed; a Task whose Resource is a
 * function ARN records them as `LambdaFunction*` events, as Step Functions does.
 */
function historyOf(
  event: ExecutionEvent,
  roleArn: string,
  kindOf: (state: string) => TaskKind,
  failedAttempts: Set<string>,
): MappedEvent[] {
  const timestamp = seconds(event.timestamp);
  const state = event.state as { name: string; type: string; input?: unknown; output?: unknown } | undefined;
  const json = (v: unknown) => JSON.stringify(v ?? null);
  const task = state?.type === 'Task' ? kindOf(state.name) : undefined;
  const attempt = (): MappedEvent[] => {
    if (!task || !state) return [];
    const prefix = task.prefix;
    const of = { resourceType: task.resourceType, resource: task.resource };
    return [
      {
        timestamp,
        type: `${prefix}Scheduled`,
        [`${lower(prefix)}ScheduledEventDetails`]: { ...of, input: json(state.input) },
      },
      { timestamp, type: `${prefix}Started`, [`${lower(prefix)}StartedEventDetails`]: of },
      ...(task.callback ? [{ timestamp, type: 'TaskSubmitted', taskSubmittedEventDetails: of }] : []),
    ];
  };
  switch (event.type) {
    case 'ExecutionStarted':
      return [
        {
          timestamp,
          type: 'ExecutionStarted',
          executionStartedEventDetails: { input: json(event.input), roleArn },
        },
      ];
    case 'ExecutionSucceeded':
      return [
        {
          timestamp,
          type: 'ExecutionSucceeded',
          executionSucceededEventDetails: { output: json(event.output) },
        },
      ];
    case 'ExecutionFailed':
      return [
        {
          timestamp,
          type: 'ExecutionFailed',
          executionFailedEventDetails: {
            error: String(event.Error ?? 'Error'),
            cause: String(event.Cause ?? ''),
          },
        },
      ];
    case 'ExecutionAborted':
      return [{ timestamp, type: 'ExecutionAborted', executionAbortedEventDetails: {} }];
    case 'ExecutionTimeout':
      return [{ timestamp, type: 'ExecutionTimedOut', executionTimedOutEventDetails: {} }];
    case 'StateEntered':
      if (!state) return [];
      failedAttempts.delete(state.name);
      return [
        {
          timestamp,
          type: `${state.type}StateEntered`,
          stateEnteredEventDetails: { name: state.name, input: json(state.input) },
        },
        ...attempt(),
      ];
    case 'StateRetried':
      if (state) failedAttempts.delete(state.name);
      return attempt();
    case 'StateExited': {
      if (!state) return [];
      const exited = {
        timestamp,
        type: `${state.type}StateExited`,
        stateExitedEventDetails: { name: state.name, output: json(state.output) },
      };
      if (!task || failedAttempts.has(state.name)) return [exited];
      const details = {
        resourceType: task.resourceType,
        resource: task.resource,
        output: json(state.output),
      };
      return [
        {
          timestamp,
          type: `${task.prefix}Succeeded`,
          [`${lower(task.prefix)}SucceededEventDetails`]: details,
        },
        exited,
      ];
    }
    case 'StateFailed':
      if (!task || !state) return [];
      failedAttempts.add(state.name);
      return [
        {
          timestamp,
          type: `${task.prefix}Failed`,
          [`${lower(task.prefix)}FailedEventDetails`]: {
            resourceType: task.resourceType,
            resource: task.resource,
            error: String(event.Error ?? 'Error'),
            cause: typeof event.Cause === 'string' ? event.Cause : JSON.stringify(event.Cause ?? ''),
          },
        },
      ];
    default:
      return [];
  }
}

const lower = (prefix: string) => `${prefix[0]?.toLowerCase()}${prefix.slice(1)}`;

const str = (input: Record<string, unknown>, field: string, required = true): string | undefined =>
  input[field] === undefined && !required ? undefined : requireString(input, field);

/**
 * Starts the stand-in and its runner.
 * @param options - runner options (approver, Wait overrides...) plus the server's own.
 */
export async function startSfnStandIn(options: SfnStandInOptions = {}): Promise<SfnStandIn> {
  const region = options.region ?? process.env.AWS_REGION ?? 'us-east-1';
  const accountId = options.accountId ?? '123456789012';
  const machineName = options.stateMachineName ?? 'redrive';
  const stateMachineArn = `arn:aws:states:${region}:${accountId}:stateMachine:${machineName}`;
  const roleArn = `arn:aws:iam::${accountId}:role/redrive-state-machine`;
  const executions = new Map<string, ExecutionRecord>();
  const byName = new Map<string, ExecutionRecord>();
  const pending: Array<Promise<unknown>> = [];
  const failedAttempts = new Map<string, Set<string>>();
  let kindOf: (state: string) => TaskKind = () => ({
    prefix: 'Task',
    resourceType: 'lambda',
    resource: 'invoke',
    callback: false,
  });
  const append = (name: string, event: ExecutionEvent) => {
    const record = byName.get(name);
    if (!record) return;
    const failed = failedAttempts.get(name) ?? new Set<string>();
    failedAttempts.set(name, failed);
    for (const mapped of historyOf(event, roleArn, kindOf, failed)) {
      const id = record.history.length + 1;
      record.history.push({ id, previousEventId: id - 1, ...mapped });
    }
  };
  const early = new Map<string, ExecutionEvent[]>();
  const runner = new LocalWorkflowRunner({
    ...options,
    region,
    accountId,
    onEvent: (event, name) => {
      if (byName.has(name)) append(name, event);
      else early.set(name, [...(early.get(name) ?? []), event]);
      options.onEvent?.(event, name);
    },
  });
  kindOf = taskKindOf(runner.definition);

  const find = (input: Record<string, unknown>) => {
    const arn = str(input, 'executionArn') as string;
    const record = executions.get(arn);
    if (!record) throw new StandinError('ExecutionDoesNotExist', `Execution Does Not Exist: '${arn}'`);
    return record;
  };
  const describe = (r: ExecutionRecord) => ({
    executionArn: r.arn,
    stateMachineArn,
    name: r.name,
    status: r.status,
    startDate: seconds(r.startDate),
    ...(r.stopDate !== null ? { stopDate: seconds(r.stopDate) } : {}),
    input: r.input,
    inputDetails: { included: true },
    ...(r.output !== null ? { output: r.output, outputDetails: { included: true } } : {}),
    ...(r.error !== null ? { error: r.error } : {}),
    ...(r.cause !== null ? { cause: r.cause } : {}),
  });
  const tokenCall = async (call: () => Promise<void>) => {
    try {
      await call();
      return {};
    } catch (error) {
      if (error instanceof TaskTokenError) throw new StandinError(error.name, error.message);
      throw error;
    }
  };

  const server: Standin = await startStandin(
    {
      service: 'SFN',
      protocol: awsJsonProtocol({
        version: '1.0',
        targetPrefix: 'AWSStepFunctions',
        namespace: 'com.amazonaws.sfn',
      }),
      operations: {
        StartExecution(input) {
          const machine = str(input, 'stateMachineArn') as string;
          if (machine !== stateMachineArn && !machine.startsWith(`${stateMachineArn}:`))
            throw new StandinError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${machine}'`);
          const name = str(input, 'name', false) ?? crypto.randomUUID();
          if (!NAME.test(name)) throw new StandinError('InvalidName', `Invalid Name: '${name}'`);
          const text = typeof input.input === 'string' ? input.input : '{}';
          if (Buffer.byteLength(text) > MAX_INPUT_BYTES)
            throw new StandinError('InvalidExecutionInput', 'Invalid Execution Input: larger than 256 KiB');
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            throw new StandinError(
              'InvalidExecutionInput',
              `Invalid Execution Input: not JSON: ${text.slice(0, 60)}`,
            );
          }
          const existing = byName.get(name);
          if (existing) {
            if (existing.status === 'RUNNING' && existing.input === text)
              return { executionArn: existing.arn, startDate: seconds(existing.startDate) };
            throw new StandinError('ExecutionAlreadyExists', `Execution Already Exists: '${existing.arn}'`);
          }
          const running = runner.start(parsed, name);
          const record: ExecutionRecord = {
            name,
            arn: running.executionArn,
            input: text,
            startDate: Date.now(),
            stopDate: null,
            status: 'RUNNING',
            output: null,
            error: null,
            cause: null,
            history: [],
            running,
          };
          executions.set(record.arn, record);
          byName.set(name, record);
          for (const event of early.get(name) ?? []) append(name, event);
          early.delete(name);
          pending.push(
            running.result.then((result) => {
              record.status = result.status;
              record.stopDate = record.stopDate ?? Date.now();
              record.output = result.status === 'SUCCEEDED' ? JSON.stringify(result.output ?? null) : null;
              record.error = result.error ?? record.error;
              record.cause = result.cause ?? record.cause;
              options.onExecutionEnded?.(result);
            }),
          );
          return { executionArn: record.arn, startDate: seconds(record.startDate) };
        },
        DescribeExecution: (input) => describe(find(input)),
        StopExecution(input) {
          const record = find(input);
          if (record.status === 'RUNNING') {
            record.stopDate = Date.now();
            record.error = typeof input.error === 'string' ? input.error : null;
            record.cause = typeof input.cause === 'string' ? input.cause : null;
            record.running.abort();
          }
          return { stopDate: seconds(record.stopDate ?? Date.now()) };
        },
        GetExecutionHistory(input) {
          const record = find(input);
          const events = input.reverseOrder === true ? [...record.history].reverse() : record.history;
          const max =
            typeof input.maxResults === 'number' && input.maxResults > 0
              ? Math.min(1000, input.maxResults)
              : 100;
          const start = typeof input.nextToken === 'string' ? Number(input.nextToken) : 0;
          if (!Number.isInteger(start) || start < 0) throw new StandinError('InvalidToken', 'Invalid Token');
          const page = events.slice(start, start + max);
          return { events: page, ...(start + max < events.length ? { nextToken: String(start + max) } : {}) };
        },
        ListExecutions(input) {
          const status = typeof input.statusFilter === 'string' ? input.statusFilter : undefined;
          return {
            executions: [...executions.values()]
              .filter((r) => !status || r.status === status)
              .reverse()
              .map((r) => ({
                executionArn: r.arn,
                stateMachineArn,
                name: r.name,
                status: r.status,
                startDate: seconds(r.startDate),
                ...(r.stopDate !== null ? { stopDate: seconds(r.stopDate) } : {}),
              })),
          };
        },
        SendTaskSuccess(input) {
          const token = str(input, 'taskToken') as string;
          let output: unknown;
          try {
            output = JSON.parse(String(input.output ?? 'null'));
          } catch {
            throw new StandinError('InvalidOutput', 'Invalid Output: not JSON');
          }
          return tokenCall(() => runner.tokens.sendTaskSuccess(token, output));
        },
        SendTaskFailure(input) {
          const token = str(input, 'taskToken') as string;
          return tokenCall(() =>
            runner.tokens.sendTaskFailure(
              token,
              typeof input.error === 'string' ? input.error : 'States.TaskFailed',
              typeof input.cause === 'string' ? input.cause : undefined,
            ),
          );
        },
        SendTaskHeartbeat(input) {
          const token = str(input, 'taskToken') as string;
          if (!runner.tokens.isOpen(token))
            throw new StandinError(
              token.startsWith('local-task-token.') ? 'TaskTimedOut' : 'InvalidToken',
              'Task is not open',
            );
          return {};
        },
      },
    },
    { port: options.port ?? 0 },
  );

  return {
    endpoint: server.url,
    standin: server,
    stateMachineArn,
    runner,
    settled: async () => {
      await Promise.all(pending);
    },
    async close() {
      for (const r of executions.values()) if (r.status === 'RUNNING') r.running.abort();
      await Promise.all(pending);
      await server.close();
    },
  };
}
