import { DeleteQueueCommand, StartMessageMoveTaskCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqsClient } from '#platform/clients.js';
import { sleep } from '#platform/sleep.js';
import { createMoveTasks } from '#transfer/move-tasks.js';
import { handler } from '../../functions/move-task/handler.js';
import type { RampResult } from '../../functions/move-task/move-task.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { createQueue, drain, lambdaContext, planFor, seedAndInventory } from '../support/redrive-fixtures.js';

const run = (event: unknown) => handler(event as never, lambdaContext) as Promise<RampResult>;

describe('MoveTask against the local stack', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('C07 starts without DestinationArn, so each message of a shared DLQ returns to its own source, and reports done', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'mt-shared-dlq',
      sourceNames: ['mt-orders', 'mt-payments'],
      messages: [
        { body: 'o-1', source: 0 },
        { body: 'o-2', source: 0 },
        { body: 'p-9', source: 1 },
      ],
      incidentId: 'inc-mt-shared',
    });
    const plan = planFor(dlq, { rampRates: [100] });
    const preflight = { sourceArns: dlq.sources.map((s) => s.arn), verifyWindowSeconds: 1 };
    const started = await run({ action: 'start', plan, preflight });
    expect([started.decision, started.rate, started.status]).toEqual(['hold', 100, 'RUNNING']);
    expect(started.taskHandle).toBeTruthy();

    let ramp = started;
    // The ramp holds one return window (1 s here) after the last message left before it is done.
    for (let i = 0; i < 20 && ramp.decision === 'hold'; i++) {
      await sleep(700);
      ramp = await run({ action: 'check', plan, preflight, ramp });
    }
    expect(ramp.decision).toBe('done');
    expect(ramp.movedBefore + ramp.moved).toBe(3);
    expect((await drain(sqsClient(), dlq.sources[0]?.url as string)).map((m) => m.Body).sort()).toEqual([
      'o-1',
      'o-2',
    ]);
    expect((await drain(sqsClient(), dlq.sources[1]?.url as string)).map((m) => m.Body)).toEqual(['p-9']);
  });

  it('C06 refuses a move task started by hand before StartMoveTask, names its handle and starts none of its own', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'mt-active-dlq',
      sourceNames: ['mt-active-src'],
      messages: Array.from({ length: 20 }, (_, i) => ({ body: `m-${i}` })),
      incidentId: 'inc-mt-active',
    });
    const console = await sqsClient().send(
      new StartMessageMoveTaskCommand({ SourceArn: dlq.dlqArn, MaxNumberOfMessagesPerSecond: 1 }),
    );
    const ramp = await run({
      action: 'start',
      plan: planFor(dlq),
      preflight: { sourceArns: [dlq.sources[0]?.arn as string], verifyWindowSeconds: 1 },
    });
    expect(ramp.decision).toBe('refuse');
    expect(ramp.why).toMatchObject({ code: 'foreign-task', taskHandle: console.TaskHandle });
    const real = createMoveTasks();
    expect((await real.list(dlq.dlqArn)).map((t) => t.taskHandle)).toEqual([console.TaskHandle]);
    await real.cancel(console.TaskHandle as string);
  });

  it('steps up by cancelling the running task and starting a new one at the next rate', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'mt-step-dlq',
      sourceNames: ['mt-step-src'],
      messages: Array.from({ length: 40 }, (_, i) => ({ body: `s-${i}` })),
      incidentId: 'inc-mt-step',
    });
    const plan = planFor(dlq, { rampRates: [1, 5], dwellSeconds: 60 });
    const preflight = { sourceArns: [dlq.sources[0]?.arn as string], verifyWindowSeconds: 1 };
    const started = await run({ action: 'start', plan, preflight });
    await sleep(1200);
    const checked = await run({ action: 'check', plan, preflight, ramp: started });
    expect(checked.decision).toBe('step-up');
    const stepped = await run({ action: 'step-up', plan, preflight, ramp: checked });
    expect([stepped.decision, stepped.rateIndex, stepped.rate, stepped.status]).toEqual([
      'hold',
      1,
      5,
      'RUNNING',
    ]);
    expect(stepped.taskHandle).not.toBe(started.taskHandle);
    const tasks = await createMoveTasks().list(dlq.dlqArn);
    expect(tasks.map((t) => t.status)).toEqual(['RUNNING', 'CANCELLED']);
    expect(tasks[0]?.rate).toBe(5);
    await createMoveTasks().cancel(stepped.taskHandle as string);
  });

  it('C06 halts on a FAILED task and surfaces FailureReason and the number moved; the rest stays in the DLQ', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'mt-failed-dlq',
      sourceNames: ['mt-failed-src'],
      messages: Array.from({ length: 10 }, (_, i) => ({ body: `f-${i}` })),
      incidentId: 'inc-mt-failed',
    });
    const replay = await createQueue(sqsClient(), 'mt-failed-replay');
    const plan = planFor(dlq, {
      rampRates: [2],
      destinationArn: 'arn:aws:sqs:us-east-1:123456789012:mt-failed-replay',
      allowCustomDestinationForSharedDlq: true,
    });
    const preflight = { sourceArns: [plan.destinationArn as string] };
    const started = await run({ action: 'start', plan, preflight });
    await sleep(1300);
    await sqsClient().send(new DeleteQueueCommand({ QueueUrl: replay }));
    await sleep(1300);
    const checked = await run({ action: 'check', plan, preflight: { sourceArns: [] }, ramp: started });
    expect(checked.decision).toBe('halt');
    expect(checked.status).toBe('FAILED');
    expect(checked.failureReason).toBe('AWS.SimpleQueueService.NonExistentQueue');
    expect(checked.movedBefore).toBeGreaterThan(0);
    expect(checked.movedBefore).toBeLessThan(10);
    expect(checked.why).toMatchObject({ code: 'task-failed', moved: checked.movedBefore, toMove: 10 });
    expect((await drain(sqsClient(), dlq.dlqUrl)).length).toBeGreaterThan(0);
  });

  it('reports done without starting a task when the DLQ is already empty', async () => {
    const url = await createQueue(sqsClient(), 'mt-empty-dlq');
    const plan = planFor({
      dlqArn: 'arn:aws:sqs:us-east-1:123456789012:mt-empty-dlq',
      dlqUrl: url,
      incidentId: 'i',
    });
    const ramp = await run({ action: 'start', plan, preflight: { sourceArns: [] } });
    expect([ramp.decision, ramp.taskHandle]).toEqual(['done', null]);
  });
});
