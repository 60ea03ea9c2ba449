import { readFileSync } from 'node:fs';
import { StartMessageMoveTaskCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqsClient } from '#platform/clients.js';
import { createMoveTasks } from '#transfer/move-tasks.js';
import type { ExecutionEndedResult } from '../../functions/execution-ended/execution-ended.js';
import { handler as executionEnded } from '../../functions/execution-ended/handler.js';
import { handler as moveTask } from '../../functions/move-task/handler.js';
import type { RampResult } from '../../functions/move-task/move-task.js';
import { handler as notify } from '../../functions/notify/handler.js';
import type { NotifyResult } from '../../functions/notify/notify.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { lambdaContext, planFor, seedAndInventory } from '../support/redrive-fixtures.js';

// A move task outlives its execution only with an owner: the MOVETASK record names the run that
// started it, and whoever sees the run end without supervising it (RecordFailure, the
// execution-ended function) cancels exactly that task, never one someone else started.
const sample = JSON.parse(
  readFileSync(
    new URL('../../events/stepfunctions/execution-status-change-aborted.json', import.meta.url),
    'utf8',
  ),
) as { detail: Record<string, unknown> } & Record<string, unknown>;

async function startedRun(name: string, executionName: string) {
  const dlq = await seedAndInventory({
    sqs: sqsClient(),
    dlqName: `${name}-dlq`,
    sourceNames: [`${name}-src`],
    messages: Array.from({ length: 30 }, (_, i) => ({ body: `{"n":${i}}` })),
    incidentId: `inc-${name}`,
  });
  const plan = planFor(dlq, { rampRates: [1] });
  const ramp = (await moveTask(
    {
      action: 'start',
      plan,
      preflight: { sourceArns: [dlq.sources[0]?.arn as string], verifyWindowSeconds: 1 },
      executionName,
    },
    lambdaContext,
  )) as RampResult;
  expect([ramp.decision, ramp.status]).toEqual(['hold', 'RUNNING']);
  return { dlq, plan, handle: ramp.taskHandle as string };
}

describe('move-task ownership after the run ends (real handlers, local stack)', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('RecordFailure cancels the running move task its execution started, and says so', async () => {
    const { plan, handle } = await startedRun('own-failed', 'exec-failed');
    const out = (await notify(
      {
        outcome: 'failed',
        executionName: 'exec-failed',
        run: { plan, error: { Error: 'Lambda.Unknown', Cause: 'crashed' } },
      },
      lambdaContext,
    )) as NotifyResult;
    expect(out.orphanedTask).toMatchObject({ taskHandle: handle, cancelled: true });
    expect(out.text).toContain(`Its move task ${handle} was cancelled after moving`);
    const tasks = await createMoveTasks().list(plan.dlqArn);
    expect(tasks).toHaveLength(1);
    expect(['CANCELLING', 'CANCELLED']).toContain(tasks[0]?.status);
  });

  it('an ABORTED execution has its move task cancelled by execution-ended; another execution has none of its own', async () => {
    const { plan, handle } = await startedRun('own-aborted', 'exec-aborted');
    const event = (name: string) => ({
      ...sample,
      detail: {
        ...sample.detail,
        executionArn: `arn:aws:states:us-east-1:123456789012:execution:redrive:${name}`,
        name,
        input: JSON.stringify({ dlqArn: plan.dlqArn, incidentId: plan.incidentId }),
      },
    });
    const other = (await executionEnded(
      event('exec-someone-else') as never,
      lambdaContext,
    )) as ExecutionEndedResult;
    expect(other.orphanedTask).toBeNull();
    expect((await createMoveTasks().list(plan.dlqArn))[0]?.status).toBe('RUNNING');
    const ended = (await executionEnded(
      event('exec-aborted') as never,
      lambdaContext,
    )) as ExecutionEndedResult;
    expect(ended.orphanedTask).toMatchObject({ taskHandle: handle, cancelled: true });
    expect(ended.notified).toBe(true);
    expect(ended.text).toContain(`Its move task ${handle} was still running with no health gate watching it`);
  });

  it('C06 a console task is never cancelled by the run that found it: RecordFailure leaves it running', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'own-console-dlq',
      sourceNames: ['own-console-src'],
      messages: Array.from({ length: 20 }, (_, i) => ({ body: `{"n":${i}}` })),
      incidentId: 'inc-own-console',
    });
    const console = await sqsClient().send(
      new StartMessageMoveTaskCommand({ SourceArn: dlq.dlqArn, MaxNumberOfMessagesPerSecond: 1 }),
    );
    const plan = planFor(dlq);
    const out = (await notify(
      { outcome: 'failed', executionName: 'exec-console', run: { plan, error: { Error: 'X', Cause: 'y' } } },
      lambdaContext,
    )) as NotifyResult;
    expect(out.orphanedTask).toBeNull();
    const tasks = await createMoveTasks().list(dlq.dlqArn);
    expect(tasks.map((t) => [t.taskHandle, t.status])).toEqual([[console.TaskHandle, 'RUNNING']]);
    await createMoveTasks().cancel(console.TaskHandle as string);
  });
});
