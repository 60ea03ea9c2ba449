/**
 * The local adapter of triage's `startWorkflow` port: starts the redrive state machine in-process
 * through {@link LocalWorkflowRunner}, one execution per name, like Step Functions' StartExecution
 * on a Standard workflow:
 *
 * - same name, same input, still running: the existing execution is returned, nothing new runs;
 * - same name after it closed, or with a different input: `ExecutionAlreadyExists` on AWS; the
 *   port reports "already started" with the existing execution ARN and never runs a second one;
 * - a name longer than 80 characters or with characters outside `[A-Za-z0-9-_]`: `InvalidName`.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
 */
import { errorMessage } from '#platform/errors.js';
import {
  executionNameOf,
  type WorkflowStart,
  type WorkflowStarter,
} from '../functions/triage/workflow-starter.js';
import type { ExecutionResult, LocalWorkflowRunner, RunningExecution } from './runner.js';

/** A start request, as triage makes it. */
export interface LocalStartRequest {
  /** Execution name: deterministic per alarm transition, at most 80 characters. */
  name: string;
  /** The execution input (JSON). */
  input: unknown;
}

/** What the port returns. */
export interface LocalStartResult {
  executionArn: string;
  /** True when an execution with this name existed and no new one was started. */
  alreadyStarted: boolean;
}

/** Raised for a name Step Functions would refuse (`InvalidName`). */
export class InvalidExecutionNameError extends Error {
  public override readonly name = 'InvalidName';
  public readonly $metadata = { httpStatusCode: 400 };
}

const NAME = /^[A-Za-z0-9_-]{1,80}$/;

/** A local starter (triage's {@link WorkflowStarter} port) and what it started. */
export interface LocalWorkflowStarter extends WorkflowStarter {
  /**
   * Starts the execution named `executionNameOf(incidentId)`, or returns the existing one
   * (`alreadyStarted: true`) without running anything.
   */
  startWorkflow(request: { incidentId: string; input: Record<string, unknown> }): Promise<WorkflowStart>;
  /** Starts (or finds) the execution named `request.name`. @throws InvalidExecutionNameError */
  startByName(request: LocalStartRequest): Promise<LocalStartResult>;
  /** Executions started so far, in start order. */
  readonly executions: readonly RunningExecution[];
  /** Start requests that found an existing execution (duplicates). */
  readonly duplicates: number;
  /** Waits for every started execution to end. */
  settled(): Promise<ExecutionResult[]>;
}

/**
 * Builds the local starter over a runner.
 *
 * @param runner - runs the executions.
 * @param options.onStart - called once per new execution (progress, logs).
 * @param options.inputDefaults - execution input fields added under the caller's own (the caller's
 *   win): local runs set `verifyMarginSeconds`, which triage leaves to ValidateInput's default.
 */
export function createLocalWorkflowStarter(
  runner: LocalWorkflowRunner,
  options: {
    onStart?: (execution: RunningExecution, input: unknown) => void;
    inputDefaults?: Record<string, unknown>;
  } = {},
): LocalWorkflowStarter {
  const byName = new Map<string, { execution: RunningExecution; inputJson: string; closed: boolean }>();
  const executions: RunningExecution[] = [];
  let duplicates = 0;
  return {
    get executions() {
      return executions;
    },
    get duplicates() {
      return duplicates;
    },
    startWorkflow({ incidentId, input }) {
      return this.startByName({
        name: executionNameOf(incidentId),
        input: { ...options.inputDefaults, ...input },
      });
    },
    async startByName(request) {
      if (!NAME.test(request.name))
        throw new InvalidExecutionNameError(
          `name: must be 1-80 characters of A-Z a-z 0-9 - _, got "${request.name}" (${request.name.length} characters)`,
        );
      let inputJson: string;
      try {
        inputJson = JSON.stringify(request.input);
      } catch (error) {
        throw new Error(`input: not JSON (${errorMessage(error)})`);
      }
      const existing = byName.get(request.name);
      if (existing) {
        duplicates += 1;
        return { executionArn: existing.execution.executionArn, alreadyStarted: true };
      }
      const execution = runner.start(JSON.parse(inputJson), request.name);
      const entry = { execution, inputJson, closed: false };
      byName.set(request.name, entry);
      executions.push(execution);
      void execution.result.then(() => {
        entry.closed = true;
      });
      options.onStart?.(execution, request.input);
      return { executionArn: execution.executionArn, alreadyStarted: false };
    },
    settled: () => Promise.all(executions.map((e) => e.result)),
  };
}
