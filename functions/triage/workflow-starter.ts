/**
 * Starting the redrive workflow for an incident.
 *
 * The port is `startWorkflow({ incidentId, input })`. The AWS adapter calls StartExecution with a
 * name derived only from the incident id, and the caller passes input with no random or
 * time-of-call fields, so a retried triage sends the same name and byte-identical input.
 * `ExecutionAlreadyExists` (same name, already running with other input, or closed: names are
 * reserved for 90 days) means "already started": the existing execution's ARN is looked up and
 * returned with `alreadyStarted: true`, never retried under a new name.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
 */
import { DescribeExecutionCommand, type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { sha256Hex } from '#inventory/idempotency-key.js';
import { sfnClient } from '#platform/clients.js';
import { awsErrorName, InvalidInputError } from '#platform/errors.js';

/** Result of a start. */
export interface WorkflowStart {
  executionArn: string;
  /** True when an execution with this name already existed (a duplicate start). */
  alreadyStarted: boolean;
}

/** The workflow-starter port triage depends on. */
export interface WorkflowStarter {
  startWorkflow(request: { incidentId: string; input: Record<string, unknown> }): Promise<WorkflowStart>;
}

/** Longest execution name Step Functions accepts. */
export const MAX_EXECUTION_NAME = 80;

/**
 * A deterministic execution name: only `[A-Za-z0-9-_]`, at most 80 characters. Anything else
 * becomes `-`; a name that had to be changed or cut gets a hash suffix so distinct inputs never
 * collide.
 *
 * @example executionNameOf('inc-3f2a9c0d1e2f3a4b5c6d7e8f') // 'inc-3f2a9c0d1e2f3a4b5c6d7e8f'
 */
export function executionNameOf(incidentId: string): string {
  const clean = incidentId.replace(/[^A-Za-z0-9_-]/g, '-');
  if (clean === incidentId && clean.length <= MAX_EXECUTION_NAME && clean.length > 0) return clean;
  const suffix = sha256Hex(incidentId).slice(0, 16);
  return `${clean.slice(0, MAX_EXECUTION_NAME - suffix.length - 1)}-${suffix}`;
}

/**
 * The execution ARN Step Functions gives an execution named `name` started with
 * `stateMachineArn`. That ARN may name a version or an alias (`...:stateMachine:<name>:live`, as
 * `STATE_MACHINE_ARN` does): executions are named under the state machine itself, whichever
 * version or alias started them, so the qualifier is dropped.
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/execution-alias-version-associate.html
 */
export function executionArnOf(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(/:stateMachine:([^:]+)(:[^:]+)?$/, ':execution:$1')}:${name}`;
}

/**
 * The Step Functions adapter.
 *
 * @param options.client - @default the shared Step Functions client
 * @param options.stateMachineArn - the redrive state machine (config `STATE_MACHINE_ARN`).
 * @param options.log - where the duplicate-start line goes.
 * @throws InvalidInputError when no state machine ARN is configured.
 */
export function createSfnWorkflowStarter(
  options: {
    client?: SFNClient;
    stateMachineArn?: string | undefined;
    log?: (message: string, extra: object) => void;
  } = {},
): WorkflowStarter {
  return {
    async startWorkflow({ incidentId, input }) {
      const { stateMachineArn } = options;
      if (!stateMachineArn)
        throw new InvalidInputError('no state machine configured', ['STATE_MACHINE_ARN: is required']);
      const client = options.client ?? sfnClient();
      const name = executionNameOf(incidentId);
      try {
        const out = await client.send(
          new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }),
        );
        return {
          executionArn: out.executionArn ?? executionArnOf(stateMachineArn, name),
          alreadyStarted: false,
        };
      } catch (error) {
        if (awsErrorName(error) !== 'ExecutionAlreadyExists') throw error;
        const executionArn = executionArnOf(stateMachineArn, name);
        const existing = await client.send(new DescribeExecutionCommand({ executionArn }));
        options.log?.('duplicate workflow start: execution already exists', {
          incidentId,
          executionArn: existing.executionArn ?? executionArn,
          status: existing.status,
        });
        return { executionArn: existing.executionArn ?? executionArn, alreadyStarted: true };
      }
    },
  };
}
