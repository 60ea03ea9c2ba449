import { PassThrough } from 'node:stream';
import { FUNCTION_ACCESS } from '@dlq-redrive/cdk/function-catalog';
import { describe, expect, it } from 'vitest';
import { sleep } from '#platform/sleep.js';
import {
  type Approver,
  approverFromArgs,
  fixedApprover,
  silentApprover,
  terminalApprover,
} from '../../local/approver.js';
import {
  functionFolderOf,
  LOCAL_MIN_FUNCTION_TIMEOUT_MS,
  LocalWorkflowRunner,
  localFunctionTimeoutMs,
  RunnerSetupError,
} from '../../local/runner.js';
import { TaskTokenError } from '../../local/task-tokens.js';

// ASL placeholders (`${Name}`) are literal text here, substituted by the runner like CDK would.
const ph = (name: string): string => `$\{${name}}`;

// A small definition shaped like the real one (direct-ARN Tasks, a waitForTaskToken approval),
// so the runner's own behaviour is tested without the other parts' handlers.
const definition = {
  StartAt: 'Prepare',
  States: {
    Prepare: {
      Type: 'Task',
      Resource: ph('PreflightFunctionArn'),
      Parameters: { 'n.$': '$.n' },
      ResultPath: '$.preflight',
      Retry: [{ ErrorEquals: ['Redrive.Transient'], IntervalSeconds: 5, MaxAttempts: 2 }],
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'RecordFailure' }],
      Next: 'RequestApproval',
    },
    RequestApproval: {
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
      TimeoutSeconds: 3600,
      Parameters: {
        FunctionName: ph('RequestApprovalFunctionArn'),
        Payload: {
          'preflight.$': '$.preflight',
          'taskToken.$': '$$.Task.Token',
          'name.$': '$$.Execution.Name',
        },
      },
      ResultPath: '$.approval',
      Catch: [{ ErrorEquals: ['States.Timeout'], ResultPath: '$.error', Next: 'ApprovalExpired' }],
      Next: 'Pause',
    },
    Pause: { Type: 'Wait', Seconds: 30, Next: 'Done' },
    Done: { Type: 'Succeed' },
    ApprovalExpired: { Type: 'Fail', Error: 'ApprovalExpired', Cause: 'approval expired, nothing moved' },
    RecordFailure: { Type: 'Pass', Next: 'Failed' },
    Failed: { Type: 'Fail', Error: 'Failed' },
  },
};

function failing(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

describe('local runner', () => {
  it('binds each Task by state name to the function its placeholder names', () => {
    const runner = new LocalWorkflowRunner({ definition });
    expect(runner.taskBindings()).toEqual({ Prepare: 'preflight', RequestApproval: 'request-approval' });
    expect(functionFolderOf('MoveTaskFunctionArn')).toBe('move-task');
    const text = JSON.stringify(runner.definition);
    expect(text).toContain('"arn:aws:lambda:us-east-1:123456789012:function:PreflightFunction"');
    expect(text).not.toContain('${');
  });

  it('refuses a definition with a placeholder no substitution resolves, naming it', () => {
    const withQueue = structuredClone(definition) as { States: Record<string, Record<string, unknown>> };
    (withQueue.States.Prepare as { Parameters: Record<string, string> }).Parameters.queue =
      ph('ParkingQueueUrl');
    expect(() => new LocalWorkflowRunner({ definition: withQueue })).toThrow(/\$\{ParkingQueueUrl\}/);
    expect(() => new LocalWorkflowRunner({ definition: withQueue })).toThrow(RunnerSetupError);
    const ok = new LocalWorkflowRunner({
      definition: withQueue,
      substitutions: { ParkingQueueUrl: 'http://q/parking' },
    });
    expect(JSON.stringify(ok.definition)).toContain('http://q/parking');
  });

  it('retries a Redrive.Transient error, passes a Lambda-like context, and counts each retry as a transition', async () => {
    let calls = 0;
    let remaining = -1;
    const runner = new LocalWorkflowRunner({
      definition,
      retryIntervalMs: 1,
      waitScale: 0.001,
      lambdaTimeoutMs: 20_000,
      approver: fixedApprover('approved', 'alice'),
      bindings: {
        Prepare: async (payload, { context }) => {
          calls += 1;
          remaining = context.getRemainingTimeInMillis();
          if (calls === 1) throw failing('Redrive.Transient', 'throttled');
          return { depth: (payload as { n: number }).n * 2 };
        },
      },
    });
    const result = await runner.run({ n: 21 }, 'retry-run');
    expect(result.status).toBe('SUCCEEDED');
    expect(result.output).toMatchObject({
      preflight: { depth: 42 },
      approval: { decision: 'approved', approvedBy: 'alice' },
    });
    expect(calls).toBe(2);
    expect(remaining).toBeGreaterThan(15_000);
    expect(remaining).toBeLessThanOrEqual(20_000);
    expect(result.path).toEqual(['Prepare', 'RequestApproval', 'Pause', 'Done']);
    expect(result.stateTransitions).toBe(5);
  });

  it("gives each function its deployed timeout, at least 300 s: Park's 900 s scan of a 100,000-message DLQ is not cut at 300 s", async () => {
    const twoTasks = {
      StartAt: 'Park',
      States: {
        Park: { Type: 'Task', Resource: ph('ParkFunctionArn'), ResultPath: '$.park', Next: 'Notify' },
        Notify: { Type: 'Task', Resource: ph('NotifyFunctionArn'), ResultPath: '$.notify', End: true },
      },
    };
    const remaining: Record<string, number> = {};
    const runner = new LocalWorkflowRunner({
      definition: twoTasks,
      bindings: Object.fromEntries(
        ['Park', 'Notify'].map((state) => [
          state,
          async (_payload: unknown, { context }: { context: { getRemainingTimeInMillis(): number } }) => {
            remaining[state] = context.getRemainingTimeInMillis();
            return {};
          },
        ]),
      ),
    });
    const result = await runner.run({});
    expect(result.status).toBe('SUCCEEDED');
    // Park is deployed with 900 s; Notify with 30 s, which the local stack raises to its 300 s floor.
    expect(FUNCTION_ACCESS.park.timeoutSeconds).toBe(900);
    expect(localFunctionTimeoutMs('park')).toBe(900_000);
    expect(localFunctionTimeoutMs('notify')).toBe(LOCAL_MIN_FUNCTION_TIMEOUT_MS);
    expect(remaining.Park).toBeGreaterThan(LOCAL_MIN_FUNCTION_TIMEOUT_MS);
    expect(remaining.Park).toBeLessThanOrEqual(900_000);
    expect(remaining.Notify).toBeLessThanOrEqual(LOCAL_MIN_FUNCTION_TIMEOUT_MS);
    // The Task waits as long as its function may run (the library's own default is 60 s).
    const states = (runner.definition as { States: Record<string, { TimeoutSeconds?: number }> }).States;
    expect(states.Park?.TimeoutSeconds).toBe(900);
    expect(states.Notify?.TimeoutSeconds).toBe(300);
    // An explicit timeout applies to every function.
    const short = new LocalWorkflowRunner({ definition: twoTasks, lambdaTimeoutMs: 20_000 });
    const shortStates = (short.definition as { States: Record<string, { TimeoutSeconds?: number }> }).States;
    expect(shortStates.Park?.TimeoutSeconds).toBe(20);
  });

  it('hands a non-retryable error to Catch under its name with a Lambda-shaped JSON cause', async () => {
    const runner = new LocalWorkflowRunner({
      definition,
      bindings: {
        Prepare: async () => {
          throw failing('Redrive.InvalidInput', 'dlqArn: must be an SQS ARN');
        },
      },
    });
    const result = await runner.run({ n: 1 });
    expect(result.status).toBe('FAILED');
    expect(result.error).toBe('Failed');
    expect(result.invocations).toEqual({ Prepare: 1 });
    const caught = result.events.find((e) => e.type === 'StateFailed') as unknown as {
      Error: string;
      Cause: string;
    };
    expect(caught.Error).toBe('Redrive.InvalidInput');
    expect(JSON.parse(caught.Cause)).toMatchObject({
      errorType: 'Redrive.InvalidInput',
      errorMessage: 'dlqArn: must be an SQS ARN',
    });
  });

  it('gives the approver a token through $$.Task.Token and returns its answer as the Task result', async () => {
    const seen: unknown[] = [];
    const approver: Approver = {
      name: 'spy',
      async requestApproval(request, callbacks) {
        seen.push(request);
        await callbacks.sendTaskSuccess(request.taskToken, {
          decision: 'rejected',
          approvedBy: 'bob',
          reason: 'no',
        });
      },
    };
    const runner = new LocalWorkflowRunner({
      definition,
      approver,
      waitScale: 0.001,
      bindings: { Prepare: async () => ({ depth: 3 }) },
    });
    const result = await runner.run({ n: 1 }, 'token-run');
    const request = seen[0] as { taskToken: string; payload: { taskToken: string; name: string } };
    expect(request.payload.taskToken).toBe(request.taskToken);
    expect(request.payload.name).toBe('token-run');
    expect(result.taskResults.RequestApproval).toEqual({
      decision: 'rejected',
      approvedBy: 'bob',
      reason: 'no',
    });
    await expect(runner.tokens.sendTaskSuccess(request.taskToken, {})).rejects.toMatchObject({
      name: 'TaskTimedOut',
    });
  });

  it('C17 the approval TimeoutSeconds, shortened through the runner, ends the run ApprovalExpired and closes the token', async () => {
    let token = '';
    const approver: Approver = {
      name: 'late',
      async requestApproval(request) {
        token = request.taskToken;
      },
    };
    const runner = new LocalWorkflowRunner({
      definition,
      approver,
      timeoutSecondsOverrides: { RequestApproval: 1 },
      bindings: { Prepare: async () => ({ depth: 3 }) },
    });
    const result = await runner.run({ n: 1 });
    expect(result.status).toBe('FAILED');
    expect(result.error).toBe('ApprovalExpired');
    expect(result.path).toEqual(['Prepare', 'RequestApproval', 'ApprovalExpired']);
    expect(token).not.toBe('');
    const late = runner.tokens.sendTaskSuccess(token, { decision: 'approved' });
    await expect(late).rejects.toBeInstanceOf(TaskTokenError);
    await expect(runner.tokens.sendTaskSuccess(token, {})).rejects.toMatchObject({ name: 'TaskTimedOut' });
    await expect(runner.tokens.sendTaskSuccess('garbled', {})).rejects.toMatchObject({
      name: 'InvalidToken',
    });
    expect(silentApprover().name).toBe('silent');
  });

  it('chooses the approver from flags: --approve, --reject, auto when not a terminal, and names bad flags', async () => {
    expect((await approverFromArgs(['--approve'], true)).name).toBe('approve');
    expect((await approverFromArgs(['--reject'], false)).name).toBe('reject');
    expect((await approverFromArgs([], false)).name).toBe('auto');
    expect((await approverFromArgs([], true)).name).toBe('prompt');
    await expect(approverFromArgs(['--approve', '--reject'], false)).rejects.toThrow(/at most one/);
    await expect(approverFromArgs(['--approve-via', 'pigeon'], false)).rejects.toThrow(
      /--approve-via: unknown approver "pigeon"/,
    );
  });

  it('the terminal prompt approves on "y" and rejects on anything else, answering through the task token', async () => {
    const answers: unknown[] = [];
    for (const typed of ['y\n', 'no thanks\n']) {
      const input = new PassThrough();
      const output = new PassThrough();
      let printed = '';
      output.on('data', (chunk: Buffer) => {
        printed += chunk.toString();
      });
      const runner = new LocalWorkflowRunner({
        definition,
        waitScale: 0.001,
        approver: terminalApprover({ input, output }),
        bindings: { Prepare: async () => ({ depth: 3 }) },
      });
      const running = runner.start({ n: 1 }, `prompt-${answers.length}`);
      await sleep(100);
      input.write(typed);
      const result = await running.result;
      answers.push(result.taskResults.RequestApproval);
      expect(printed).toContain('Approve this redrive? [y/N]');
      expect(printed).toContain(`execution prompt-${answers.length - 1}`);
    }
    expect(answers[0]).toMatchObject({ decision: 'approved', reason: null });
    expect(answers[1]).toMatchObject({ decision: 'rejected', reason: 'rejected at the terminal prompt' });
  });

  it('a bound approval function gets the token in its payload and the Task waits for its callback', async () => {
    let runner: LocalWorkflowRunner | undefined;
    let posted: { taskToken?: string } = {};
    runner = new LocalWorkflowRunner({
      definition,
      waitScale: 0.001,
      bindings: {
        Prepare: async () => ({ depth: 3 }),
        // Stands in for the real request-approval function: it posts the request and returns;
        // the answer arrives later through SendTaskSuccess (here: the runner's token registry).
        RequestApproval: async (payload) => {
          posted = payload as { taskToken?: string };
          setTimeout(() => {
            void runner?.tokens.sendTaskSuccess(posted.taskToken ?? '', {
              decision: 'approved',
              approvedBy: 'U123',
              reason: null,
            });
          }, 50);
          return { posted: true };
        },
      },
    });
    const result = await runner.run({ n: 1 });
    expect(posted.taskToken).toMatch(/^local-task-token\./);
    expect(result.taskResults.RequestApproval).toEqual({
      decision: 'approved',
      approvedBy: 'U123',
      reason: null,
    });
    expect(result.status).toBe('SUCCEEDED');
    expect(runner.tokens.isOpen(posted.taskToken ?? '')).toBe(false);
  });

  it('counts history events the way a Standard workflow records them: 2 per state, 3 per Lambda attempt, 4 per callback', async () => {
    const runner = new LocalWorkflowRunner({
      definition,
      retryIntervalMs: 1,
      waitScale: 0.001,
      approver: fixedApprover('approved', 'alice'),
      bindings: {
        Prepare: (() => {
          let calls = 0;
          return async () => {
            calls += 1;
            if (calls === 1) throw failing('Redrive.Transient', 'throttled');
            return { depth: 1 };
          };
        })(),
      },
    });
    const result = await runner.run({ n: 1 });
    // started + ended 2; Prepare 2 + 2 attempts x 3; RequestApproval 2 + 4; Pause 2; Done 2.
    expect(result.historyEvents).toBe(2 + (2 + 6) + (2 + 4) + 2 + 2);
  });

  it('N04 fails a loop at the history limit with States.Runtime, which its Catch cannot handle', async () => {
    let checks = 0;
    const loop = {
      StartAt: 'Check',
      States: {
        Check: {
          Type: 'Task',
          Resource: ph('MoveTaskFunctionArn'),
          ResultPath: '$.ramp',
          Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'RecordFailure' }],
          Next: 'Again?',
        },
        'Again?': {
          Type: 'Choice',
          Choices: [{ Variable: '$.ramp.done', BooleanEquals: true, Next: 'Done' }],
          Default: 'Check',
        },
        RecordFailure: { Type: 'Pass', Next: 'Failed' },
        Failed: { Type: 'Fail', Error: 'Failed' },
        Done: { Type: 'Succeed' },
      },
    };
    const runner = new LocalWorkflowRunner({
      definition: loop,
      maxHistoryEvents: 100,
      bindings: {
        Check: async () => {
          checks += 1;
          return { done: false };
        },
      },
    });
    const result = await runner.run({});
    expect(result.status).toBe('FAILED');
    expect(result.error).toBe('States.Runtime');
    expect(result.cause).toMatch(/maximum number of history events \(100\)/);
    expect(result.path).not.toContain('RecordFailure');
    // 7 events per Check + Again? round: the run stops within one round of the limit.
    expect(checks).toBeGreaterThanOrEqual(13);
    expect(checks).toBeLessThanOrEqual(15);
  });

  it('a states:startExecution Task continues the run in a new execution that sees the input it was given', async () => {
    const chained = {
      StartAt: 'Work',
      States: {
        Work: {
          Type: 'Task',
          Resource: ph('MoveTaskFunctionArn'),
          Parameters: { 'round.$': '$.round', 'name.$': '$$.Execution.Name' },
          ResultPath: '$.work',
          Next: 'More?',
        },
        // Positive tests only: aws-local-stepfunctions never matches `IsNull: false` (or any
        // `Is*: false`), so a rule written that way would behave differently here than on AWS.
        'More?': {
          Type: 'Choice',
          Choices: [{ Variable: '$.work.next', IsNull: true, Next: 'Done' }],
          Default: 'ContinueAsNew',
        },
        ContinueAsNew: {
          Type: 'Task',
          Resource: 'arn:aws:states:::states:startExecution',
          Parameters: {
            'StateMachineArn.$': `States.Format('{}:$\{WorkflowAliasName}', $$.StateMachine.Id)`,
            'Name.$': '$.work.nextName',
            'Input.$': 'States.JsonMerge($$.Execution.Input, $.work.next, false)',
          },
          ResultPath: '$.continued',
          Next: 'Continued',
        },
        Continued: { Type: 'Succeed' },
        Done: { Type: 'Succeed' },
      },
    };
    const seen: Array<{ round: number; name: string }> = [];
    const runner = new LocalWorkflowRunner({
      definition: chained,
      bindings: {
        Work: async (payload) => {
          const p = payload as { round: number; name: string };
          seen.push(p);
          return p.round < 3
            ? { next: { round: p.round + 1 }, nextName: `chain-${p.round + 1}` }
            : { next: null, nextName: null };
        },
      },
    });
    await runner.run({ round: 1, keep: 'me' }, 'chain-1');
    const chain = await runner.chainOf('chain-1');
    expect(chain.map((r) => r.executionName)).toEqual(['chain-1', 'chain-2', 'chain-3']);
    expect(chain.map((r) => r.path.at(-1))).toEqual(['Continued', 'Continued', 'Done']);
    expect(seen).toEqual([
      { round: 1, name: 'chain-1' },
      { round: 2, name: 'chain-2' },
      { round: 3, name: 'chain-3' },
    ]);
    expect((chain[2]?.output as { keep?: string } | undefined)?.keep).toBe('me');
    expect(chain[0]?.taskResults.ContinueAsNew).toMatchObject({
      ExecutionArn: expect.stringMatching(/:execution:redrive:chain-2$/),
    });
  });

  it('starts the continuation on the alias the run started through, and refuses another state machine', async () => {
    const continueOn = (arn: string) => ({
      StartAt: 'Continue',
      States: {
        Continue: {
          Type: 'Task',
          Resource: 'arn:aws:states:::states:startExecution',
          Parameters: { StateMachineArn: arn, Name: 'next', Input: { stop: true } },
          Next: 'Done',
        },
        Done: { Type: 'Succeed' },
      },
    });
    const real = new LocalWorkflowRunner({ substitutions: { WorkflowAliasName: 'blue' } });
    const state = real.definition.States as Record<string, { Parameters?: Record<string, unknown> }>;
    expect(state.ContinueInNewExecution?.Parameters?.['StateMachineArn.$']).toBe(
      "States.Format('{}:blue', $$.StateMachine.Id)",
    );

    const machine = 'arn:aws:states:us-east-1:123456789012:stateMachine:redrive';
    const onVersion = new LocalWorkflowRunner({
      definition: continueOn(`${machine}:7`),
      region: 'us-east-1',
    });
    await onVersion.run({}, 'first');
    expect(onVersion.execution('first')?.stateMachineArn).toBe(`${machine}:live`);
    expect(onVersion.execution('next')?.stateMachineArn).toBe(`${machine}:7`);

    const foreign = new LocalWorkflowRunner({
      definition: continueOn('arn:aws:states:us-east-1:123456789012:stateMachine:other'),
      region: 'us-east-1',
    });
    const result = await foreign.run({}, 'first');
    expect(result.status).toBe('FAILED');
    expect(result.error).toBe('StepFunctions.StateMachineDoesNotExistException');
    expect(foreign.execution('next')).toBeUndefined();
  });

  it('measures the largest payload: the execution input or a state input or output', async () => {
    const runner = new LocalWorkflowRunner({
      definition,
      waitScale: 0.001,
      approver: fixedApprover('approved', 'alice'),
      bindings: { Prepare: async () => ({ blob: 'x'.repeat(5000) }) },
    });
    const result = await runner.run({ n: 1, small: true });
    expect(result.largestPayload.bytes).toBeGreaterThan(5000);
    expect(result.largestPayload.bytes).toBeLessThan(6000);
    expect(['Prepare', 'RequestApproval', 'Pause', 'Done']).toContain(result.largestPayload.state);
  });
});
