import type { SFNClient } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { incidentIdOf } from '#incident/incident-store.js';
import {
  createSfnWorkflowStarter,
  executionArnOf,
  executionNameOf,
} from '../../functions/triage/workflow-starter.js';

const STATE_MACHINE = 'arn:aws:states:us-east-1:111122223333:stateMachine:dlq-redrive';
const ALARM = 'arn:aws:cloudwatch:us-east-1:111122223333:alarm:orders-dlq-not-empty';
const DLQ = 'arn:aws:sqs:us-east-1:111122223333:orders-dlq';

/** A Step Functions client mock for the rare path: the second start answers ExecutionAlreadyExists. */
function sfnMock(startedWith: { stateMachineArn?: string } = {}) {
  const calls: Array<{ command: string; input: Record<string, unknown> }> = [];
  const names = new Set<string>();
  const client = {
    async send(command: { constructor: { name: string }; input: Record<string, unknown> }) {
      calls.push({ command: command.constructor.name, input: command.input });
      if (command.constructor.name === 'StartExecutionCommand') {
        const name = String(command.input.name);
        if (names.has(name))
          throw Object.assign(new Error('Execution Already Exists'), {
            name: 'ExecutionAlreadyExists',
            $metadata: { httpStatusCode: 400 },
          });
        names.add(name);
        startedWith.stateMachineArn = String(command.input.stateMachineArn);
        // Step Functions names executions under the state machine, whatever alias started them.
        return { executionArn: `${STATE_MACHINE.replace(':stateMachine:', ':execution:')}:${name}` };
      }
      return { executionArn: command.input.executionArn, status: 'SUCCEEDED' };
    },
  };
  return { client: client as unknown as SFNClient, calls };
}

describe('Step Functions workflow starter', () => {
  it('C19 derives a deterministic name of at most 80 characters from [A-Za-z0-9-_] only', () => {
    const incidentId = incidentIdOf(ALARM, '2026-01-02T10:35:00.000+0000', DLQ);
    expect(incidentIdOf(ALARM, '2026-01-02T10:35:00.000+0000', DLQ)).toBe(incidentId);
    expect(executionNameOf(incidentId)).toBe(incidentId);
    const raw = `${ALARM}@2026-01-02T10:35:00.000+0000`;
    const name = executionNameOf(raw);
    expect(name).toMatch(/^[A-Za-z0-9_-]{1,80}$/);
    expect(executionNameOf(raw)).toBe(name);
    expect(executionNameOf(`${raw}x`)).not.toBe(name);
  });

  it('C19 a retried start sends byte-identical input and treats ExecutionAlreadyExists as already started', async () => {
    const mock = sfnMock();
    const logged: string[] = [];
    const starter = createSfnWorkflowStarter({
      client: mock.client,
      stateMachineArn: STATE_MACHINE,
      log: (message) => logged.push(message),
    });
    const incidentId = incidentIdOf(ALARM, '2026-01-02T10:35:00.000+0000', DLQ);
    const input = { dlqArn: DLQ, incidentId, requestedBy: 'triage' };

    const first = await starter.startWorkflow({ incidentId, input });
    const retry = await starter.startWorkflow({ incidentId, input: { ...input } });

    expect(first.alreadyStarted).toBe(false);
    expect(retry).toEqual({ executionArn: first.executionArn, alreadyStarted: true });
    const starts = mock.calls.filter((c) => c.command === 'StartExecutionCommand');
    expect(starts).toHaveLength(2);
    expect(starts[1]?.input).toEqual(starts[0]?.input);
    expect(mock.calls.at(-1)).toEqual({
      command: 'DescribeExecutionCommand',
      input: { executionArn: first.executionArn },
    });
    expect(logged).toEqual(['duplicate workflow start: execution already exists']);
  });

  it('names executions under the state machine whether started through an alias, a version or neither', () => {
    expect(executionArnOf(`${STATE_MACHINE}:live`, 'inc-1')).toBe(
      'arn:aws:states:us-east-1:111122223333:execution:dlq-redrive:inc-1',
    );
    expect(executionArnOf(`${STATE_MACHINE}:7`, 'inc-1')).toBe(
      'arn:aws:states:us-east-1:111122223333:execution:dlq-redrive:inc-1',
    );
    expect(executionArnOf(STATE_MACHINE, 'inc-1')).toBe(
      'arn:aws:states:us-east-1:111122223333:execution:dlq-redrive:inc-1',
    );
  });

  it('C19 starts through the alias STATE_MACHINE_ARN names and, on a duplicate, describes the execution of the state machine', async () => {
    const startedWith: { stateMachineArn?: string } = {};
    const mock = sfnMock(startedWith);
    const starter = createSfnWorkflowStarter({
      client: mock.client,
      stateMachineArn: `${STATE_MACHINE}:live`,
    });
    const incidentId = incidentIdOf(ALARM, '2026-01-02T10:35:00.000+0000', DLQ);
    const input = { dlqArn: DLQ, incidentId, requestedBy: 'triage' };

    await starter.startWorkflow({ incidentId, input });
    const retry = await starter.startWorkflow({ incidentId, input });

    expect(startedWith.stateMachineArn).toBe(`${STATE_MACHINE}:live`);
    expect(mock.calls.at(-1)).toEqual({
      command: 'DescribeExecutionCommand',
      input: {
        executionArn: `arn:aws:states:us-east-1:111122223333:execution:dlq-redrive:${executionNameOf(incidentId)}`,
      },
    });
    expect(retry.alreadyStarted).toBe(true);
  });
});
