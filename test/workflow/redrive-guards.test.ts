import {
  CancelMessageMoveTaskCommand,
  ListMessageMoveTasksCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { fixedApprover, silentApprover } from '../../local/approver.js';
import { queueDepth } from '../../local/demo/queues.js';
import { useWorkflowStack } from '../support/workflow-stack.js';
import { envelopeStates, MOVING_TASKS, runIncident } from './harness.js';

function movingInvocations(invocations: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    MOVING_TASKS.filter((t) => invocations[t]).map((t) => [t, invocations[t] as number]),
  );
}

describe('redrive workflow guards on the local stack (real ASL, real handlers)', () => {
  const local = useWorkflowStack();

  it('a sample that fails verification (consumer still broken) halts the run before any move task, samples accounted for', async () => {
    const run = await runIncident(local.sqs, {
      name: 'broken',
      messages: 40,
      poisonEvery: 10,
      fixOnApproval: false,
    });
    const { result, reconcile } = run;
    expect(result.taskResults.VerifySample).toMatchObject({ verdict: 'fail' });
    expect(result.path).toContain('OutcomeSampleFailed');
    expect(result.path).not.toContain('StartMoveTask');
    expect(result.invocations.StartMoveTask).toBeUndefined();
    expect(result.status).toBe('FAILED');
    expect(result.path.at(-1)).toBe('SampleFailed');
    expect(result.error).toBe('Redrive.SampleFailed');
    const sample = result.taskResults.SampleRedrive as { sent: number; keys: string[] };
    expect(sample.sent).toBe(5);
    expect(reconcile?.missing).toBe(0);
    // The 5 samples came back to the DLQ as new messages (same keys): the final inventory stores
    // them as new envelopes (returned copies, their own row), so 40 + 5 are accounted for: 4 poison
    // parked, 5 sampled and redriven, 31 untouched plus the 5 returned still in the DLQ.
    expect(reconcile).toMatchObject({
      inventoried: 40,
      lateArrivals: 0,
      returned: 5,
      parked: 4,
      redriven: 5,
      inDlq: 36,
      discarded: 0,
    });
    if (reconcile)
      expect(reconcile.redriven + reconcile.parked + reconcile.discarded + reconcile.inDlq).toBe(
        reconcile.inventoried + (reconcile.returned ?? 0),
      );
    expect(run.dlqDepthAfter).toBe(36);
  });

  it('N01 a Park that fails after parking some (the parking queue shrunk by hand after the recheck) is reconciled before the failure is reported: parked counted as parked', async () => {
    const run = await runIncident(local.sqs, {
      name: 'park-fails',
      messages: 30,
      poisonEvery: 10,
      // Preflight and the recheck refuse a target larger than the parking queue takes: someone
      // lowers its MaximumMessageSize after both passed, so only Park meets it.
      afterTask: async (state, incident) => {
        if (state !== 'CheckDlqStillHasMessages') return;
        await local.sqs.send(
          new SetQueueAttributesCommand({
            QueueUrl: incident.queues.parkingUrl,
            Attributes: { MaximumMessageSize: '1024' },
          }),
        );
      },
      beforeTriage: async (incident) => {
        // One permanent failure of 1.5 KB, sent straight to the DLQ.
        await local.sqs.send(
          new SendMessageCommand({
            QueueUrl: incident.queues.dlqUrl,
            MessageBody: JSON.stringify({ orderId: 'too-large-to-park', blob: 'y'.repeat(1500) }),
            MessageAttributes: { 'error-class': { DataType: 'String', StringValue: 'SyntaxError' } },
          }),
        );
      },
    });
    const { result, reconcile } = run;
    expect(result.status).toBe('FAILED');
    expect(result.path.slice(-4)).toEqual(['Park', 'ReconcileAfterFailure', 'RecordFailure', 'Failed']);
    expect(result.invocations.StartMoveTask).toBeUndefined();
    expect(result.invocations.SampleRedrive).toBeUndefined();
    const parking = await queueDepth(local.sqs, run.incident.queues.parkingUrl);
    const dlq = await queueDepth(local.sqs, run.incident.queues.dlqUrl);
    // The three poison orders are in the parking queue and the report says so; the large one and
    // the 27 others are still in the DLQ, and the counts add up.
    expect(parking.visible + parking.inFlight).toBe(3);
    expect(reconcile).toMatchObject({ inventoried: 31, parked: 3, redriven: 0, inDlq: 28, missing: 0 });
    expect((reconcile?.inDlq ?? 0) + (reconcile?.inFlight ?? 0)).toBe(dlq.visible + dlq.inFlight);
    expect(await envelopeStates(run.incident.queues.dlqArn)).toEqual({
      IN_DLQ: 28,
      REDRIVEN: 0,
      PARKED: 3,
      DISCARDED: 0,
    });
    const failure = result.taskResults.RecordFailure as { text: string };
    expect(failure.text).toMatch(/larger than the parking queue's MaximumMessageSize/);
    expect(failure.text).toMatch(/0 redriven, 3 parked, 0 discarded, 28 still in the DLQ, 0 missing\.$/);
  });

  it('approval rejected: nothing moves and every envelope stays IN_DLQ', async () => {
    const run = await runIncident(local.sqs, {
      name: 'rejected',
      messages: 20,
      approver: fixedApprover('rejected', 'carol'),
    });
    expect(run.result.taskResults.RequestApproval).toMatchObject({
      decision: 'rejected',
      approvedBy: 'carol',
    });
    expect(run.result.path).toContain('OutcomeRejected');
    expect(run.result.path.at(-1)).toBe('ApprovalRejected');
    expect(movingInvocations(run.result.invocations)).toEqual({});
    expect(run.dlqDepthAfter).toBe(20);
    expect(await envelopeStates(run.incident.queues.dlqArn)).toEqual({
      IN_DLQ: 20,
      REDRIVEN: 0,
      PARKED: 0,
      DISCARDED: 0,
    });
  });

  it('C17 approval timed out (RequestApproval TimeoutSeconds, shortened to 2 s): ApprovalExpired, nothing moved, late click refused', async () => {
    let token = '';
    const run = await runIncident(local.sqs, {
      name: 'expired',
      messages: 20,
      approver: {
        name: 'away',
        async requestApproval(request, callbacks) {
          token = request.taskToken;
          await silentApprover().requestApproval(request, callbacks);
        },
      },
      runner: { timeoutSecondsOverrides: { RequestApproval: 2 } },
    });
    expect(run.result.status).toBe('FAILED');
    expect(run.result.path.at(-1)).toBe('ApprovalExpired');
    expect(run.result.error).toBe('Redrive.ApprovalExpired');
    expect(run.result.path).toContain('OutcomeApprovalExpired');
    expect(movingInvocations(run.result.invocations)).toEqual({});
    expect(run.dlqDepthAfter).toBe(20);
    await expect(run.runner.tokens.sendTaskSuccess(token, { decision: 'approved' })).rejects.toMatchObject({
      name: 'TaskTimedOut',
    });
  });

  it('C06 a move task already running on the DLQ: the redrive is refused and the workflow starts nothing', async () => {
    let handle = '';
    const run = await runIncident(local.sqs, {
      name: 'busy',
      messages: 20,
      beforeTriage: async (incident) => {
        // Someone pressed "Start DLQ redrive" in the console, at 1 msg/s.
        const started = await local.sqs.send(
          new StartMessageMoveTaskCommand({
            SourceArn: incident.queues.dlqArn,
            MaxNumberOfMessagesPerSecond: 1,
          }),
        );
        handle = started.TaskHandle ?? '';
      },
    });
    try {
      expect(handle).not.toBe('');
      expect(run.result.taskResults.Preflight).toMatchObject({ ok: false });
      const refusal = String((run.result.taskResults.Preflight as { refusal: string }).refusal);
      expect(refusal).toMatch(/move task|already/i);
      expect(run.result.path).toContain('OutcomeRefused');
      expect(run.result.path.at(-1)).toBe('RedriveRefused');
      expect(run.result.error).toBe('Redrive.Refused');
      expect(run.result.invocations.RequestApproval).toBeUndefined();
      expect(movingInvocations(run.result.invocations)).toEqual({});
    } finally {
      const tasks = await local.sqs.send(
        new ListMessageMoveTasksCommand({ SourceArn: run.incident.queues.dlqArn }),
      );
      if (tasks.Results?.[0]?.Status === 'RUNNING')
        await local.sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle: handle }));
    }
  });
});
