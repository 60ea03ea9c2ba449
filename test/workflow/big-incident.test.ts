import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInventorySessionStore } from '#inventory/inventory-session.js';
import { resetClients, sqsClient } from '#platform/clients.js';
import { type Approver, autoApprover } from '../../local/approver.js';
import { queueDepth } from '../../local/demo/queues.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { runNamedScenario } from '../support/scenarios.js';

// A DLQ deeper than one invocation's budget, on the path `npm start -- --dlq-depth N` takes: the
// real triage handler, the real ASL and handlers. The 100,000-message run is `npm run test:big`.
const DEPTH = 1200;
const BUDGET = 250;
// The lowest limit an input may ask for: the inventory loop may use a fifth of it per execution.
const HISTORY_LIMIT = 200;

describe('a DLQ deeper than one invocation can inventory (inventory on the engine)', {
  timeout: 600_000,
}, () => {
  let stack: LocalStack;
  const saved = process.env.TRIAGE_MESSAGE_BUDGET;
  const savedHold = process.env.TRIAGE_PAGE_BUDGET;
  beforeAll(async () => {
    stack = await startLocalStack();
    process.env.TRIAGE_MESSAGE_BUDGET = String(BUDGET);
    resetClients();
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env.TRIAGE_MESSAGE_BUDGET;
    else process.env.TRIAGE_MESSAGE_BUDGET = saved;
    restoreHoldLimit();
    await stack?.stop();
  });

  const restoreHoldLimit = () => {
    if (savedHold === undefined) delete process.env.TRIAGE_PAGE_BUDGET;
    else process.env.TRIAGE_PAGE_BUDGET = savedHold;
    resetClients();
  };

  it('N04 inventories every message across invocations and executions, asks for approval once when it is complete, and redrives it all with every state payload small', async () => {
    const approvals: Array<{ status: string | undefined; inventoried: number | undefined; held: number }> =
      [];
    const sessions = createInventorySessionStore();
    let dlqArn = '';
    let dlqUrl = '';
    const approver: Approver = {
      name: 'counting',
      async requestApproval(request, callbacks) {
        const payload = request.payload as { plan: { dlqArn: string; dlqUrl: string; incidentId: string } };
        dlqArn = payload.plan.dlqArn;
        dlqUrl = payload.plan.dlqUrl;
        const session = await sessions.get(dlqArn, payload.plan.incidentId);
        const depth = await queueDepth(sqsClient(), dlqUrl);
        approvals.push({ status: session?.status, inventoried: session?.inventoried, held: depth.inFlight });
        return autoApprover().requestApproval(request, callbacks);
      },
    };

    const report = await runNamedScenario('healthy', {
      dlqDepth: DEPTH,
      approver,
      input: { historyEventLimit: HISTORY_LIMIT },
      runner: { maxHistoryEvents: HISTORY_LIMIT },
    });

    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({
      outcome: 'Done',
      deadLettered: DEPTH,
      inventoried: DEPTH,
      missing: 0,
      countsAddUp: true,
    });
    // Approval once, for the whole incident, after the inventory released what it held.
    expect(approvals).toEqual([{ status: 'COMPLETE', inventoried: DEPTH, held: 0 }]);
    // Triage's step, then ContinueInventory's: one invocation per budget's worth of messages.
    expect(report.inventoryInvocations).toBeGreaterThanOrEqual(Math.ceil(DEPTH / BUDGET));
    // The loop continued in new executions before the (lowered) history limit, which the local
    // runner enforces like Step Functions: none of them reached it.
    expect(report.executions).toBeGreaterThan(1);
    expect(report.historyEvents).toBeLessThan(HISTORY_LIMIT);
    expect(report.largestPayloadBytes).toBeLessThan(256 * 1024);
    expect(report.redriven + report.parked).toBe(DEPTH);
    expect(await queueDepth(sqsClient(), dlqUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it('a DLQ deeper than the inventory can hold is a sample: the part triage did not see leaves only through the recording mover, each message recorded before it moves, and nothing is lost', async () => {
    const depth = 420;
    const holdLimit = 150;
    process.env.TRIAGE_PAGE_BUDGET = String(holdLimit);
    resetClients();
    const preflights: Array<{ path?: string; warnings?: string[] }> = [];
    const approvals: Array<{ sampled: boolean | undefined; inventoried: number | undefined }> = [];
    const sessions = createInventorySessionStore();
    let dlqUrl = '';
    const approver: Approver = {
      name: 'sample-reading',
      async requestApproval(request, callbacks) {
        const payload = request.payload as { plan: { dlqArn: string; dlqUrl: string; incidentId: string } };
        dlqUrl = payload.plan.dlqUrl;
        const session = await sessions.get(payload.plan.dlqArn, payload.plan.incidentId);
        approvals.push({ sampled: session?.sampled, inventoried: session?.inventoried });
        return autoApprover().requestApproval(request, callbacks);
      },
    };
    try {
      const report = await runNamedScenario('healthy', {
        dlqDepth: depth,
        approver,
        onTaskResult: (state, result) => {
          if (state === 'Preflight') preflights.push(result as { path?: string; warnings?: string[] });
        },
      });

      // The approval saw a sample of holdLimit messages, not the whole DLQ.
      expect(approvals).toEqual([{ sampled: true, inventoried: holdLimit }]);
      // Preflight sent the run to the recording mover and said why; no move task ever ran.
      expect(preflights.map((p) => p.path)).toEqual(['mover']);
      expect(preflights[0]?.warnings?.join('\n')).toContain(`a sample (${holdLimit} of ${depth} seen`);
      expect(report.taskInvocations.StartMoveTask ?? 0).toBe(0);
      expect(report.taskInvocations.MoverStep).toBeGreaterThan(0);
      expect(report).toMatchObject({
        outcome: 'Done',
        deadLettered: depth,
        inventoried: holdLimit,
        // Every message the inventory did not see got its envelope from the mover before it moved.
        lateArrivals: depth - holdLimit,
        returned: 0,
        missing: 0,
        countsAddUp: true,
        exposed: 0,
      });
      // Poison the mover first saw is recorded and stays in the DLQ (the next run parks it): what
      // is left there is exactly the envelopes still IN_DLQ, none of them a message to redrive.
      const poison = Math.floor(depth / 20);
      expect(report.remaining).toBeLessThanOrEqual(poison);
      expect(report.parked + report.remaining).toBe(poison);
      expect(report.redriven).toBe(depth - poison);
      expect(report.consumer.processedTwice).toBe(0);
      const left = await queueDepth(sqsClient(), dlqUrl);
      expect(left.visible + left.inFlight + left.delayed).toBe(report.remaining);
    } finally {
      restoreHoldLimit();
    }
  });
});
