/**
 * Conformance: the local Step Functions (the runner over `aws-local-stepfunctions` and the API
 * stand-in, local/sfn-standin.ts) behaves as Step Functions does where the pipeline depends on it:
 * task tokens, StartExecution's idempotency, history events and their quota, and the names under
 * which a Lambda function's errors reach Retry and Catch. Small definitions with bound Tasks keep
 * it fast; the redrive definition itself is run by test/workflow/.
 */
import {
  GetExecutionHistoryCommand,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalWorkflowRunner } from '../../local/runner.js';
import { type SfnStandIn, type SfnStandInOptions, startSfnStandIn } from '../../local/sfn-standin.js';

const WAIT_FOR_TOKEN = 'arn:aws:states:::lambda:invoke.waitForTaskToken';
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
/** The `${<Name>FunctionArn}` placeholder the runner binds a Task by. */
const fn = (name: string) => `\${${name}FunctionArn}`;

/** A callback Task that hands its token to `tokens` and waits (at most `timeout` seconds). */
const callbackMachine = (timeout: number) => ({
  StartAt: 'Ask',
  States: {
    Ask: {
      Type: 'Task',
      Resource: WAIT_FOR_TOKEN,
      Parameters: { FunctionName: fn('Ask'), Payload: { 'token.$': '$$.Task.Token' } },
      TimeoutSeconds: timeout,
      End: true,
    },
  },
});

let sfn: SfnStandIn | undefined;
let client: SFNClient | undefined;
afterEach(async () => {
  client?.destroy();
  await sfn?.close();
  sfn = undefined;
});

async function standIn(options: SfnStandInOptions) {
  sfn = await startSfnStandIn({ region: 'us-east-1', ...options });
  client = new SFNClient({ region: 'us-east-1', endpoint: sfn.endpoint, credentials });
  return { sfn, client };
}

/** A stand-in whose callback Task's tokens arrive, in order, on the returned queue. */
async function withTokens(timeout: number) {
  const tokens: string[] = [];
  const waiters: Array<(t: string) => void> = [];
  const { sfn, client } = await standIn({
    definition: callbackMachine(timeout),
    bindings: {
      Ask: async (payload) => {
        const token = (payload as { token: string }).token;
        const waiter = waiters.shift();
        if (waiter) waiter(token);
        else tokens.push(token);
        return {};
      },
    },
  });
  const nextToken = () =>
    tokens.length > 0
      ? Promise.resolve(tokens.shift() as string)
      : new Promise<string>((resolve) => waiters.push(resolve));
  return { sfn, client, nextToken };
}

const errorName = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { name?: string }) => e.name,
  );

describe('task tokens @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_SendTaskSuccess.html', () => {
  it('C17 completes the Task once; the same token again is TaskTimedOut', async () => {
    const { sfn, client, nextToken } = await withTokens(60);
    const { executionArn } = await client.send(
      new StartExecutionCommand({ stateMachineArn: sfn.stateMachineArn, name: 'tok-once', input: '{}' }),
    );
    const token = await nextToken();
    await client.send(new SendTaskSuccessCommand({ taskToken: token, output: '{"decision":"approved"}' }));
    expect(await errorName(client.send(new SendTaskSuccessCommand({ taskToken: token, output: '{}' })))).toBe(
      'TaskTimedOut',
    );
    expect(
      await errorName(client.send(new SendTaskFailureCommand({ taskToken: token, error: 'Rejected' }))),
    ).toBe('TaskTimedOut');
    await sfn.settled();
    expect(sfn.runner.execution('tok-once')).toBeDefined();
    expect((await sfn.runner.execution('tok-once')?.result)?.output).toEqual({ decision: 'approved' });
    expect(executionArn).toContain(':execution:redrive:tok-once');
  });

  // @see https://docs.aws.amazon.com/step-functions/latest/dg/state-task.html (TimeoutSeconds)
  it('C17 closes the token when the Task times out: the execution fails States.Timeout and a late answer is TaskTimedOut', async () => {
    const { sfn, client, nextToken } = await withTokens(1);
    await client.send(
      new StartExecutionCommand({ stateMachineArn: sfn.stateMachineArn, name: 'tok-late', input: '{}' }),
    );
    const token = await nextToken();
    const result = await sfn.runner.execution('tok-late')?.result;
    expect([result?.status, result?.error]).toEqual(['FAILED', 'States.Timeout']);
    expect(await errorName(client.send(new SendTaskSuccessCommand({ taskToken: token, output: '{}' })))).toBe(
      'TaskTimedOut',
    );
  });

  it('C17 answers a garbled token with InvalidToken', async () => {
    const { client } = await withTokens(60);
    expect(
      await errorName(client.send(new SendTaskSuccessCommand({ taskToken: 'not-a-token', output: '{}' }))),
    ).toBe('InvalidToken');
  });

  // @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_SendTaskFailure.html
  it('SendTaskFailure fails the Task with the error name the caller gave', async () => {
    const { sfn, client, nextToken } = await withTokens(60);
    await client.send(
      new StartExecutionCommand({ stateMachineArn: sfn.stateMachineArn, name: 'tok-fail', input: '{}' }),
    );
    await client.send(
      new SendTaskFailureCommand({ taskToken: await nextToken(), error: 'Approval.Rejected', cause: 'no' }),
    );
    const result = await sfn.runner.execution('tok-fail')?.result;
    expect([result?.status, result?.error, result?.cause]).toEqual(['FAILED', 'Approval.Rejected', 'no']);
  });
});

describe('StartExecution idempotency @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html', () => {
  it('C19 returns the running execution for the same name and input, ExecutionAlreadyExists for another input or once it ended', async () => {
    const { sfn, client, nextToken } = await withTokens(60);
    const start = (input: string) =>
      client.send(
        new StartExecutionCommand({ stateMachineArn: sfn.stateMachineArn, name: 'same-name', input }),
      );
    const first = await start('{"run":1}');
    const again = await start('{"run":1}');
    expect(again.executionArn).toBe(first.executionArn);
    expect(await errorName(start('{"run":2}'))).toBe('ExecutionAlreadyExists');
    await client.send(new SendTaskSuccessCommand({ taskToken: await nextToken(), output: '{}' }));
    await sfn.settled();
    expect(await errorName(start('{"run":1}'))).toBe('ExecutionAlreadyExists');
  });

  // @see https://docs.aws.amazon.com/step-functions/latest/dg/connect-stepfunctions.html
  it('C19 a states:startExecution Task naming an ended execution fails StepFunctions.ExecutionAlreadyExistsException', async () => {
    const runner = new LocalWorkflowRunner({
      definition: {
        StartAt: 'Child?',
        States: {
          'Child?': {
            Type: 'Choice',
            Choices: [{ Variable: '$.child', IsPresent: true, Next: 'Done' }],
            Default: 'Start',
          },
          Start: {
            Type: 'Task',
            Resource: 'arn:aws:states:::states:startExecution',
            Parameters: {
              StateMachineArn: 'arn:aws:states:us-east-1:123456789012:stateMachine:redrive',
              Name: 'child-1',
              Input: { child: true },
            },
            End: true,
          },
          Done: { Type: 'Succeed' },
        },
      },
    });
    expect((await runner.run({}, 'parent-1')).status).toBe('SUCCEEDED');
    expect((await runner.chainOf('parent-1')).map((r) => r.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    const second = await runner.run({}, 'parent-2');
    expect([second.status, second.error]).toEqual([
      'FAILED',
      'StepFunctions.ExecutionAlreadyExistsException',
    ]);
  });
});

/** Pass, a Lambda Task whose first attempt fails and is retried, Choice, Wait, Succeed. */
const historyMachine = {
  StartAt: 'Prepare',
  States: {
    Prepare: { Type: 'Pass', Next: 'Work' },
    Work: {
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke',
      Parameters: { FunctionName: fn('Work'), Payload: {} },
      ResultSelector: { 'done.$': '$.Payload.done' },
      Retry: [{ ErrorEquals: ['Redrive.Transient'], IntervalSeconds: 1, MaxAttempts: 2 }],
      Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Caught' }],
      Next: 'Done?',
    },
    'Done?': {
      Type: 'Choice',
      Choices: [{ Variable: '$.done', BooleanEquals: true, Next: 'Pause' }],
      Default: 'Caught',
    },
    Pause: { Type: 'Wait', Seconds: 0, Next: 'Finished' },
    Finished: { Type: 'Succeed' },
    Caught: { Type: 'Fail', Error: 'Caught' },
  },
};

/** A Lambda error as the Node.js runtime reports it: `errorType` is the error's name. */
const failing = (name: string) => Object.assign(new Error(`${name} on purpose`), { name });

function historyRunner(maxHistoryEvents?: number) {
  let attempts = 0;
  return {
    definition: historyMachine,
    retryIntervalMs: 5,
    ...(maxHistoryEvents === undefined ? {} : { maxHistoryEvents }),
    bindings: {
      Work: async () => {
        attempts += 1;
        if (attempts === 1) throw failing('Redrive.Transient');
        return { done: true };
      },
    },
  };
}

// ExecutionStarted, Pass (2), the Task (entered, 2 x scheduled/started/failed-or-succeeded,
// exited), Choice (2), Wait (2), Succeed (2), ExecutionSucceeded.
const EXPECTED_HISTORY = [
  'ExecutionStarted',
  'PassStateEntered',
  'PassStateExited',
  'TaskStateEntered',
  'TaskScheduled',
  'TaskStarted',
  'TaskFailed',
  'TaskScheduled',
  'TaskStarted',
  'TaskSucceeded',
  'TaskStateExited',
  'ChoiceStateEntered',
  'ChoiceStateExited',
  'WaitStateEntered',
  'WaitStateExited',
  'SucceedStateEntered',
  'SucceedStateExited',
  'ExecutionSucceeded',
];

describe('execution history @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_HistoryEvent.html', () => {
  it('N04 counts and lists the events a Standard execution records, a retried Lambda attempt included', async () => {
    const { sfn, client } = await standIn(historyRunner());
    const { executionArn } = await client.send(
      new StartExecutionCommand({ stateMachineArn: sfn.stateMachineArn, name: 'history', input: '{}' }),
    );
    const result = await sfn.runner.execution('history')?.result;
    expect(result?.status).toBe('SUCCEEDED');
    expect(result?.historyEvents).toBe(EXPECTED_HISTORY.length);
    await sfn.settled();
    const history = await client.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000 }));
    expect(history.events?.map((e) => e.type)).toEqual(EXPECTED_HISTORY);
    expect(history.events?.map((e) => e.id)).toEqual(EXPECTED_HISTORY.map((_, i) => i + 1));
  });

  // @see https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html (25,000 events)
  it('N04 fails an execution that needs one event more than the quota with States.Runtime, which no Catch handles', async () => {
    const atLimit = await new LocalWorkflowRunner(historyRunner(EXPECTED_HISTORY.length)).run({}, 'at-limit');
    expect(atLimit.status).toBe('SUCCEEDED');
    const over = await new LocalWorkflowRunner(historyRunner(EXPECTED_HISTORY.length - 1)).run({}, 'over');
    expect([over.status, over.error]).toEqual(['FAILED', 'States.Runtime']);
    expect(over.path).not.toContain('Caught');
  });
});

describe('Lambda errors in Retry and Catch @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html', () => {
  // @see https://docs.aws.amazon.com/lambda/latest/dg/nodejs-exceptions.html
  it("matches Retry on the error's name and gives Catch Error = errorType and a JSON Cause of errorType, errorMessage and trace", async () => {
    let attempts = 0;
    const runner = new LocalWorkflowRunner({
      definition: {
        StartAt: 'Work',
        States: {
          Work: {
            Type: 'Task',
            Resource: 'arn:aws:states:::lambda:invoke',
            Parameters: { FunctionName: fn('Work'), Payload: {} },
            Retry: [{ ErrorEquals: ['Redrive.Transient'], IntervalSeconds: 1, MaxAttempts: 3 }],
            Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'Caught' }],
            End: true,
          },
          Caught: { Type: 'Pass', End: true },
        },
      },
      retryIntervalMs: 5,
      bindings: {
        Work: async () => {
          attempts += 1;
          throw failing(attempts === 1 ? 'Redrive.Transient' : 'Redrive.StateConflict');
        },
      },
    });
    const result = await runner.run({}, 'errors');
    expect(result.invocations.Work).toBe(2);
    const error = (result.output as { error: { Error: string; Cause: string } }).error;
    expect(error.Error).toBe('Redrive.StateConflict');
    const cause = JSON.parse(error.Cause) as { errorType: string; errorMessage: string; trace: unknown };
    expect([cause.errorType, cause.errorMessage]).toEqual([
      'Redrive.StateConflict',
      'Redrive.StateConflict on purpose',
    ]);
    expect(Array.isArray(cause.trace)).toBe(true);
  });
});
