import { readFileSync } from 'node:fs';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflowLeaseStore, leaseSeconds } from '#incident/workflow-lease.js';
import { documentClient } from '#platform/clients.js';
import type { ExecutionEndedResult } from '../../functions/execution-ended/execution-ended.js';
import { handler } from '../../functions/execution-ended/handler.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { lambdaContext } from '../support/redrive-fixtures.js';

type StatusChange = { detail: Record<string, unknown> } & Record<string, unknown>;
const sample = JSON.parse(
  readFileSync(
    new URL('../../events/stepfunctions/execution-status-change-aborted.json', import.meta.url),
    'utf8',
  ),
) as StatusChange;

const invoke = (event: unknown) => handler(event as never, lambdaContext) as Promise<ExecutionEndedResult>;

/** The sample ABORTED event, for execution `name` of a run on `dlqArn`. */
function abortedEvent(dlqArn: string, name: string, incidentId: string): StatusChange {
  const executionArn = `${String(sample.detail.stateMachineArn).replace(':stateMachine:', ':execution:')}:${name}`;
  return {
    ...sample,
    resources: [executionArn],
    detail: {
      ...sample.detail,
      executionArn,
      name,
      input: JSON.stringify({ dlqArn, incidentId, requestedBy: 'triage' }),
    },
  };
}

describe('execution-ended (real handler, DynamoDB Local)', () => {
  let stack: LocalStack;
  const leases = createWorkflowLeaseStore();
  const scanAll = async () =>
    (await documentClient().send(new ScanCommand({ TableName: stack.tableName, ConsistentRead: true })))
      .Items ?? [];

  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('an ABORTED event for the holder deletes its lease; one for another execution leaves the holder lease', async () => {
    const dlqArn = 'arn:aws:sqs:us-east-1:111122223333:ended-orders-dlq';
    const taken = await leases.acquire(
      dlqArn,
      { incidentId: 'inc-ended-a', executionName: 'exec-a' },
      Date.now(),
      leaseSeconds(600),
    );
    expect(taken.acquired).toBe(true);

    const forB = await invoke(abortedEvent(dlqArn, 'exec-b', 'inc-ended-b'));
    expect(forB).toMatchObject({ leaseReleased: false, heldBy: 'exec-a', dlqArn, notified: true });
    expect(await leases.get(dlqArn)).toMatchObject({ executionName: 'exec-a', incidentId: 'inc-ended-a' });

    const forA = await invoke(abortedEvent(dlqArn, 'exec-a', 'inc-ended-a'));
    expect(forA).toMatchObject({ leaseReleased: true, heldBy: null, dlqArn, dlqFrom: 'input' });
    expect(await leases.get(dlqArn)).toBeUndefined();

    // Delivered again (EventBridge is at-least-once): nothing left to release, nothing else touched.
    const again = await invoke(abortedEvent(dlqArn, 'exec-a', 'inc-ended-a'));
    expect(again).toMatchObject({ leaseReleased: false, heldBy: null });
  });

  it('a malformed event fails Redrive.InvalidInput naming each field and leaves the table unchanged', async () => {
    const dlqArn = 'arn:aws:sqs:us-east-1:111122223333:ended-malformed-dlq';
    await leases.acquire(
      dlqArn,
      { incidentId: 'inc-m', executionName: 'exec-m' },
      Date.now(),
      leaseSeconds(0),
    );
    const before = await scanAll();
    const event = abortedEvent(dlqArn, 'exec-m', 'inc-m');
    const { status: _status, ...detailWithoutStatus } = event.detail;

    const missingStatus = await invoke({ ...event, detail: detailWithoutStatus }).catch((e: unknown) => e);
    const wrongSource = await invoke({ ...event, source: 'aws.sqs' }).catch((e: unknown) => e);
    const badInput = await invoke({ ...event, detail: { ...event.detail, input: '[1,2]' } }).catch(
      (e: unknown) => e,
    );

    expect((missingStatus as Error).name).toBe('Redrive.InvalidInput');
    expect((missingStatus as Error).message).toContain(
      'detail.status: must be one of ABORTED, TIMED_OUT, FAILED',
    );
    expect((wrongSource as Error).name).toBe('Redrive.InvalidInput');
    expect((wrongSource as Error).message).toContain('source: must be "aws.states"');
    expect((badInput as Error).name).toBe('Redrive.InvalidInput');
    expect((badInput as Error).message).toContain(
      'detail.input: must be the execution input as a JSON object',
    );
    expect(await scanAll()).toEqual(before);
    expect(await leases.get(dlqArn)).toMatchObject({ executionName: 'exec-m' });
  });
});
