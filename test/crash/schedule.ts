/**
 * Random fault schedules for the conservation property (fast-check): at most one crash right after
 * an AWS call of triage or a workflow function, recovered by a Lambda retry or a console restart;
 * messages deleted by hand at some step; messages that dead-letter after triage.
 */
import fc from 'fast-check';
import type { CellSpec, StateFault } from './crash-cell.js';

/** AWS calls every run makes, by function (call sites named by command, so edits do not move them). */
export const CRASH_POINTS: ReadonlyArray<{ functionFolder: string; command: string }> = [
  { functionFolder: 'triage', command: 'ReceiveMessageCommand' },
  { functionFolder: 'triage', command: 'BatchWriteItemCommand' },
  { functionFolder: 'triage', command: 'PutItemCommand' },
  { functionFolder: 'validate-input', command: 'GetQueueUrlCommand' },
  { functionFolder: 'preflight', command: 'PutItemCommand' },
  // Park moves its messages 10 at a time: the ledger INSERTs, the send, the delete (park-transfer.ts).
  { functionFolder: 'park', command: 'BatchExecuteStatementCommand' },
  { functionFolder: 'park', command: 'SendMessageBatchCommand' },
  { functionFolder: 'park', command: 'DeleteMessageBatchCommand' },
  { functionFolder: 'sample-redrive', command: 'PutItemCommand' },
  { functionFolder: 'sample-redrive', command: 'SendMessageCommand' },
  { functionFolder: 'sample-redrive', command: 'UpdateItemCommand' },
  { functionFolder: 'sample-redrive', command: 'DeleteMessageCommand' },
  { functionFolder: 'verify-sample', command: 'ReceiveMessageCommand' },
  { functionFolder: 'move-task', command: 'ListMessageMoveTasksCommand' },
  { functionFolder: 'reconcile', command: 'ReceiveMessageCommand' },
  { functionFolder: 'reconcile', command: 'UpdateItemCommand' },
  { functionFolder: 'notify', command: 'DeleteItemCommand' },
];

const handDelete = fc.record({
  afterState: fc.constantFrom('Park', 'SampleRedrive', 'VerifySample', 'StartMoveTask'),
  kind: fc.constant('hand-delete' as const),
  count: fc.integer({ min: 1, max: 3 }),
});
const lateArrival = fc.record({
  afterState: fc.constantFrom('ValidateInput', 'Preflight'),
  kind: fc.constant('late-arrival' as const),
  count: fc.integer({ min: 1, max: 2 }),
});

/** One schedule: the cell spec without its id. */
export const schedule: fc.Arbitrary<Omit<CellSpec, 'id'>> = fc
  .record({
    crash: fc.option(
      fc.record({
        point: fc.constantFrom(...CRASH_POINTS),
        mode: fc.constantFrom('retry' as const, 'restart' as const),
      }),
      { nil: undefined },
    ),
    faults: fc.array(fc.oneof(handDelete, lateArrival), { maxLength: 2 }),
    messages: fc.integer({ min: 8, max: 16 }),
  })
  .map(({ crash, faults, messages }) => ({
    messages,
    faults: faults as StateFault[],
    ...(crash ? { crash: { ...crash.point, mode: crash.mode } } : {}),
  }));

/** A line describing a schedule, for the log of a run. */
export function describeSchedule(spec: Omit<CellSpec, 'id'>): string {
  const crash = spec.crash
    ? `crash after ${spec.crash.command} in ${spec.crash.functionFolder} (${spec.crash.mode})`
    : 'no crash';
  const faults = (spec.faults ?? []).map((f) => `${f.kind} ${f.count} after ${f.afterState}`);
  return [`${spec.messages} messages`, crash, ...faults].join(', ');
}
