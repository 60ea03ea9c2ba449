/**
 * The Slack approval inside the real workflow: the real ASL run by the local runner, the real
 * triage and task handlers, and `--approve-via slack` (request-approval core -> Slack capture ->
 * signed click -> local interactivity endpoint -> real interaction core -> the runner's task token).
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalIdForToken, createApprovalStore } from '#approval/approval-store.js';
import { EXPIRED_TEXT } from '#approval/slack-messages.js';
import { sqsClient } from '#platform/clients.js';
import { slackApprover } from '../../local/slack-approver.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { runIncident } from '../workflow/harness.js';

const quiet = { write: () => true } as unknown as NodeJS.WritableStream;

describe('Slack approval in the real workflow', () => {
  let stack: LocalStack;
  let sqs: SQSClient;
  const approvers: ReturnType<typeof slackApprover>[] = [];
  beforeAll(async () => {
    stack = await startLocalStack();
    sqs = sqsClient();
  });
  afterAll(async () => {
    for (const a of approvers) await a.close();
    await stack?.stop();
  });

  it('a Reject click in Slack ends the run ApprovalRejected with nothing moved', async () => {
    const approver = slackApprover({ decision: 'rejected', username: 'bob', output: quiet });
    approvers.push(approver);
    const run = await runIncident(sqs, { name: 'slack-reject', messages: 20, approver });
    expect(run.result.path).toContain('RequestApproval');
    expect(run.result.path).toContain('ApprovalRejected');
    expect(run.result.path).not.toContain('SampleRedrive');
    expect(run.result.taskResults.RequestApproval).toEqual({
      decision: 'rejected',
      approvedBy: 'bob',
      reason: 'rejected in Slack by bob',
    });
    expect(run.dlqDepthAfter).toBe(20);
    expect(approver.traces[0]?.update).toMatch(/^Rejected by bob/);
  });

  it('C17 a click after the approval state timed out: the run ends ApprovalExpired, Slack says expired, the record is closed', async () => {
    const approver = slackApprover({ username: 'late', output: quiet, clickAfterMs: 2500 });
    approvers.push(approver);
    const run = await runIncident(sqs, {
      name: 'slack-late',
      messages: 20,
      approver,
      runner: { timeoutSecondsOverrides: { RequestApproval: 1 } },
    });
    expect(run.result.path).toContain('ApprovalExpired');
    expect(run.dlqDepthAfter).toBe(20);
    await expect.poll(() => approver.traces.length, { timeout: 10_000 }).toBe(1);
    expect(approver.traces[0]?.clickStatus).toBe(200);
    expect(approver.traces[0]?.update).toBe(EXPIRED_TEXT);
    const record = await createApprovalStore().get(approver.traces[0]?.approvalId ?? '');
    expect(record).toMatchObject({ status: 'CLOSED', closedReason: 'task-timed-out' });
    expect(approvalIdForToken(record?.taskToken ?? '')).toBe(record?.approvalId);
  });
});
