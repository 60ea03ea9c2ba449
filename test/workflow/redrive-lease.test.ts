import { describe, expect, it } from 'vitest';
import { createWorkflowLeaseStore } from '#incident/workflow-lease.js';
import { sleep } from '#platform/sleep.js';
import type { ApprovalRequest, Approver } from '../../local/approver.js';
import { LocalWorkflowRunner } from '../../local/runner.js';
import type { TaskTokenCallbacks } from '../../local/task-tokens.js';
import { seedAndInventory } from '../support/redrive-fixtures.js';
import { queueDepth } from '../support/seed-dlq.js';
import { scaled } from '../support/timeouts.js';
import { useWorkflowStack } from '../support/workflow-stack.js';
import { MOVING_TASKS } from './harness.js';

/** An approver that holds every request until the test answers it. */
function heldApprover() {
  const pending = new Map<string, { request: ApprovalRequest; callbacks: TaskTokenCallbacks }>();
  const approver: Approver = {
    name: 'held',
    async requestApproval(request, callbacks) {
      pending.set(request.executionName, { request, callbacks });
    },
  };
  return {
    approver,
    pending,
    async waitFor(executionName: string, timeoutMs = 20_000): Promise<ApprovalRequest> {
      const deadline = Date.now() + scaled(timeoutMs);
      while (Date.now() < deadline) {
        const entry = pending.get(executionName);
        if (entry) return entry.request;
        await sleep(50);
      }
      throw new Error(`no approval request from ${executionName}`);
    },
    async reject(executionName: string): Promise<void> {
      const entry = pending.get(executionName);
      if (!entry) throw new Error(`no pending approval for ${executionName}`);
      pending.delete(executionName);
      await entry.callbacks.sendTaskSuccess(entry.request.taskToken, {
        decision: 'rejected',
        approvedBy: 'carol',
        reason: 'test',
      });
    },
  };
}

const moved = (invocations: Record<string, number>) => MOVING_TASKS.filter((t) => invocations[t]);

describe('one workflow per DLQ (real ASL, real handlers, local stack)', () => {
  const local = useWorkflowStack();

  it('a second execution for a DLQ whose first execution waits for approval ends RedriveRefused with nothing moved; after the first ends a third start proceeds', async () => {
    const dlq = await seedAndInventory({
      sqs: local.sqs,
      dlqName: 'lease-wf-dlq',
      sourceNames: ['lease-wf-src'],
      messages: Array.from({ length: 8 }, (_, i) => ({ body: `{"n":${i}}` })),
      incidentId: 'inc-lease-wf-first',
    });
    const depth = async () => {
      const d = await queueDepth(local.sqs, dlq.dlqUrl);
      return d.visible + d.inFlight;
    };
    expect(await depth()).toBe(8);
    const approvals = heldApprover();
    const runner = new LocalWorkflowRunner({
      approver: approvals.approver,
      retryIntervalMs: 100,
      lambdaTimeoutMs: scaled(60_000),
    });
    const leases = createWorkflowLeaseStore();

    // First execution (the alarm's): Preflight takes the lease, then it waits for approval.
    const first = runner.start(
      { dlqArn: dlq.dlqArn, incidentId: 'inc-lease-wf-first' },
      'inc-lease-wf-first',
    );
    await approvals.waitFor('inc-lease-wf-first');
    expect(await leases.get(dlq.dlqArn)).toMatchObject({
      incidentId: 'inc-lease-wf-first',
      executionName: 'inc-lease-wf-first',
    });

    // Second execution (a console start, its incident derived from its execution name).
    const second = await runner.start({ dlqArn: dlq.dlqArn }, 'console-second').result;
    expect(second.status).toBe('FAILED');
    expect(second.path).toEqual([
      'ValidateInput',
      'InventoryPending?',
      'Preflight',
      'PreflightOk?',
      'OutcomeRefused',
      'Notify',
      'Finish?',
      'RedriveRefused',
    ]);
    const refusal = (second.taskResults.Preflight as { refusal: string }).refusal;
    expect(refusal).toBe(
      'redrive refused: another redrive of this DLQ is in progress (incident inc-lease-wf-first, execution inc-lease-wf-first)',
    );
    expect(second.taskResults.Notify).toMatchObject({ outcome: 'refused', leaseReleased: false });
    expect((second.taskResults.Notify as { text: string }).text).toContain('inc-lease-wf-first');
    expect(moved(second.invocations)).toEqual([]);
    expect(second.invocations.RequestApproval).toBeUndefined();
    // The refused run left the first run's lease and the DLQ alone.
    expect((await leases.get(dlq.dlqArn))?.executionName).toBe('inc-lease-wf-first');
    expect(await depth()).toBe(8);

    // The first execution ends (rejected): its Notify releases the lease.
    await approvals.reject('inc-lease-wf-first');
    const firstResult = await first.result;
    expect(firstResult.path.at(-1)).toBe('ApprovalRejected');
    expect(firstResult.taskResults.Notify).toMatchObject({ outcome: 'rejected', leaseReleased: true });
    expect(await leases.get(dlq.dlqArn)).toBeUndefined();

    // A third start now passes Preflight and takes the lease.
    const third = runner.start(
      { dlqArn: dlq.dlqArn, incidentId: 'inc-lease-wf-third' },
      'inc-lease-wf-third',
    );
    const request = await approvals.waitFor('inc-lease-wf-third');
    expect((request.payload as { preflight: { ok: boolean; dlqDepth: number } }).preflight).toMatchObject({
      ok: true,
      dlqDepth: 8,
    });
    expect(await leases.get(dlq.dlqArn)).toMatchObject({ incidentId: 'inc-lease-wf-third' });
    await approvals.reject('inc-lease-wf-third');
    const thirdResult = await third.result;
    expect(thirdResult.path.at(-1)).toBe('ApprovalRejected');
    expect(await leases.get(dlq.dlqArn)).toBeUndefined();
    expect(await depth()).toBe(8);
  });
});
