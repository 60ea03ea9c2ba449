import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditTrail } from '#incident/audit-trail.js';
import type { ExecutionPlan } from '#incident/execution-input.js';
import { createWorkflowLeaseStore, leaseSeconds } from '#incident/workflow-lease.js';
import { sqsClient } from '#platform/clients.js';
import { handler as notifyHandler } from '../../functions/notify/handler.js';
import type { NotifyResult } from '../../functions/notify/notify.js';
import { handler as preflightHandler } from '../../functions/preflight/handler.js';
import type { PreflightResult } from '../../functions/preflight/preflight.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import {
  type InventoriedDlq,
  lambdaContext,
  planFor,
  seedAndInventory,
} from '../support/redrive-fixtures.js';

const preflight = (event: unknown) =>
  preflightHandler(event as never, lambdaContext) as Promise<PreflightResult>;
const notify = (event: unknown) => notifyHandler(event as never, lambdaContext) as Promise<NotifyResult>;

/** Preflight as the `Preflight` state calls it. */
const preflightAs = (plan: ExecutionPlan, executionName: string) =>
  preflight({ action: 'preflight', plan, executionName });

/** Notify as the `Notify` state calls it (the whole state document as `run`). */
const notifyAs = (plan: ExecutionPlan, pre: PreflightResult, executionName: string, outcome = 'completed') =>
  notify({ outcome, run: { plan, preflight: pre }, executionName });

async function seed(name: string): Promise<InventoriedDlq> {
  return seedAndInventory({
    sqs: sqsClient(),
    dlqName: `${name}-dlq`,
    sourceNames: [`${name}-src`],
    messages: [{ body: '{"n":1}' }, { body: '{"n":2}' }, { body: '{"n":3}' }],
    incidentId: `inc-${name}-a`,
  });
}

describe('per-DLQ workflow lease (real Preflight and Notify handlers, local stack)', () => {
  let stack: LocalStack;
  const leases = createWorkflowLeaseStore();
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('refuses a second incident on the same DLQ naming the first, lets the first execution re-acquire, and hands over after the first Notify', async () => {
    const dlq = await seed('lease-two');
    const planA = planFor(dlq, { incidentId: 'inc-lease-a' });
    const planB = planFor(dlq, { incidentId: 'inc-lease-b' });

    const before = Math.floor(Date.now() / 1000);
    const first = await preflightAs(planA, 'exec-a');
    expect([first.ok, first.refusal]).toEqual([true, null]);
    const held = await leases.get(dlq.dlqArn);
    expect(held).toMatchObject({ incidentId: 'inc-lease-a', executionName: 'exec-a', dlqArn: dlq.dlqArn });
    expect(held?.expiresAt).toBeGreaterThanOrEqual(before + leaseSeconds(first.verifyWindowSeconds));
    expect(held?.expiresAt).toBeLessThanOrEqual(before + leaseSeconds(first.verifyWindowSeconds) + 5);

    const second = await preflightAs(planB, 'exec-b');
    expect(second.ok).toBe(false);
    expect(second.refusal).toBe(
      'redrive refused: another redrive of this DLQ is in progress (incident inc-lease-a, execution exec-a)',
    );
    expect(second.dlqDepth).toBe(3);

    // The same execution's Preflight again (a Lambda retry) and its recheck after approval pass.
    const retried = await preflightAs(planA, 'exec-a');
    expect(retried.ok).toBe(true);
    const recheck = await preflight({ action: 'recheck', plan: planA, executionName: 'exec-a' });
    expect(recheck.ok).toBe(true);
    // Same incident, another execution (a console start reusing the incident id) is refused too.
    const sameIncidentOtherExecution = await preflightAs(planA, 'exec-a2');
    expect(sameIncidentOtherExecution.refusal).toContain('execution exec-a)');

    // The refused run ends at Notify (outcome refused): it must leave the first run's lease alone.
    const refusedNotify = await notifyAs(planB, second, 'exec-b', 'refused');
    expect(refusedNotify.leaseReleased).toBe(false);
    expect(refusedNotify.text).toContain('another redrive of this DLQ is in progress (incident inc-lease-a');
    expect((await leases.get(dlq.dlqArn))?.executionName).toBe('exec-a');

    // The first run ends: Notify releases; a retried Notify (or RecordFailure after it) is a no-op.
    expect((await notifyAs(planA, first, 'exec-a')).leaseReleased).toBe(true);
    expect(await leases.get(dlq.dlqArn)).toBeUndefined();
    expect(
      (await notify({ outcome: 'failed', run: { plan: planA }, executionName: 'exec-a' })).leaseReleased,
    ).toBe(false);

    const third = await preflightAs(planB, 'exec-b2');
    expect(third.ok).toBe(true);
    expect(await leases.get(dlq.dlqArn)).toMatchObject({
      incidentId: 'inc-lease-b',
      executionName: 'exec-b2',
    });
  });

  it('takes over an expired lease (its run died without reaching Notify)', async () => {
    const dlq = await seed('lease-expired');
    const longAgo = Date.now() - 3 * 86_400_000;
    const stale = await leases.acquire(
      dlq.dlqArn,
      { incidentId: 'inc-dead', executionName: 'exec-dead' },
      longAgo,
      3600,
    );
    expect(stale.acquired).toBe(true);

    const result = await preflightAs(planFor(dlq, { incidentId: 'inc-alive' }), 'exec-alive');
    expect([result.ok, result.refusal]).toEqual([true, null]);
    expect(await leases.get(dlq.dlqArn)).toMatchObject({
      incidentId: 'inc-alive',
      executionName: 'exec-alive',
    });
    // The dead run's late RecordFailure does not release the new holder's lease.
    expect(await leases.release(dlq.dlqArn, { incidentId: 'inc-dead', executionName: 'exec-dead' })).toBe(
      false,
    );
    expect((await leases.get(dlq.dlqArn))?.executionName).toBe('exec-alive');
  });

  it('a release by a stranger (other incident, or same incident with another execution) deletes nothing', async () => {
    const dlq = await seed('lease-stranger');
    const plan = planFor(dlq, { incidentId: 'inc-owner' });
    expect((await preflightAs(plan, 'exec-owner')).ok).toBe(true);
    expect(await leases.release(dlq.dlqArn, { incidentId: 'inc-other', executionName: 'exec-owner' })).toBe(
      false,
    );
    expect(await leases.release(dlq.dlqArn, { incidentId: 'inc-owner', executionName: 'exec-other' })).toBe(
      false,
    );
    const strangerNotify = await notify({
      outcome: 'failed',
      run: { plan: planFor(dlq, { incidentId: 'inc-other' }) },
      executionName: 'exec-other',
    });
    expect(strangerNotify.leaseReleased).toBe(false);
    expect(await leases.get(dlq.dlqArn)).toMatchObject({
      incidentId: 'inc-owner',
      executionName: 'exec-owner',
    });
    // Releasing a DLQ that has no lease at all is a no-op too.
    expect(
      await leases.release(`${dlq.dlqArn}-none`, { incidentId: 'inc-owner', executionName: 'exec-owner' }),
    ).toBe(false);
  });

  it('dry-run takes no lease, and is refused like the real run when another run holds one', async () => {
    const dlq = await seed('lease-dry');
    const dry = await preflightAs(planFor(dlq, { incidentId: 'inc-dry', mode: 'dry-run' }), 'exec-dry');
    expect(dry.ok).toBe(true);
    expect(await leases.get(dlq.dlqArn)).toBeUndefined();

    expect((await preflightAs(planFor(dlq, { incidentId: 'inc-real' }), 'exec-real')).ok).toBe(true);
    const dryWhileHeld = await preflightAs(
      planFor(dlq, { incidentId: 'inc-dry2', mode: 'dry-run' }),
      'exec-dry2',
    );
    const realWhileHeld = await preflightAs(planFor(dlq, { incidentId: 'inc-real2' }), 'exec-real2');
    expect(dryWhileHeld.ok).toBe(false);
    expect(dryWhileHeld.refusal).toBe(
      'redrive refused: another redrive of this DLQ is in progress (incident inc-real, execution exec-real)',
    );
    expect([dryWhileHeld.refusal, dryWhileHeld.warnings]).toEqual([
      realWhileHeld.refusal,
      realWhileHeld.warnings,
    ]);
    expect((await leases.get(dlq.dlqArn))?.executionName).toBe('exec-real');
  });

  it('a pre-approved run records its approval in the audit trail as approved by policy, naming the policy, once', async () => {
    const dlq = await seed('lease-pre');
    const plan = planFor(dlq, { incidentId: 'inc-pre', preApproved: true, approvedBy: 'alice' });

    const pre = await preflightAs(plan, 'exec-pre');
    await preflightAs(plan, 'exec-pre'); // a Lambda retry
    await preflight({ action: 'recheck', plan, executionName: 'exec-pre' });

    expect(pre.ok).toBe(true);
    const approved = (await createAuditTrail().list('inc-pre')).filter((e) => e.kind === 'approved');
    expect(approved).toEqual([
      expect.objectContaining({ by: 'alice', via: 'console', executionName: 'exec-pre' }),
    ]);
    expect(approved[0]?.text).toContain('approved by policy, no approval requested');
    expect(approved[0]?.text).toContain('allowPreApproved: true');
    // A run that is not pre-approved asks a person: Preflight records no approval for it.
    const asked = await seed('lease-asked');
    expect(
      (
        await preflightAs(
          planFor(asked, { incidentId: 'inc-asked', preApproved: false, approvedBy: null }),
          'exec-asked',
        )
      ).ok,
    ).toBe(true);
    expect(await createAuditTrail().list('inc-asked')).toEqual([]);
  });
});
