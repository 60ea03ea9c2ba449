import type { Message } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import type { StoredEnvelope } from '#inventory/envelope-store.js';
import type { QueueInfo } from '#platform/sqs-queues.js';
import type { MoveTask } from '#transfer/move-tasks.js';
import { type MoveTaskDeps, moveTask, type RampState } from '../../functions/move-task/move-task.js';
import { planFor } from '../support/redrive-fixtures.js';

const DLQ = 'arn:aws:sqs:us-east-1:123456789012:orders-dlq';
const SRC = 'arn:aws:sqs:us-east-1:123456789012:orders-queue';
const plan = planFor(
  { dlqArn: DLQ, dlqUrl: 'http://sqs/orders-dlq', incidentId: 'inc-1' },
  { rampRates: [5, 50, 200], dwellSeconds: 60 },
);
const preflight = { sourceArns: [SRC] };

function task(over: Partial<MoveTask>): MoveTask {
  return {
    taskHandle: 'H1',
    status: 'RUNNING',
    sourceArn: DLQ,
    destinationArn: null,
    rate: 5,
    moved: 100,
    toMove: 1000,
    failureReason: null,
    startedAt: 1,
    ...over,
  };
}

function ramp(over: Partial<RampState> = {}): RampState {
  return {
    decision: 'hold',
    rateIndex: 0,
    rate: 5,
    taskHandle: 'H1',
    status: 'RUNNING',
    moved: 0,
    toMove: 0,
    failureReason: null,
    reason: '',
    dwellSeconds: 60,
    ...over,
  };
}

/** Plain fakes: the DLQ depth, the source backlog, the peeked DLQ messages and the envelopes by key. */
function fakes(o: {
  tasks: MoveTask[][];
  dlqDepth?: number;
  backlog?: number;
  peek?: Message[];
  envelopesByKey?: Record<string, Array<Pick<StoredEnvelope, 'messageId'>>>;
}) {
  const log: string[] = [];
  let listCall = 0;
  const info = (visible: number) => ({ visible, inFlight: 0, url: 'u' }) as QueueInfo;
  const deps: MoveTaskDeps = {
    moveTasks: {
      list: async () => o.tasks[Math.min(listCall++, o.tasks.length - 1)] ?? [],
      start: async ({ rate }) => {
        log.push(`start ${rate}`);
        return { ok: true, taskHandle: `H-${rate}` };
      },
      cancel: async (handle) => {
        log.push(`cancel ${handle}`);
        return { cancelled: true, moved: null };
      },
    },
    queues: {
      describe: async () => info(o.dlqDepth ?? 900),
      resolveByName: async () => info(o.backlog ?? 0),
      receive: async () => {
        const batch = o.peek ?? [];
        o.peek = [];
        return batch;
      },
      changeVisibility: async () => 0,
    },
    envelopes: { findByIdempotencyKey: async (key) => (o.envelopesByKey?.[key] ?? []) as StoredEnvelope[] },
    sleep: async () => {},
  };
  return { deps, log };
}

describe('ramp health gate (CheckProgress)', () => {
  it('steps up when the task is RUNNING, the DLQ holds only what is left to move and the source keeps up', async () => {
    const { deps } = fakes({ tasks: [[task({})]], dlqDepth: 900, backlog: 10 });
    const out = await moveTask({ action: 'check', plan, preflight, ramp: ramp() }, deps);
    expect([out.decision, out.moved, out.reinflow]).toEqual(['step-up', 100, 0]);
  });

  it('halts and cancels the task when messages redriven earlier come back to the DLQ (re-inflow by key)', async () => {
    const returned: Message = {
      MessageId: 'new-id',
      ReceiptHandle: 'r',
      Body: 'x',
      MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: 'k1' } },
    };
    const { deps, log } = fakes({
      tasks: [[task({})]],
      dlqDepth: 950,
      peek: [returned],
      envelopesByKey: { k1: [{ messageId: 'old-id' }] },
    });
    const out = await moveTask({ action: 'check', plan, preflight, ramp: ramp() }, deps);
    expect(out.decision).toBe('halt');
    expect(out.reinflow).toBe(1);
    expect(out.reason).toContain('re-inflow: the DLQ holds 50 more message(s)');
    expect(log).toEqual(['cancel H1']);
  });

  it('holds instead of stepping up while the source backlog grows', async () => {
    const { deps } = fakes({ tasks: [[task({})]], backlog: 5 * 60 * 2 + 1 });
    const out = await moveTask({ action: 'check', plan, preflight, ramp: ramp() }, deps);
    expect(out.decision).toBe('hold');
    expect(out.reason).toContain('source backlog 601 exceeds 600');
  });

  it('holds at the top rate with a longer dwell so a long backlog costs few state transitions', async () => {
    const { deps } = fakes({ tasks: [[task({ rate: 200, moved: 0, toMove: 200_000 })]], dlqDepth: 200_000 });
    const out = await moveTask(
      { action: 'check', plan, preflight, ramp: ramp({ rateIndex: 2, rate: 200 }) },
      deps,
    );
    expect([out.decision, out.dwellSeconds]).toEqual(['hold', 250]);
  });

  it('C06 halts on FAILED with FailureReason and the number moved', async () => {
    const failed = task({
      status: 'FAILED',
      taskHandle: null,
      moved: 3,
      toMove: 10,
      failureReason: 'AWS.SimpleQueueService.NonExistentQueue',
    });
    const { deps } = fakes({ tasks: [[failed]] });
    const out = await moveTask({ action: 'check', plan, preflight, ramp: ramp() }, deps);
    expect([out.decision, out.failureReason, out.moved]).toEqual([
      'halt',
      'AWS.SimpleQueueService.NonExistentQueue',
      3,
    ]);
    expect(out.reason).toContain('after moving 3 of 10 message(s); the rest stays in the DLQ');
  });

  it('C06 handles every non-terminal status: CANCELLING holds briefly, an unknown status holds', async () => {
    const cancelling = await moveTask(
      { action: 'check', plan, preflight, ramp: ramp() },
      fakes({ tasks: [[task({ status: 'CANCELLING', taskHandle: null })]] }).deps,
    );
    expect([cancelling.decision, cancelling.dwellSeconds]).toEqual(['hold', 10]);
    const odd = await moveTask(
      { action: 'check', plan, preflight, ramp: ramp() },
      fakes({ tasks: [[task({ status: 'PAUSED', taskHandle: null })]] }).deps,
    );
    expect(odd.decision).toBe('hold');
  });

  it('halts when someone cancelled the task outside the workflow', async () => {
    const { deps } = fakes({ tasks: [[task({ status: 'CANCELLED', taskHandle: null })]] });
    const out = await moveTask({ action: 'check', plan, preflight, ramp: ramp() }, deps);
    expect(out.decision).toBe('halt');
    expect(out.reason).toContain('cancelled outside the workflow');
  });

  it('finishes a pending step-up once the cancelled task has stopped', async () => {
    const { deps, log } = fakes({ tasks: [[task({ status: 'CANCELLED', taskHandle: null, moved: 40 })]] });
    const out = await moveTask(
      {
        action: 'check',
        plan,
        preflight,
        ramp: ramp({ taskHandle: null, pendingRateIndex: 1, status: 'CANCELLING' }),
      },
      deps,
    );
    expect(log).toEqual(['start 50']);
    expect([out.decision, out.rateIndex, out.rate, out.taskHandle, out.movedBefore]).toEqual([
      'hold',
      1,
      50,
      'H-50',
      40,
    ]);
  });
});

describe('step-up', () => {
  it('cancels the running task, waits until it is no longer active, then starts at the next rate', async () => {
    const { deps, log } = fakes({
      tasks: [
        [task({ status: 'CANCELLING', taskHandle: null })],
        [task({ status: 'CANCELLED', taskHandle: null, moved: 120 })],
      ],
    });
    const out = await moveTask({ action: 'step-up', plan, preflight, ramp: ramp() }, deps);
    expect(log).toEqual(['cancel H1', 'start 50']);
    expect([out.decision, out.rateIndex, out.rate, out.movedBefore]).toEqual(['hold', 1, 50, 120]);
  });

  it('ends the ramp instead of starting an idle task when the previous rate emptied the DLQ', async () => {
    const { deps, log } = fakes({
      tasks: [[task({ status: 'CANCELLED', taskHandle: null, moved: 40 })]],
      dlqDepth: 0,
    });
    const out = await moveTask({ action: 'step-up', plan, preflight, ramp: ramp() }, deps);
    expect(log).toEqual(['cancel H1']);
    expect(out.decision).toBe('done');
  });

  it('leaves the restart pending when the cancelled task is still CANCELLING after the wait', async () => {
    const { deps, log } = fakes({ tasks: [[task({ status: 'CANCELLING', taskHandle: null })]] });
    const out = await moveTask(
      { action: 'step-up', plan, preflight, ramp: ramp() },
      { ...deps, cancelWaitMs: 0 },
    );
    expect(log).toEqual(['cancel H1']);
    expect([out.decision, out.pendingRateIndex, out.status]).toEqual(['hold', 1, 'CANCELLING']);
  });
});
