import {
  ListMessageMoveTasksCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReconcileResult } from '../../functions/reconcile/reconcile.js';
import { queueDepth } from '../../local/demo/queues.js';
import { FaultInjector } from '../../local/fault-injection.js';
import { useWorkflowStack } from '../support/workflow-stack.js';
import { envelopeStates, runIncident } from './harness.js';

// A step between the approval and the bulk move dies (a console restart is the recovery, so the
// execution fails at once): ReconcileAfterFailure's report is what the operator reads before the
// restart. It must say what the queues physically hold.
describe('ReconcileAfterFailure after a crashed step (real ASL, real handlers, local stack)', {
  timeout: 180_000,
}, () => {
  const local = useWorkflowStack({ env: { REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS: '3' } });
  let faults: FaultInjector | undefined;
  afterEach(() => faults?.uninstall());

  it('N01 Park dies right after SendMessageBatch (before SENT, before the delete): the Failed report accounts for the copies in the parking queue', async () => {
    faults = new FaultInjector();
    faults.install();
    faults.arm({ functionFolder: 'park', command: 'SendMessageBatchCommand', mode: 'restart' });
    const run = await runIncident(local.sqs, {
      name: 'raf-park-send',
      messages: 30,
      poisonEvery: 10,
      runner: { faults },
    });
    expect(faults.crashes).toHaveLength(1);
    expect(run.result.status).toBe('FAILED');
    expect(run.result.path.slice(-4)).toEqual(['Park', 'ReconcileAfterFailure', 'RecordFailure', 'Failed']);
    const parking = await queueDepth(local.sqs, run.incident.queues.parkingUrl);
    const dlq = await queueDepth(local.sqs, run.incident.queues.dlqUrl);
    const report = run.result.taskResults.ReconcileAfterFailure as ReconcileResult | undefined;
    expect(report).toBeDefined();
    if (!report) return;
    const inParking = parking.visible + parking.inFlight;
    // The dead attempt sent the three poison orders to the parking queue and deleted nothing.
    expect(inParking).toBe(3);
    expect(dlq.visible + dlq.inFlight).toBe(30);
    expect(report.inDlq + report.inFlight).toBe(30);
    // What the report says of the parking queue: parked, or possible (duplicate) copies, named.
    const namedCopies = report.possibleDuplicates.filter((d) => d.kind === 'park').length;
    expect(report.parked + namedCopies).toBe(inParking);
    expect(report.possibleDuplicateSends).toBe(namedCopies);
  });
  it('N01 ParkLateArrivals (the ramp stopped its task to park late poison) fails on a late message larger than the parking queue takes: reconciled before the failure is reported', async () => {
    let sent = false;
    const run = await runIncident(local.sqs, {
      name: 'raf-late-park',
      messages: 60,
      poisonEvery: 10,
      registration: { sampleSize: 3, rampRates: [2, 50], dwellSeconds: 2 },
      beforeTriage: async (incident) => {
        await local.sqs.send(
          new SetQueueAttributesCommand({
            QueueUrl: incident.queues.parkingUrl,
            Attributes: { MaximumMessageSize: '1024' },
          }),
        );
      },
      afterTask: async (state, incident) => {
        if (state !== 'StartMoveTask' || sent) return;
        sent = true;
        // A permanent failure of 1.5 KB dead-letters after triage, while the move task runs: no
        // Preflight saw it, so only Park meets its size.
        await local.sqs.send(
          new SendMessageCommand({
            QueueUrl: incident.queues.dlqUrl,
            MessageBody: JSON.stringify({ orderId: 'late-oversized', notes: 'n'.repeat(1500) }),
            MessageAttributes: { 'error-class': { DataType: 'String', StringValue: 'SyntaxError' } },
          }),
        );
      },
    });
    expect(sent).toBe(true);
    expect(run.result.status).toBe('FAILED');
    expect(run.result.path).toContain('ParkLateArrivals');
    expect(run.result.path.slice(-3)).toEqual(['ReconcileAfterFailure', 'RecordFailure', 'Failed']);
    const report = run.result.taskResults.ReconcileAfterFailure as ReconcileResult | undefined;
    expect(report).toBeDefined();
    if (!report) return;
    const parking = await queueDepth(local.sqs, run.incident.queues.parkingUrl);
    const dlq = await queueDepth(local.sqs, run.incident.queues.dlqUrl);
    expect(report.parked).toBe(parking.visible + parking.inFlight);
    expect(report.inDlq + report.inFlight).toBe(dlq.visible + dlq.inFlight);
    expect(report.missing).toBe(0);
    expect(report.redriven).toBeGreaterThan(0);
    expect(report.inventoried + report.lateArrivals + report.returned).toBe(
      report.redriven + report.parked + report.discarded + report.inDlq + report.inFlight + report.missing,
    );
    const states = await envelopeStates(run.incident.queues.dlqArn);
    expect(states.PARKED).toBe(report.parked);
    const failure = run.result.taskResults.RecordFailure as { text: string };
    expect(failure.text).toMatch(/larger than the parking queue's MaximumMessageSize/);
    expect(failure.text).toMatch(
      /\d+ redriven, \d+ parked, 0 discarded, \d+ still in the DLQ, 0 missing[.;]/,
    );
  });

  it('StartMoveTask dies right after StartMessageMoveTask: StopRampAfterFailure cancels the task it started, and the Failed report counts what it moved', async () => {
    faults = new FaultInjector();
    faults.install();
    faults.arm({ functionFolder: 'move-task', command: 'StartMessageMoveTaskCommand', mode: 'restart' });
    const run = await runIncident(local.sqs, {
      name: 'raf-ramp-start',
      messages: 60,
      poisonEvery: 10,
      // 2 msg/s: the task is still moving when the failure is handled.
      registration: { sampleSize: 3, rampRates: [2, 50], dwellSeconds: 2 },
      runner: { faults },
    });
    expect(faults.crashes).toHaveLength(1);
    expect(run.result.status).toBe('FAILED');
    expect(run.result.path.slice(-5)).toEqual([
      'StartMoveTask',
      'StopRampAfterFailure',
      'ReconcileAfterFailure',
      'RecordFailure',
      'Failed',
    ]);
    const stop = run.result.taskResults.StopRampAfterFailure as {
      status: string;
      reason: string;
      taskHandle: string;
    };
    expect(stop.reason).toMatch(
      /^a ramp step failed: its move task \S+ was cancelled after \d+ message\(s\) moved$/,
    );
    expect(['CANCELLED', 'COMPLETED']).toContain(stop.status);
    // Nothing moves after the report: no task of the DLQ is running.
    const tasks = await local.sqs.send(
      new ListMessageMoveTasksCommand({ SourceArn: run.incident.queues.dlqArn, MaxResults: 10 }),
    );
    expect((tasks.Results ?? []).filter((t) => t.Status === 'RUNNING' || t.Status === 'CANCELLING')).toEqual(
      [],
    );
    const report = run.result.taskResults.ReconcileAfterFailure as ReconcileResult | undefined;
    expect(report).toBeDefined();
    if (!report) return;
    const dlq = await queueDepth(local.sqs, run.incident.queues.dlqUrl);
    const parking = await queueDepth(local.sqs, run.incident.queues.parkingUrl);
    expect(report.missing).toBe(0);
    expect(report.parked).toBe(parking.visible + parking.inFlight);
    expect(report.inDlq + report.inFlight).toBe(dlq.visible + dlq.inFlight);
    // The sample (3) and what the task moved before its cancel are redriven, not still in the DLQ.
    expect(report.redriven).toBe(3 + report.movedByTask);
    expect(report.inventoried + report.lateArrivals + report.returned).toBe(
      report.redriven + report.parked + report.discarded + report.inDlq + report.inFlight + report.missing,
    );
    const failure = run.result.taskResults.RecordFailure as { text: string; orphanedTask: unknown };
    expect(failure.text).toMatch(new RegExp(`${report.redriven} redriven, ${report.parked} parked`));
    // StopRampAfterFailure already cancelled it: RecordFailure found nothing left running.
    expect(failure.orphanedTask).toBeNull();
  });
});
