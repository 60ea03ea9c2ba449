/**
 * Reading a redrive execution through the Step Functions API (DescribeExecution,
 * GetExecutionHistory): where it is, its plan, the ramp's last measurement, its outcome. Shared by
 * `dlq redrive`, `dlq watch` and `dlq cancel`; works the same against AWS and the local stand-in.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_GetExecutionHistory.html
 */
import {
  DescribeExecutionCommand,
  type DescribeExecutionCommandOutput,
  GetExecutionHistoryCommand,
  type HistoryEvent,
} from '@aws-sdk/client-sfn';
import type { CliContext } from './context.js';
import { CliError } from './output.js';

/** What a run looks like from its history. */
export interface RunView {
  executionArn: string;
  name: string;
  status: string;
  startDate: Date | undefined;
  stopDate: Date | undefined;
  input: Record<string, unknown>;
  /** `$.plan` (ValidateInput's output), once it ran. */
  plan: Record<string, unknown> | null;
  /** The state entered last (where the run is, or where it ended). */
  currentState: string | null;
  /** The last output of a move-task state (`$.ramp`). */
  ramp: Record<string, unknown> | null;
  /** Reconcile's output, once it ran. */
  reconcile: Record<string, unknown> | null;
  /** Every Task state's last output, by state name. */
  taskOutputs: Record<string, Record<string, unknown>>;
  /** States entered, in order, with their time. */
  path: Array<{ name: string; at: Date | undefined }>;
  error: string | null;
  cause: string | null;
}

const RAMP_STATES = new Set(['StartMoveTask', 'CheckProgress', 'StepUp', 'ResumeRamp']);

/**
 * An execution ARN from an ARN or a bare execution name (of the pipeline's state machine).
 * @throws CliError (exit 2) when a name is given and no state machine is configured.
 */
export function executionArnFrom(ctx: CliContext, value: string, stateMachineFlag?: string): string {
  if (value.startsWith('arn:')) {
    if (!/^arn:aws[a-z-]*:states:[^:]+:\d{12}:execution:[^:]+:[^:]+$/.test(value))
      throw new CliError(`execution: must be an execution ARN or name, got "${value}"`, 2);
    return value;
  }
  if (!/^[A-Za-z0-9_-]{1,80}$/.test(value))
    throw new CliError(
      `execution: must be an execution ARN or a name of 1-80 of A-Za-z0-9-_, got "${value}"`,
      2,
    );
  const machine = ctx
    .stateMachineArn(stateMachineFlag)
    .replace(/:stateMachine:([^:]+)(:.*)?$/, ':execution:$1');
  return `${machine}:${value}`;
}

function parse(text: string | undefined): Record<string, unknown> | null {
  if (!text) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Every history event of the execution, oldest first. */
async function history(ctx: CliContext, executionArn: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let nextToken: string | undefined;
  do {
    const page = await ctx.sfn().send(
      new GetExecutionHistoryCommand({
        executionArn,
        maxResults: 1000,
        ...(nextToken ? { nextToken } : {}),
      }),
    );
    events.push(...(page.events ?? []));
    nextToken = page.nextToken;
  } while (nextToken);
  return events;
}

/**
 * Reads the run.
 * @throws CliError (exit 1) when the execution does not exist.
 */
export async function readRun(ctx: CliContext, executionArn: string): Promise<RunView> {
  let described: DescribeExecutionCommandOutput;
  try {
    described = await ctx.sfn().send(new DescribeExecutionCommand({ executionArn }));
  } catch (error) {
    if ((error as { name?: string }).name === 'ExecutionDoesNotExist')
      throw new CliError(`execution ${executionArn}: does not exist`);
    throw error;
  }
  const view: RunView = {
    executionArn,
    name: described.name ?? executionArn.split(':').pop() ?? executionArn,
    status: described.status ?? 'UNKNOWN',
    startDate: described.startDate,
    stopDate: described.stopDate,
    input: parse(described.input) ?? {},
    plan: null,
    currentState: null,
    ramp: null,
    reconcile: null,
    taskOutputs: {},
    path: [],
    error: described.error ?? null,
    cause: described.cause ?? null,
  };
  for (const event of await history(ctx, executionArn)) {
    const entered = event.stateEnteredEventDetails;
    if (entered?.name) {
      view.currentState = entered.name;
      view.path.push({ name: entered.name, at: event.timestamp });
    }
    const exited = event.stateExitedEventDetails;
    if (exited?.name && event.type === 'TaskStateExited') {
      const output = parse(exited.output);
      if (!output) continue;
      if (output.plan && typeof output.plan === 'object') view.plan = output.plan as Record<string, unknown>;
      const slot = (field: string) => (output[field] as Record<string, unknown> | undefined) ?? null;
      if (RAMP_STATES.has(exited.name)) view.ramp = slot('ramp') ?? view.ramp;
      if (exited.name === 'Reconcile') view.reconcile = slot('reconcile');
      const own = {
        ValidateInput: 'plan',
        Preflight: 'preflight',
        CheckDlqStillHasMessages: 'recheck',
        Park: 'park',
        SampleRedrive: 'sample',
        VerifySample: 'verify',
        Reconcile: 'reconcile',
        Notify: 'notification',
        RecordFailure: 'notification',
      }[exited.name];
      const value = own ? slot(own) : RAMP_STATES.has(exited.name) ? slot('ramp') : null;
      if (value) view.taskOutputs[exited.name] = value;
    }
  }
  return view;
}

/** The incident a run belongs to: its plan's, else its input's. */
export function incidentOf(run: RunView): string | null {
  const id = run.plan?.incidentId ?? run.input.incidentId;
  return typeof id === 'string' ? id : null;
}

/** Waits `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
