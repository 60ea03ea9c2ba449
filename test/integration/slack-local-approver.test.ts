/**
 * `--approve-via slack` locally: the real request-approval core posts to the Slack capture, the
 * approver signs a click and POSTs it to the local interactivity endpoint, the real interaction
 * core runs against DynamoDB Local, and its SendTaskSuccess port resolves the local task token
 * (local/task-tokens.ts, which answers late callbacks with the API's TaskTimedOut, C17).
 */
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalIdForToken, createApprovalStore } from '#approval/approval-store.js';
import { EXPIRED_TEXT } from '#approval/slack-messages.js';
import { createAuditTrail } from '#incident/audit-trail.js';
import { documentClient } from '#platform/clients.js';
import { approverFromArgs } from '../../local/approver.js';
import { slackApprover } from '../../local/slack-approver.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { TaskTokenRegistry } from '../../local/task-tokens.js';

const payload = JSON.parse(
  readFileSync(new URL('../../events/slack/request-approval-task-payload.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;
const quiet = () =>
  new Writable({
    write(_chunk, _enc, cb) {
      cb();
    },
  });

let stack: LocalStack;
const approvers: ReturnType<typeof slackApprover>[] = [];

beforeAll(async () => {
  stack = await startLocalStack();
});
afterAll(async () => {
  for (const a of approvers) await a.close();
  await stack?.stop();
});

function approver(options: Parameters<typeof slackApprover>[0] = {}) {
  const a = slackApprover({ signingSecret: 'local-secret', output: quiet(), username: 'alice', ...options });
  approvers.push(a);
  return a;
}

describe('local Slack approver', () => {
  it('an approval click through the local endpoint resolves the pending task token with the decision', async () => {
    const tokens = new TaskTokenRegistry();
    const { taskToken, outcome } = tokens.create(60);
    const a = approver();
    await a.requestApproval(
      { taskToken, executionName: 'run-1', payload: { ...payload, taskToken }, timeoutSeconds: 60 },
      tokens,
    );
    expect(await outcome).toEqual({
      kind: 'success',
      output: { decision: 'approved', approvedBy: 'alice', reason: null },
    });
    expect(a.traces[0]?.clickStatus).toBe(200);
    expect(a.traces[0]?.update).toMatch(/^Approved by alice/);
    const record = await createApprovalStore().get(approvalIdForToken(taskToken));
    expect(record?.status).toBe('CLOSED');
    expect(record?.approvers).toEqual(['ULOCALUSER']); // no registration: the local user approves
  });

  it('the approver, the time and the plan stay on the incident after the approval record has expired (TTL)', async () => {
    const tokens = new TaskTokenRegistry();
    const { taskToken, outcome } = tokens.create(60);
    await approver({ username: 'bob' }).requestApproval(
      { taskToken, executionName: 'run-audit', payload: { ...payload, taskToken }, timeoutSeconds: 60 },
      tokens,
    );
    await outcome;
    const approvalId = approvalIdForToken(taskToken);
    // DynamoDB's TTL deletes the approval record some time after expiresAt: do what it does.
    await documentClient().send(
      new DeleteCommand({
        TableName: stack.tableName,
        Key: { pk: `APPROVAL#${approvalId}`, sk: 'APPROVAL' },
      }),
    );
    expect(await createApprovalStore().get(approvalId)).toBeNull();
    const plan = (payload as { plan: { incidentId: string; rampRates: number[] } }).plan;
    const trail = await createAuditTrail().list(plan.incidentId);
    const decided = trail.find((e) => e.approvalId === approvalId && e.kind === 'approved');
    const requested = trail.find((e) => e.approvalId === approvalId && e.kind === 'approval-requested');
    expect(decided).toMatchObject({ by: 'bob', via: 'slack' });
    expect(decided?.at).toBeGreaterThan(Date.now() - 600_000);
    expect(requested?.plan?.rampRates).toEqual(plan.rampRates);
  });

  it('a Reject click resolves the token with decision rejected', async () => {
    const tokens = new TaskTokenRegistry();
    const { taskToken, outcome } = tokens.create(60);
    await approver({ decision: 'rejected' }).requestApproval(
      { taskToken, executionName: 'run-2', payload: { ...payload, taskToken }, timeoutSeconds: 60 },
      tokens,
    );
    expect(await outcome).toMatchObject({
      kind: 'success',
      output: { decision: 'rejected', approvedBy: 'alice' },
    });
  });

  it('C17 a click after the task timed out gets TaskTimedOut locally: 200, message expired, record closed', async () => {
    const tokens = new TaskTokenRegistry();
    const { taskToken } = tokens.create(60);
    tokens.close(taskToken); // the approval state's TimeoutSeconds passed
    const a = approver();
    await a.requestApproval(
      { taskToken, executionName: 'run-3', payload: { ...payload, taskToken }, timeoutSeconds: 60 },
      tokens,
    );
    expect(a.traces[0]?.clickStatus).toBe(200);
    expect(a.traces[0]?.update).toBe(EXPIRED_TEXT);
    const record = await createApprovalStore().get(approvalIdForToken(taskToken));
    expect(record).toMatchObject({ status: 'CLOSED', closedReason: 'task-timed-out' });
  });

  it('importing local/slack-approver registers --approve-via slack', async () => {
    expect((await approverFromArgs(['--approve-via', 'slack'], false)).name).toBe('slack');
  });
});
