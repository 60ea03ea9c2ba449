import { readdirSync, readFileSync } from 'node:fs';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ListQueuesCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ExecutionPlan } from '#incident/execution-input.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { dynamoClient, sqsClient } from '#platform/clients.js';
import type { InvalidInputError } from '#platform/errors.js';
import { handler } from '../../functions/validate-input/handler.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { LocalWorkflowRunner } from '../../local/runner.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';

const EVENTS = new URL('../../events/console/', import.meta.url);
const INVALID = new URL('invalid/', EVENTS);
const EXAMPLE_ACCOUNT = '111122223333';

let stack: LocalStack;
/** Every SQS and DynamoDB command the shared clients send, by command name. */
const sent: string[] = [];
/** What ValidateInput may send: reads only (the registration, queue URLs, an abandoned inventory session). */
const READS = ['GetQueueUrlCommand', 'GetItemCommand', 'QueryCommand'];

/** An event file with the example account replaced by the local stack's. */
function load(dir: URL, name: string): unknown {
  return JSON.parse(readFileSync(new URL(name, dir), 'utf8').replaceAll(EXAMPLE_ACCOUNT, stack.accountId));
}
function arn(name: string): string {
  return `arn:aws:sqs:${stack.region}:${stack.accountId}:${name}`;
}
function context(): Context {
  return lambdaContext({ functionName: 'ValidateInputFunction', accountId: stack.accountId });
}
async function invoke(event: unknown): Promise<unknown> {
  return handler(event, context());
}
async function rejection(event: unknown): Promise<InvalidInputError> {
  return (await invoke(event).then(
    () => {
      throw new Error('expected ValidateInput to fail');
    },
    (e: unknown) => e,
  )) as InvalidInputError;
}

/** Depth of every queue and every table item: what "no side effect" must leave unchanged. */
async function snapshot(): Promise<string> {
  const { QueueUrls = [] } = await sqsClient().send(new ListQueuesCommand({}));
  const queues: Record<string, Record<string, string> | undefined> = {};
  for (const url of QueueUrls.sort()) {
    const out = await sqsClient().send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    queues[url] = out.Attributes;
  }
  const table = await dynamoClient().send(
    new ScanCommand({ TableName: stack.tableName, ConsistentRead: true }),
  );
  return JSON.stringify({ queues, items: table.Items });
}

beforeAll(async () => {
  stack = await startLocalStack();
  const record = (commandName: unknown) => sent.push(String(commandName));
  sqsClient().middlewareStack.add(
    (next, ctx) => async (args) => {
      record(ctx.commandName);
      return next(args);
    },
    { step: 'initialize', name: 'recordCommands' },
  );
  dynamoClient().middlewareStack.add(
    (next, ctx) => async (args) => {
      record(ctx.commandName);
      return next(args);
    },
    { step: 'initialize', name: 'recordCommands' },
  );
  const fifo = { FifoQueue: 'true' };
  for (const [name, attributes] of [
    ['orders-dlq', {}],
    ['orders-queue', {}],
    ['orders-parking', {}],
    ['shared-dlq', {}],
    ['payments-dlq', {}],
    ['orders-dlq.fifo', fifo],
    ['orders-queue.fifo', fifo],
  ] as const) {
    const { QueueUrl } = await sqsClient().send(
      new CreateQueueCommand({ QueueName: name, Attributes: attributes }),
    );
    if (name === 'orders-dlq') {
      for (let i = 0; i < 3; i++) {
        await sqsClient().send(new SendMessageCommand({ QueueUrl, MessageBody: `{"orderId":"o-${i}"}` }));
      }
    }
  }
  // orders-dlq: registered, pre-approved starts allowed, its own parking queue and ramp.
  // payments-dlq: no registration (defaults: allowPreApproved false).
  await createQueueRegistry().putRegistration({
    dlqArn: arn('orders-dlq'),
    allowPreApproved: true,
    sampleSize: 8,
    rampRates: [10, 100, 300],
    dwellSeconds: 30,
    maxRedrives: 2,
    parkingQueueArn: arn('orders-parking'),
  });
});

afterAll(async () => {
  await stack?.stop();
});

beforeEach(() => {
  sent.length = 0;
});

describe('ValidateInput against the local stack', () => {
  const all = readdirSync(EVENTS).filter((f) => f.endsWith('.json') && !f.includes('fifo'));
  const moverFields = (input: Record<string, unknown>) =>
    (['selection', 'unpark', 'transform'] as const).filter(
      (f) => input[f] !== undefined && input[f] !== null && input[f] !== false,
    );
  const raw = (name: string) =>
    JSON.parse(readFileSync(new URL(name, EVENTS), 'utf8')) as Record<string, unknown>;
  const examples = all.filter((name) => moverFields(raw(name)).length === 0);
  const moverExamples = all.filter((name) => !examples.includes(name));

  it('has console examples of both kinds (plain and recording-mover)', () => {
    expect(examples.length).toBeGreaterThan(0);
    expect(moverExamples.length).toBeGreaterThan(0);
  });

  // The recording mover is wired into the workflow: its fields become the plan's, unchanged.
  it.each(moverExamples)(
    'turns the recording-mover console example %s into a plan that keeps its selection, unpark and transform',
    async (name) => {
      const input = load(EVENTS, name) as Record<string, unknown>;
      const plan = ExecutionPlan.parse(
        await invoke({ input, executionName: `example-${name.replace('.json', '')}` }),
      );
      expect(moverFields(plan as unknown as Record<string, unknown>).sort()).toEqual(
        moverFields(input).sort(),
      );
      for (const field of moverFields(input)) expect(plan[field]).toEqual(input[field]);
      expect(sent.filter((c) => !READS.includes(c))).toEqual([]);
    },
  );

  it.each(examples)('turns the console example %s into a plan with the real DLQ URL', async (name) => {
    const input = load(EVENTS, name) as { dlqArn: string };
    const plan = ExecutionPlan.parse(
      await invoke({ input, executionName: `example-${name.replace('.json', '')}` }),
    );
    expect(plan.dlqUrl).toBe(`${stack.sqsEndpoint}/${stack.accountId}/${input.dlqArn.split(':').at(-1)}`);
    expect(sent.filter((c) => !READS.includes(c))).toEqual([]);
  });

  it('merges the queue registration: sample size, ramp capped by maxRate, dwell, max redrives, parking queue', async () => {
    const plan = (await invoke({ input: { dlqArn: arn('orders-dlq'), maxRate: 150 } })) as ExecutionPlan;
    expect(plan).toMatchObject({
      sampleSize: 8,
      rampRates: [10, 100, 150],
      dwellSeconds: 30,
      maxRedrives: 2,
      parkingQueueUrl: `${stack.sqsEndpoint}/${stack.accountId}/orders-parking`,
      preApproved: false,
      requestedBy: 'console',
    });
  });

  it('accepts a pre-approved start when the registration allows it', async () => {
    const plan = (await invoke({ input: load(EVENTS, 'pre-approved.json') })) as ExecutionPlan;
    expect([plan.preApproved, plan.approvedBy, plan.rampRates]).toEqual([
      true,
      'sre-lead@example.com',
      [10, 100],
    ]);
  });

  it('refuses a pre-approved start for a queue whose registration does not allow it, before any SQS call', async () => {
    const before = await snapshot();
    sent.length = 0;
    const error = await rejection({ input: { dlqArn: arn('payments-dlq'), approvedBy: 'sre-lead' } });
    expect([error.name, ...error.details]).toEqual([
      'Redrive.InvalidInput',
      'approvedBy: pre-approved starts are not allowed for this queue',
    ]);
    expect(sent).toEqual(['GetItemCommand']);
    expect(await snapshot()).toBe(before);
  });

  it('fails with Redrive.QueueNotFound when the DLQ does not exist, changing nothing', async () => {
    const before = await snapshot();
    const missing = arn('no-such-dlq');
    const error = (await rejection({ input: { dlqArn: missing } })) as Error;
    expect([error.name, error.message]).toEqual(['Redrive.QueueNotFound', `queue not found: ${missing}`]);
    expect(await snapshot()).toBe(before);
  });

  it('fails with Redrive.QueueNotFound when the destination queue does not exist', async () => {
    const error = (await rejection({
      input: { dlqArn: arn('shared-dlq'), destinationArn: arn('gone-queue') },
    })) as Error;
    expect(error.name).toBe('Redrive.QueueNotFound');
    expect(error.message).toContain('gone-queue');
  });

  it('C08 resolves a FIFO DLQ with its FIFO destination', async () => {
    const plan = (await invoke({ input: load(EVENTS, 'fifo.json') })) as ExecutionPlan;
    expect([plan.dlqUrl, plan.destinationArn, plan.mode]).toEqual([
      `${stack.sqsEndpoint}/${stack.accountId}/orders-dlq.fifo`,
      arn('orders-queue.fifo'),
      'sample-only',
    ]);
  });
});

describe('C20 bad console input against the local stack', () => {
  const invalid = readdirSync(INVALID).filter((f) => f.endsWith('.json'));

  it.each(invalid)(
    'C20 %s fails with Redrive.InvalidInput and no SQS or DynamoDB call, nothing changed',
    async (name) => {
      const before = await snapshot();
      sent.length = 0;
      const error = await rejection({ input: load(INVALID, name), executionName: 'bad-input' });
      expect(error.name).toBe('Redrive.InvalidInput');
      expect(error.details.length).toBeGreaterThan(0);
      expect(error.message).toBe(`invalid execution input: ${error.details.join('; ')}`);
      expect(sent).toEqual([]);
      expect(await snapshot()).toBe(before);
    },
  );

  it('C20 the wrong-types input lists both of its problems in the message Step Functions shows as Cause', async () => {
    const error = await rejection({ input: load(INVALID, 'wrong-types.json') });
    expect(error.message).toBe(
      'invalid execution input: sampleSize: must be >= 1 (an integer 1..100), got -3; maxRate: must be an integer 1..500, got "fifty"',
    );
  });

  it('C20 the orders DLQ still holds its 3 messages after every rejected start', async () => {
    const out = await sqsClient().send(
      new GetQueueAttributesCommand({
        QueueUrl: `${stack.sqsEndpoint}/${stack.accountId}/orders-dlq`,
        AttributeNames: ['ApproximateNumberOfMessages'],
      }),
    );
    expect(out.Attributes?.ApproximateNumberOfMessages).toBe('3');
  });
});

describe('C20 in the real state machine (statemachines/redrive.asl.json, run locally)', () => {
  /** The real ASL with ValidateInput bound to its real handler; later Tasks record their payload. */
  function runner(seen: Record<string, unknown[]>) {
    const record = (state: string, result: unknown) => async (payload: unknown) => {
      seen[state] = [...(seen[state] ?? []), payload];
      return result;
    };
    const refusal = { ok: false, refusal: 'test stops here', dlqDepth: 3, sourceArns: [], fifo: false };
    return new LocalWorkflowRunner({
      region: stack.region,
      accountId: stack.accountId,
      retryIntervalMs: 1,
      bindings: {
        Preflight: record('Preflight', { ...refusal, verifyWindowSeconds: 0, warnings: [] }),
        Notify: record('Notify', { notified: true }),
        RecordFailure: record('RecordFailure', { notified: true }),
      },
    });
  }

  it('C20 a bad console input fails at ValidateInput with every problem in $.error, and no later task runs', async () => {
    const seen: Record<string, unknown[]> = {};
    const before = await snapshot();
    const result = await runner(seen).start(load(INVALID, 'wrong-types.json'), 'c20-wrong-types').result;
    expect(result.status).toBe('FAILED');
    expect(result.invocations).toEqual({ ValidateInput: 1, RecordFailure: 1 });
    const [failure] = (seen.RecordFailure ?? []) as {
      run: { error: { Error: string; Cause: string }; plan?: unknown };
    }[];
    if (!failure) throw new Error('RecordFailure did not run');
    const { run } = failure;
    expect(run.error.Error).toBe('Redrive.InvalidInput');
    expect((JSON.parse(run.error.Cause) as { errorMessage: string }).errorMessage).toBe(
      'invalid execution input: sampleSize: must be >= 1 (an integer 1..100), got -3; maxRate: must be an integer 1..500, got "fifty"',
    );
    expect(run.plan).toBeUndefined();
    expect(await snapshot()).toBe(before);
  });

  it('puts the plan at $.plan, where Preflight reads it', async () => {
    const seen: Record<string, unknown[]> = {};
    const result = await runner(seen).start(load(EVENTS, 'minimal.json'), 'console-minimal').result;
    // A console start has no inventory to finish: straight to Preflight.
    expect(result.path.slice(0, 3)).toEqual(['ValidateInput', 'InventoryPending?', 'Preflight']);
    const [preflight] = (seen.Preflight ?? []) as { plan: ExecutionPlan }[];
    if (!preflight) throw new Error('Preflight did not run');
    const { plan } = preflight;
    expect(ExecutionPlan.parse(plan)).toMatchObject({
      dlqUrl: `${stack.sqsEndpoint}/${stack.accountId}/orders-dlq`,
      sampleSize: 8,
      preApproved: false,
    });
  });
});
