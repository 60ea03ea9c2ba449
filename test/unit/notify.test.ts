import { describe, expect, it } from 'vitest';
import type { RunRecorder } from '#incident/notifier.js';
import { RecordNotFoundError } from '#platform/errors.js';
import { causeMessage, notify, outcomeText } from '../../functions/notify/notify.js';
import { createMemoryNotifier } from '../support/memory-notifier.js';

const plan = { incidentId: 'inc-1', dlqArn: 'arn:aws:sqs:us-east-1:123456789012:orders-dlq' };

function recorder(missing = false): RunRecorder & { patches: Array<[string, unknown]> } {
  const patches: Array<[string, unknown]> = [];
  return {
    patches,
    async updateIncident(id, patch) {
      if (missing) throw new RecordNotFoundError(`incident ${id}`);
      patches.push([id, patch]);
    },
  };
}

describe('Notify', () => {
  it.each([
    ['completed', 'CLOSED'],
    ['nothing-to-redrive', 'CLOSED'],
    ['rejected', 'STOPPED'],
    ['approval-expired', 'STOPPED'],
    ['sample-failed', 'STOPPED'],
    ['halted', 'STOPPED'],
    ['cancelled', 'STOPPED'],
    ['failed', 'FAILED'],
  ])(
    'the end of a run with outcome %s sets the incident status %s (it no longer reads WORKFLOW_STARTED), naming the execution',
    async (outcome, status) => {
      const incidents = recorder();
      await notify(
        { outcome, executionName: 'exec-7', run: { plan } },
        { notifier: createMemoryNotifier(), incidents },
      );
      expect(incidents.patches[0]).toEqual([
        'inc-1',
        expect.objectContaining({ status, outcome, runEndedBy: 'exec-7' }),
      ]);
    },
  );

  it('a dry run leaves the incident as it was (status, outcome, counts): its end, whatever it is, goes to lastDryRun only', async () => {
    const incidents = recorder();
    await notify({ outcome: 'dry-run', run: { plan } }, { notifier: createMemoryNotifier(), incidents });
    const dryPlan = { ...plan, mode: 'dry-run' as const };
    await notify(
      {
        outcome: 'nothing-to-redrive',
        run: { plan: dryPlan, reconcile: { redriven: 0 } },
        executionName: 'dry-2',
      },
      { notifier: createMemoryNotifier(), incidents },
    );
    expect(incidents.patches.map(([, patch]) => patch)).toEqual([
      { lastDryRun: expect.objectContaining({ outcome: 'dry-run' }) },
      { lastDryRun: expect.objectContaining({ outcome: 'nothing-to-redrive', executionName: 'dry-2' }) },
    ]);
  });

  it('C17 says "approval expired, nothing moved" when the approval timed out', () => {
    expect(outcomeText('approval-expired', { plan })).toBe(
      'Approval for arn:aws:sqs:us-east-1:123456789012:orders-dlq expired: approval expired, nothing moved.',
    );
  });

  it('C06 surfaces the move task FailureReason and the number moved when the ramp halted', async () => {
    const notifier = createMemoryNotifier();
    const incidents = recorder();
    const ramp = {
      status: 'FAILED',
      failureReason: 'AWS.SimpleQueueService.NonExistentQueue',
      moved: 3,
      rate: 5,
      reason: 'move task FAILED (AWS.SimpleQueueService.NonExistentQueue) after moving 3 of 10 message(s)',
    };
    const out = await notify({ outcome: 'halted', run: { plan, ramp } }, { notifier, incidents });
    expect(out.text).toContain(
      'halted: move task FAILED (AWS.SimpleQueueService.NonExistentQueue) after moving 3 of 10',
    );
    expect(notifier.sent[0]?.fields).toMatchObject({
      failureReason: 'AWS.SimpleQueueService.NonExistentQueue',
      movedByTask: 3,
      moveTaskStatus: 'FAILED',
    });
    expect(incidents.patches[0]).toEqual(['inc-1', expect.objectContaining({ outcome: 'halted', ramp })]);
  });

  it('records the exposure bound and its basis on the incident item for a run that ramped, and names it in the notice', async () => {
    const notifier = createMemoryNotifier();
    const incidents = recorder();
    const basis = {
      returnWindowSeconds: 5,
      cleanAt: 10_000,
      from: 5000,
      to: 20_000,
      terms: [{ rate: 25, seconds: 10, messages: 250 }],
    };
    const ramp = { rate: 25, moved: 150, reason: 're-inflow', exposurePeak: { bound: 250, basis } };
    await notify({ outcome: 'halted', run: { plan, ramp } }, { notifier, incidents });
    expect(incidents.patches[0]?.[1]).toMatchObject({ exposureBound: 250, exposureBasis: basis });
    expect(String(notifier.sent[0]?.fields?.exposureBound)).toMatch(
      /^250 message\(s\) at most: 25 msg\/s x 10 s/,
    );
    await notify({ outcome: 'rejected', run: { plan } }, { notifier, incidents });
    expect(incidents.patches[1]?.[1]).not.toHaveProperty('exposureBound');
  });

  it("counts a task run's moves from Reconcile's evidence (earlier tasks included) and a recording-mover run's as movedByMover, never as the task's", async () => {
    const notifier = createMemoryNotifier();
    const taskRun = {
      plan,
      ramp: { status: 'COMPLETED', moved: 0, movedBefore: 15, rate: 50 },
      reconcile: { redriven: 20, movedByTask: 15 },
    };
    await notify({ outcome: 'completed', run: taskRun }, { notifier, incidents: recorder() });
    const moverRun = {
      plan,
      ramp: { steps: 4, moved: 48, rate: 50 },
      reconcile: { redriven: 48, movedByTask: 0 },
    };
    await notify({ outcome: 'completed', run: moverRun }, { notifier, incidents: recorder() });
    const noReconcile = { plan, ramp: { status: 'FAILED', moved: 2, movedBefore: 5, rate: 5 } };
    await notify({ outcome: 'halted', run: noReconcile }, { notifier, incidents: recorder() });

    expect(notifier.sent.map((m) => [m.fields?.movedByTask, m.fields?.movedByMover])).toEqual([
      [15, undefined],
      [0, 48],
      [7, undefined],
    ]);
  });

  it("names the depth of the queue the run read: an un-park run's is parkingDepth, a redrive's dlqDepth", async () => {
    const notifier = createMemoryNotifier();
    const preflight = { dlqDepth: 10 };
    await notify(
      { outcome: 'completed', run: { plan: { ...plan, unpark: true }, preflight } },
      { notifier, incidents: recorder() },
    );
    await notify({ outcome: 'completed', run: { plan, preflight } }, { notifier, incidents: recorder() });
    expect(notifier.sent.map((m) => [m.fields?.parkingDepth, m.fields?.dlqDepth])).toEqual([
      [10, undefined],
      [undefined, 10],
    ]);
  });

  it('reports a step failure from the Lambda error Cause, even before a plan exists', async () => {
    const notifier = createMemoryNotifier();
    const cause = JSON.stringify({
      errorType: 'Redrive.InvalidInput',
      errorMessage: 'invalid execution input: dlqArn: is required',
    });
    const out = await notify(
      {
        outcome: 'failed',
        run: { input: { incidentId: 'inc-9' }, error: { Error: 'Redrive.InvalidInput', Cause: cause } },
      },
      { notifier, incidents: recorder() },
    );
    expect(out.text).toBe(
      'Redrive of the DLQ failed at a step: Redrive.InvalidInput: invalid execution input: dlqArn: is required.',
    );
    expect(notifier.sent[0]?.incidentId).toBe('inc-9');
  });

  it('says where the messages are when a failed step was reconciled first (parked counted as parked)', async () => {
    const notifier = createMemoryNotifier();
    const cause = JSON.stringify({
      errorType: 'Redrive.Refused',
      errorMessage: 'redrive refused: 4784 message(s) to park were not reached',
    });
    const out = await notify(
      {
        outcome: 'failed',
        run: {
          input: { incidentId: 'inc-9' },
          error: { Error: 'Redrive.Refused', Cause: cause },
          reconcile: { inventoried: 100, redriven: 0, parked: 7, discarded: 0, inDlq: 93, missing: 0 },
        },
      },
      { notifier, incidents: recorder() },
    );
    expect(out.text).toBe(
      'Redrive of the DLQ failed at a step: Redrive.Refused: redrive refused: 4784 message(s) to park were not reached. ' +
        '0 redriven, 7 parked, 0 discarded, 93 still in the DLQ, 0 missing.',
    );
    expect(notifier.sent[0]?.fields).toMatchObject({ parked: 7, inDlq: 93 });
  });

  it('still notifies when there is no incident record (console start), and says it was not recorded', async () => {
    const notifier = createMemoryNotifier();
    const out = await notify(
      { outcome: 'nothing-to-redrive', run: { plan } },
      { notifier, incidents: recorder(true) },
    );
    expect([out.notified, out.recorded, notifier.sent.length]).toEqual([true, false, 1]);
  });

  it('uses a non-JSON Cause as is', () => {
    expect(causeMessage('States.Timeout after 3600 s')).toBe('States.Timeout after 3600 s');
  });
});
