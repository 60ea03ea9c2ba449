import { describe, expect, it } from 'vitest';
import type { QueueInfo } from '#platform/sqs-queues.js';
import { activeTaskRefusal, type MoveTask } from '#transfer/move-tasks.js';
import { type MoveTaskDeps, moveTask } from '../../functions/move-task/move-task.js';
import { planFor } from '../support/redrive-fixtures.js';

// StartMessageMoveTask is not idempotent: when the SDK's own retry (or a Lambda retry of the
// StartMoveTask state) repeats a Start that SQS already accepted, the repeat is refused with
// InvalidParameterValue because the task it started is running. Plain fakes: this is a rare path.
const DLQ = 'arn:aws:sqs:us-east-1:123456789012:orders-dlq';
const plan = planFor(
  { dlqArn: DLQ, dlqUrl: 'http://sqs/orders-dlq', incidentId: 'inc-1' },
  { rampRates: [5, 50], dwellSeconds: 60 },
);
const NOW = 1_767_349_000_000;

function running(over: Partial<MoveTask>): MoveTask {
  return {
    taskHandle: 'H-own',
    status: 'RUNNING',
    sourceArn: DLQ,
    destinationArn: null,
    rate: 5,
    moved: 3,
    toMove: 500,
    failureReason: null,
    startedAt: NOW - 4000,
    ...over,
  };
}

function refusedStart(active: MoveTask): { deps: MoveTaskDeps; starts: number[] } {
  const starts: number[] = [];
  const info = { visible: 500, inFlight: 0, url: 'u' } as QueueInfo;
  return {
    starts,
    deps: {
      moveTasks: {
        list: async () => [active],
        start: async ({ rate }) => {
          starts.push(rate);
          return { ok: false, code: 'TASK_ACTIVE', refusal: activeTaskRefusal(active) };
        },
        cancel: async () => ({ cancelled: true, moved: null }),
      },
      queues: {
        describe: async () => info,
        resolveByName: async () => info,
        receive: async () => [],
        changeVisibility: async () => 0,
      },
      envelopes: { findByIdempotencyKey: async () => [] },
      sleep: async () => {},
      now: () => NOW,
    },
  };
}

describe('StartMoveTask retried after SQS accepted the first Start', () => {
  it('C06 takes over the task the earlier attempt started (same DLQ, rate and destination, seconds ago) instead of halting on it', async () => {
    const { deps, starts } = refusedStart(running({}));
    const out = await moveTask({ action: 'start', plan, preflight: { sourceArns: [] } }, deps);
    expect(starts).toEqual([5]);
    expect([out.decision, out.taskHandle, out.rate, out.status]).toEqual(['hold', 'H-own', 5, 'RUNNING']);
  });

  it('C06 still refuses a task someone started from the console at another rate', async () => {
    const { deps } = refusedStart(running({ taskHandle: 'H-console', rate: 20 }));
    const out = await moveTask({ action: 'start', plan, preflight: { sourceArns: [] } }, deps);
    expect([out.decision, out.reason]).toEqual(['halt', 'redrive refused: task H-console already active']);
  });

  it('C06 still refuses a same-rate task that was already running before this step could have started it', async () => {
    const { deps } = refusedStart(running({ taskHandle: 'H-console', startedAt: NOW - 10 * 60_000 }));
    const out = await moveTask({ action: 'start', plan, preflight: { sourceArns: [] } }, deps);
    expect([out.decision, out.reason]).toEqual(['halt', 'redrive refused: task H-console already active']);
  });
});

describe('CheckProgress after our task ended and someone started another from the console', () => {
  it('C06 reads our finished task, not the console task that now runs, and never treats the console task as ours', async () => {
    const console = running({ taskHandle: 'H-console', rate: 20, startedAt: NOW - 1000 });
    const ours = running({
      taskHandle: null,
      status: 'COMPLETED',
      moved: 500,
      toMove: 500,
      startedAt: NOW - 600_000,
    });
    const { deps, starts } = refusedStart(console);
    const cancels: string[] = [];
    deps.moveTasks.list = async () => [console, ours];
    deps.moveTasks.cancel = async (handle) => {
      cancels.push(handle);
      return { cancelled: true, moved: null };
    };
    const out = await moveTask(
      {
        action: 'check',
        plan,
        preflight: { sourceArns: [] },
        ramp: {
          decision: 'hold',
          rateIndex: 0,
          rate: 5,
          taskHandle: 'H-own',
          status: 'RUNNING',
          moved: 0,
          toMove: 0,
          failureReason: null,
          reason: '',
          dwellSeconds: 60,
        },
      },
      deps,
    );
    expect([out.decision, out.status, out.moved]).toEqual(['done', 'COMPLETED', 500]);
    expect([starts, cancels]).toEqual([[], []]);
  });
});
