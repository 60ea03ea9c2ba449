import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { StateMachine } from 'aws-local-stepfunctions';
import { describe, expect, it } from 'vitest';

// asl-validator ships no type declarations: give its one function a type here.
const aslValidator = createRequire(import.meta.url)('asl-validator') as (definition: unknown) => {
  isValid: boolean;
  errors: unknown[];
};
type JSONValue = Parameters<StateMachine['run']>[0];

const ASL_PATH = new URL('../../statemachines/redrive.asl.json', import.meta.url);
const text = readFileSync(ASL_PATH, 'utf8');
const definition = JSON.parse(text) as {
  StartAt: string;
  States: Record<string, Record<string, unknown>>;
};
const RETRYABLE = [
  'Redrive.Transient',
  'Lambda.ServiceException',
  'Lambda.TooManyRequestsException',
  'Lambda.SdkClientException',
];
const tasks = Object.entries(definition.States).filter(([, s]) => s.Type === 'Task');
/** The continuation of a long run: a Step Functions Task (states:startExecution), not a Lambda. */
const START_EXECUTION = 'arn:aws:states:::states:startExecution';
const lambdaTasks = tasks.filter(([, s]) => s.Resource !== START_EXECUTION);
/**
 * The steps between the approval and the bulk move: a failure there is reconciled before it is
 * reported (no move task of the run is running yet, so a final inventory is true).
 */
const RECONCILED_ON_FAILURE = [
  'Park',
  'MoverSample',
  'SampleRedrive',
  'VerifySample',
  'ReverifySample',
  'MoverStep',
  // The ramp parks late poison only once its task has stopped (move-task.ts examine).
  'ParkLateArrivals',
];
/** The ramp's steps: a failure there stops the run's move task first (StopRampAfterFailure). */
const RAMP_STEPS = ['StartMoveTask', 'CheckProgress', 'StepUp', 'ResumeRamp'];

/** Replaces `${XFunctionArn}` placeholders the way CDK definition substitutions (and the local runner) do. */
function substituted(): unknown {
  return JSON.parse(
    text.replace(
      /\$\{(\w+)\}/g,
      (_m, name: string) => `arn:aws:lambda:us-east-1:123456789012:function:${name}`,
    ),
  );
}

type Handlers = Record<string, (input: JSONValue) => JSONValue | Promise<JSONValue>>;

const plan = {
  incidentId: 'inc-1',
  dlqArn: 'arn:aws:sqs:us-east-1:123456789012:orders-dlq',
  mode: 'redrive',
  preApproved: false,
  approvedBy: null,
  inventoryId: null,
};
const okPreflight = { ok: true, refusal: null, dlqDepth: 12 };
const ramp = (decision: string, rateIndex = 0) => ({ decision, rateIndex, rate: 5, dwellSeconds: 60 });

function happyHandlers(overrides: Handlers = {}): Handlers {
  let checks = 0;
  return {
    ValidateInput: () => plan,
    Preflight: () => okPreflight,
    RequestApproval: () => ({ decision: 'approved', approvedBy: 'U1', reason: null }),
    CheckDlqStillHasMessages: () => okPreflight,
    Park: () => ({ parked: 1, discarded: 0, skipped: 0 }),
    SampleRedrive: () => ({
      redriveId: 'inc-1',
      sent: 5,
      alreadySent: 0,
      keys: ['k1'],
      verifyAfterSeconds: 90,
    }),
    VerifySample: () => ({ verdict: 'pass', returned: [], processed: 0, unknown: 5, reason: 'ok' }),
    StartMoveTask: () => ramp('hold'),
    CheckProgress: () => {
      checks += 1;
      return checks === 1 ? ramp('step-up') : ramp('done', 1);
    },
    StepUp: () => ramp('hold', 1),
    Reconcile: () => ({ inventoried: 12, redriven: 11, parked: 1, discarded: 0, inDlq: 0, missing: 0 }),
    StopRampAfterFailure: () => ({ ...ramp('halt'), reason: 'no move task of this run was running' }),
    ReconcileAfterFailure: () => ({
      inventoried: 12,
      redriven: 0,
      parked: 1,
      discarded: 0,
      inDlq: 11,
      missing: 0,
    }),
    Notify: (input) => ({ notified: true, outcome: (input as { outcome: string }).outcome }),
    RecordFailure: () => ({ notified: true, outcome: 'failed' }),
    ...overrides,
  };
}

async function run(handlers: Handlers, input: JSONValue = { dlqArn: plan.dlqArn }) {
  const machine = new StateMachine(substituted() as never, { validationOptions: { checkArn: true } });
  const visited: string[] = [];
  const wrapped: Handlers = {};
  for (const [name, fn] of Object.entries(handlers)) {
    wrapped[name] = async (i) => {
      visited.push(name);
      return fn(i);
    };
  }
  const execution = machine.run(input, {
    overrides: {
      taskResourceLocalHandlers: wrapped,
      waitTimeOverrides: { WaitForVerification: 0, WaitBeforeReverify: 0, Dwell: 0 },
      retryIntervalOverrides: Object.fromEntries(tasks.map(([n]) => [n, 0])),
    },
    context: { Task: { Token: 'local-token' }, Execution: { Name: 'local-run' } } as never,
  });
  const outcome = await execution.result.then(
    (output) => ({ status: 'SUCCEEDED' as const, output: output as Record<string, unknown>, error: null }),
    // ExecutionError wraps the Fail state's (or the uncaught) error as `cause`.
    (error: Error) => ({ status: 'FAILED' as const, output: null, error: (error.cause ?? error) as Error }),
  );
  return { ...outcome, visited };
}

describe('redrive.asl.json', () => {
  it('passes asl-validator', () => {
    const result = aslValidator(definition as never);
    expect(result.errors).toEqual([]);
    expect(result.isValid).toBe(true);
  });

  it('gives every Task a Retry on the retryable error names and a Catch on States.ALL', () => {
    expect(lambdaTasks.length).toBeGreaterThanOrEqual(12);
    for (const [name, state] of lambdaTasks) {
      const retry = state.Retry as Array<{ ErrorEquals: string[] }>;
      expect(retry[0]?.ErrorEquals, name).toEqual(RETRYABLE);
      const catches = state.Catch as Array<{ ErrorEquals: string[]; Next: string }>;
      const all = catches.find((c) => c.ErrorEquals.includes('States.ALL'));
      expect(all?.Next, name).toBe(
        name === 'RecordFailure'
          ? 'Failed'
          : RECONCILED_ON_FAILURE.includes(name)
            ? 'ReconcileAfterFailure'
            : RAMP_STEPS.includes(name)
              ? 'StopRampAfterFailure'
              : 'RecordFailure',
      );
    }
  });

  it('accounts for what a failed step between approval and bulk move did before RecordFailure reports it', () => {
    const after = definition.States.ReconcileAfterFailure as {
      Resource: string;
      Parameters: Record<string, string>;
      ResultPath: string;
      Next: string;
      Catch: Array<{ ErrorEquals: string[]; ResultPath: string; Next: string }>;
    };
    // The same function as Reconcile, its result where Notify reads the counts, and a failure of its
    // own must not overwrite $.error (the cause RecordFailure names).
    expect(after.Resource).toBe(definition.States.Reconcile?.Resource);
    expect(after.ResultPath).toBe('$.reconcile');
    expect(after.Parameters).toEqual({ 'plan.$': '$.plan', outcome: 'failed' });
    expect(after.Next).toBe('RecordFailure');
    expect(after.Catch).toEqual([
      { ErrorEquals: ['States.ALL'], ResultPath: '$.reconcileError', Next: 'RecordFailure' },
    ]);
    // Every state that reaches it runs when no move task of the run is running: before the ramp,
    // ParkLateArrivals, and StopRampAfterFailure once it has stopped the ramp's task.
    const reaching = lambdaTasks
      .filter(([, s]) => (s.Catch as Array<{ Next: string }>).some((c) => c.Next === 'ReconcileAfterFailure'))
      .map(([n]) => n);
    expect(reaching.sort()).toEqual([...RECONCILED_ON_FAILURE].sort());
    const stop = definition.States.StopRampAfterFailure as {
      Resource: string;
      Parameters: Record<string, string>;
      ResultPath: string;
      Next: string;
      Catch: Array<{ ErrorEquals: string[]; ResultPath: string; Next: string }>;
    };
    expect(stop.Resource).toBe(definition.States.CheckProgress?.Resource);
    expect(stop.Parameters.action).toBe('stop');
    expect(stop.ResultPath).toBe('$.rampStop');
    expect(stop.Next).toBe('ReconcileAfterFailure');
    expect(stop.Catch).toEqual([
      { ErrorEquals: ['States.ALL'], ResultPath: '$.stopError', Next: 'RecordFailure' },
    ]);
  });

  it('bounds RequestApproval with TimeoutSeconds and routes States.Timeout to ApprovalExpired (C17)', () => {
    const approval = definition.States.RequestApproval as {
      Resource: string;
      TimeoutSeconds: number;
      Parameters: { Payload: Record<string, string> };
      Catch: Array<{ ErrorEquals: string[]; Next: string }>;
    };
    expect(approval.Resource).toBe('arn:aws:states:::lambda:invoke.waitForTaskToken');
    expect(approval.TimeoutSeconds).toBe(3600);
    expect(approval.Parameters.Payload['taskToken.$']).toBe('$$.Task.Token');
    expect(approval.Catch[0]).toMatchObject({
      ErrorEquals: ['States.Timeout'],
      Next: 'OutcomeApprovalExpired',
    });
  });

  it('uses exactly the placeholders of docs/contracts.md, and the direct-ARN form for every other Task', () => {
    const placeholders = [...new Set([...text.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]))].sort();
    expect(placeholders).toEqual([
      'ContinueInventoryFunctionArn',
      'MoveTaskFunctionArn',
      'MoverFunctionArn',
      'NotifyFunctionArn',
      'ParkFunctionArn',
      'PreflightFunctionArn',
      'ReconcileFunctionArn',
      'RequestApprovalFunctionArn',
      'SampleRedriveFunctionArn',
      'ValidateInputFunctionArn',
      'VerifySampleFunctionArn',
      'WorkflowAliasName',
    ]);
    for (const [name, state] of lambdaTasks) {
      if (name === 'RequestApproval') continue;
      expect(state.Resource, name).toMatch(/^\$\{\w+FunctionArn\}$/);
    }
  });

  it('N04 continues the inventory loop in a new execution of the same state machine, its input carried by ids', () => {
    const continuation = definition.States.ContinueInNewExecution as {
      Resource: string;
      Parameters: Record<string, string>;
      Retry: Array<{ ErrorEquals: string[] }>;
      Catch: Array<{ ErrorEquals: string[]; Next: string }>;
      Next: string;
    };
    expect(continuation.Resource).toBe(START_EXECUTION);
    expect(continuation.Parameters).toEqual({
      // Through the alias the run started on, not the unqualified ARN's latest revision.
      'StateMachineArn.$': `States.Format('{}:$\{WorkflowAliasName}', $$.StateMachine.Id)`,
      'Name.$': '$.inventory.continuation.executionName',
      'Input.$': 'States.JsonMerge($$.Execution.Input, $.inventory.continuation.input, false)',
    });
    expect(continuation.Retry[0]?.ErrorEquals).toContain('States.TaskFailed');
    expect(continuation.Catch[0]).toMatchObject({ ErrorEquals: ['States.ALL'], Next: 'RecordFailure' });
    expect(definition.States[continuation.Next]?.Type).toBe('Succeed');
  });

  it('contains every state name the contract fixes', () => {
    for (const name of [
      'ValidateInput',
      'InventoryPending?',
      'ContinueInventory',
      'InventoryDone?',
      'ContinueInNewExecution',
      'Preflight',
      'PreflightOk?',
      'PreApproved?',
      'RequestApproval',
      'Approved?',
      'CheckDlqStillHasMessages',
      'Park',
      'SampleRedrive',
      'WaitForVerification',
      'VerifySample',
      'SamplePassed?',
      'StartMoveTask',
      'Dwell',
      'CheckProgress',
      'RampDecision?',
      'StepUp',
      'ParkFirst?',
      'Path?',
      'MoverSample',
      'StartMover',
      'MoverStep',
      'MoverDecision?',
      'MoverDrain',
      'Reconcile',
      'Notify',
      'Done',
      'NothingToRedrive',
      'RedriveRefused',
      'ApprovalRejected',
      'ApprovalExpired',
      'SampleFailed',
      'RedriveHalted',
      'Failed',
      'RecordFailure',
    ]) {
      expect(definition.States[name], name).toBeDefined();
    }
  });

  it('passes ValidateInput the raw input and the execution name (deterministic console incident ids, C19)', () => {
    expect(definition.States.ValidateInput?.Parameters).toEqual({
      'input.$': '$',
      'executionName.$': '$$.Execution.Name',
    });
  });

  it('waits on the sample verification window and the ramp dwell through SecondsPath', () => {
    expect(definition.States.WaitForVerification).toMatchObject({
      SecondsPath: '$.sample.verifyAfterSeconds',
    });
    expect(definition.States.Dwell).toMatchObject({ SecondsPath: '$.ramp.dwellSeconds' });
  });
});

describe('redrive.asl.json routing, run locally with stub tasks', () => {
  it('runs the approved path: park, sample, verify, start, step up, done, reconcile, notify', async () => {
    const result = await run(happyHandlers());
    expect(result.status).toBe('SUCCEEDED');
    expect(result.visited).toEqual([
      'ValidateInput',
      'Preflight',
      'RequestApproval',
      'CheckDlqStillHasMessages',
      'Park',
      'SampleRedrive',
      'VerifySample',
      'StartMoveTask',
      'CheckProgress',
      'StepUp',
      'CheckProgress',
      'Reconcile',
      'Notify',
    ]);
    expect(result.output?.outcome).toBe('completed');
  });

  it('stops after a failed sample: nothing is bulk-moved and the run ends SampleFailed', async () => {
    const result = await run(
      happyHandlers({
        VerifySample: () => ({
          verdict: 'fail',
          returned: ['k1'],
          processed: 0,
          unknown: 0,
          reason: 'came back',
        }),
      }),
    );
    expect(result.status).toBe('FAILED');
    expect(result.error?.name).toBe('Redrive.SampleFailed');
    expect(result.visited).not.toContain('StartMoveTask');
    expect(result.visited.slice(-2)).toEqual(['Reconcile', 'Notify']);
  });

  it('checks an inconclusive sample again and never starts the bulk move on it (N12)', async () => {
    const attempts: unknown[] = [];
    const verify = (input: JSONValue) => {
      const previous = (input as { previous?: { attempt: number } }).previous;
      attempts.push(previous?.attempt ?? null);
      const attempt = (previous?.attempt ?? 0) + 1;
      return {
        verdict: attempt < 3 ? 'inconclusive' : 'fail',
        attempt,
        retryAfterSeconds: 1,
        returned: [],
        processed: 0,
        unknown: 1,
        reason: 'the peek saw 20 of 40',
      };
    };
    const result = await run(happyHandlers({ VerifySample: verify, ReverifySample: verify }));
    expect(result.error?.name).toBe('Redrive.SampleFailed');
    expect(attempts).toEqual([null, 1, 2]);
    expect(result.visited).not.toContain('StartMoveTask');
    expect(result.visited.slice(-5)).toEqual([
      'VerifySample',
      'ReverifySample',
      'ReverifySample',
      'Reconcile',
      'Notify',
    ]);
  });

  it('starts the bulk move once a re-check of an inconclusive sample passes (N12)', async () => {
    const result = await run(
      happyHandlers({
        VerifySample: () => ({
          verdict: 'inconclusive',
          attempt: 1,
          retryAfterSeconds: 1,
          reason: 'partial',
        }),
        ReverifySample: () => ({ verdict: 'pass', attempt: 2, retryAfterSeconds: 0, reason: 'processed' }),
      }),
    );
    expect(result.status).toBe('SUCCEEDED');
    expect(result.visited.slice(6, 9)).toEqual(['VerifySample', 'ReverifySample', 'StartMoveTask']);
  });

  it('ends NothingToRedrive when the DLQ emptied while the approval waited (C04)', async () => {
    const result = await run(
      happyHandlers({ CheckDlqStillHasMessages: () => ({ ok: true, refusal: null, dlqDepth: 0 }) }),
    );
    expect(result.status).toBe('SUCCEEDED');
    expect(result.output?.outcome).toBe('nothing-to-redrive');
    expect(result.visited).not.toContain('Park');
  });

  it('ends RedriveRefused without approval or any move when preflight refuses (C06)', async () => {
    const result = await run(
      happyHandlers({
        Preflight: () => ({ ok: false, refusal: 'redrive refused: task H already active', dlqDepth: 5 }),
      }),
    );
    expect(result.error?.name).toBe('Redrive.Refused');
    expect(result.visited).toEqual(['ValidateInput', 'Preflight', 'Notify']);
  });

  it('routes an approval timeout to ApprovalExpired, nothing moved (C17)', async () => {
    const result = await run(
      happyHandlers({
        RequestApproval: () => {
          const error = new Error('approval timed out');
          error.name = 'States.Timeout';
          throw error;
        },
      }),
    );
    expect(result.error?.name).toBe('Redrive.ApprovalExpired');
    expect(result.visited).toEqual(['ValidateInput', 'Preflight', 'RequestApproval', 'Notify']);
  });

  it('records a non-retryable task failure through RecordFailure and ends Failed', async () => {
    const result = await run(
      happyHandlers({
        Park: () => {
          const error = new Error('queue not found: parking');
          error.name = 'Redrive.QueueNotFound';
          throw error;
        },
      }),
    );
    expect(result.error?.name).toBe('Redrive.Failed');
    expect(result.visited.slice(-3)).toEqual(['Park', 'ReconcileAfterFailure', 'RecordFailure']);
  });

  it('reports a failed Park with the counts of a final inventory, and its cause even when that inventory fails too', async () => {
    let recorded: Record<string, unknown> = {};
    const parkFails = () => {
      const error = new Error('4784 message(s) to park were not reached');
      error.name = 'Redrive.Refused';
      throw error;
    };
    const reconciled = await run(
      happyHandlers({
        Park: parkFails,
        RecordFailure: (input) => {
          recorded = (input as { run: Record<string, unknown> }).run;
          return { notified: true, outcome: 'failed' };
        },
      }),
    );
    expect(reconciled.error?.name).toBe('Redrive.Failed');
    expect((recorded.error as { Error: string }).Error).toBe('Redrive.Refused');
    expect(recorded.reconcile).toMatchObject({ parked: 1, inDlq: 11 });
    expect(recorded.ramp).toBeUndefined();

    const bothFail = await run(
      happyHandlers({
        Park: parkFails,
        ReconcileAfterFailure: () => {
          const error = new Error('table gone');
          error.name = 'Redrive.TableNotFound';
          throw error;
        },
        RecordFailure: (input) => {
          recorded = (input as { run: Record<string, unknown> }).run;
          return { notified: true, outcome: 'failed' };
        },
      }),
    );
    expect(bothFail.visited.slice(-3)).toEqual(['Park', 'ReconcileAfterFailure', 'RecordFailure']);
    expect((recorded.error as { Error: string }).Error).toBe('Redrive.Refused');
    expect((recorded.reconcileError as { Error: string }).Error).toBe('Redrive.TableNotFound');
    expect(recorded.reconcile).toBeUndefined();
  });

  it("stops the move task of a failed ramp step before it reconciles, and reports the step's cause even when the stop fails", async () => {
    let recorded: Record<string, unknown> = {};
    const checkFails = () => {
      const error = new Error('boom');
      error.name = 'Redrive.QueueNotFound';
      throw error;
    };
    const stopInputs: unknown[] = [];
    const stopped = await run(
      happyHandlers({
        CheckProgress: checkFails,
        StopRampAfterFailure: (input) => {
          stopInputs.push(input);
          return { ...ramp('halt'), reason: 'cancelled' };
        },
        RecordFailure: (input) => {
          recorded = (input as { run: Record<string, unknown> }).run;
          return { notified: true, outcome: 'failed' };
        },
      }),
    );
    expect(stopped.visited.slice(-4)).toEqual([
      'CheckProgress',
      'StopRampAfterFailure',
      'ReconcileAfterFailure',
      'RecordFailure',
    ]);
    expect(stopInputs[0]).toMatchObject({ action: 'stop', plan, executionName: 'local-run' });
    expect((recorded.error as { Error: string }).Error).toBe('Redrive.QueueNotFound');
    expect(recorded.rampStop).toMatchObject({ decision: 'halt' });
    expect(recorded.reconcile).toMatchObject({ inDlq: 11 });

    const stopFails = await run(
      happyHandlers({
        CheckProgress: checkFails,
        StopRampAfterFailure: () => {
          const error = new Error('throttled');
          error.name = 'Redrive.Refused';
          throw error;
        },
        RecordFailure: (input) => {
          recorded = (input as { run: Record<string, unknown> }).run;
          return { notified: true, outcome: 'failed' };
        },
      }),
    );
    // Not reconciled while the task may still run; RecordFailure cancels it and says so.
    expect(stopFails.visited.slice(-3)).toEqual(['CheckProgress', 'StopRampAfterFailure', 'RecordFailure']);
    expect((recorded.error as { Error: string }).Error).toBe('Redrive.QueueNotFound');
    expect((recorded.stopError as { Error: string }).Error).toBe('Redrive.Refused');
  });

  it('retries a Redrive.Transient failure of a task and then carries on', async () => {
    let attempts = 0;
    const result = await run(
      happyHandlers({
        Preflight: () => {
          attempts += 1;
          if (attempts === 1) {
            const error = new Error('throttled');
            error.name = 'Redrive.Transient';
            throw error;
          }
          return okPreflight;
        },
      }),
    );
    expect(attempts).toBe(2);
    expect(result.status).toBe('SUCCEEDED');
  });

  it('halts the ramp into Reconcile and RedriveHalted', async () => {
    const result = await run(happyHandlers({ CheckProgress: () => ramp('halt') }));
    expect(result.error?.name).toBe('Redrive.Halted');
    expect(result.visited.slice(-3)).toEqual(['CheckProgress', 'Reconcile', 'Notify']);
  });
});
