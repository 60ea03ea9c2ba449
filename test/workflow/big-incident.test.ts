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
  beforeAll(async () => {
    stack = await startLocalStack();
    process.env.TRIAGE_MESSAGE_BUDGET = String(BUDGET);
    resetClients();
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env.TRIAGE_MESSAGE_BUDGET;
    else process.env.TRIAGE_MESSAGE_BUDGET = saved;
    resetClients();
    await stack?.stop();
  });

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
});
