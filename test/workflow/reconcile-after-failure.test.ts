import { afterEach, describe, expect, it } from 'vitest';
import type { ReconcileResult } from '../../functions/reconcile/reconcile.js';
import { queueDepth } from '../../local/demo/queues.js';
import { FaultInjector } from '../../local/fault-injection.js';
import { useWorkflowStack } from '../support/workflow-stack.js';
import { runIncident } from './harness.js';

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
});
