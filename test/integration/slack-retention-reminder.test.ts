/**
 * The retention reminder end to end on the local stack: the real request-approval handler stores
 * the approval (with the reminder it owes) in DynamoDB Local and posts to the Slack capture; the
 * real approval-reminder check then posts one reminder in that thread once the rule's point is
 * passed, and never again.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETENTION_REMINDER_RULE } from '#approval/approval-reminders.js';
import { approvalIdForToken, createApprovalStore } from '#approval/approval-store.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { approvalReminder, ScheduledEvent } from '../../functions/approval-reminder/approval-reminder.js';
import { createApprovalReminderDeps } from '../../functions/approval-reminder/deps.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { lambdaContext as context } from '../support/redrive-fixtures.js';
import type { SlackCapture } from '../support/slack-capture.js';
import { type Handler, type SlackRig, startSlackRig } from '../support/slack-interaction.js';

const read = (path: string) =>
  JSON.parse(readFileSync(new URL(`../../events/${path}`, import.meta.url), 'utf8'));
const base = read('slack/request-approval-task-payload.json') as {
  plan: { dlqArn: string; incidentId: string } & Record<string, unknown>;
  preflight: Record<string, unknown>;
};
const scheduled = ScheduledEvent.parse(read('eventbridge/scheduled-event.json'));
const HOUR = 3_600_000;

let stack: LocalStack;
let rig: SlackRig;
let capture: SlackCapture;
let requestApproval: Handler;

beforeAll(async () => {
  stack = await startLocalStack();
  rig = await startSlackRig('test-signing-secret-not-real-0002');
  capture = rig.capture;
  requestApproval = (await import('../../functions/request-approval/handler.js')).handler as Handler;
  await createQueueRegistry().putRegistration({
    dlqArn: base.plan.dlqArn,
    slackChannel: 'C0EXAMPLE',
    approvers: ['U0EXAMPLE1'],
  });
});

afterAll(async () => {
  await rig?.close();
  await stack?.stop();
});

/** Posts an approval whose DLQ's first message expires `deadlineInMs` from now. */
async function approvalWith(token: string, deadlineInMs: number, estimatedSeconds = 60): Promise<number> {
  const postedAt = Date.now();
  await requestApproval(
    {
      ...base,
      taskToken: token,
      plan: { ...base.plan, incidentId: `inc-${token.slice(-8)}` },
      preflight: {
        ...base.preflight,
        earliestRetentionDeadline: postedAt + deadlineInMs,
        forecast: { estimatedSeconds },
      },
      timeoutSeconds: 3600,
    },
    context,
  );
  return postedAt + deadlineInMs;
}

const replies = (ts: string) =>
  capture
    .callsTo('chat.postMessage')
    .filter((c) => c.args.thread_ts === ts && String(c.args.text).includes('expires'));

describe('retention reminder while an approval waits', () => {
  it('posts one reminder in the thread once deadline - now <= 3 h, and none before or after', async () => {
    // The deadline is 3 h 30 min away: the rule's point (3 h before it) comes 30 min into the wait.
    const token = 'AQCEAAAAKgAAAAMAAAAAAAAAAexample-token-reminder-01';
    const deadline = await approvalWith(token, 3.5 * HOUR);
    const record = await createApprovalStore().get(approvalIdForToken(token));
    const ts = record?.messageTs as string;
    expect(record?.reminder).toMatchObject({ leadSeconds: RETENTION_REMINDER_RULE.minLeadSeconds, deadline });
    const point = deadline - RETENTION_REMINDER_RULE.minLeadSeconds * 1000;

    const at = (ms: number) => createApprovalReminderDeps({ overrides: { now: () => ms } });
    expect((await approvalReminder(scheduled, await at(point - 60_000))).reminded).toBe(0);
    expect(replies(ts)).toHaveLength(0);

    const first = await approvalReminder(scheduled, await at(point + 60_000));
    expect(first.outcomes).toEqual([
      expect.objectContaining({ code: 'reminded', leftSeconds: 3 * 3600 - 60, leadSeconds: 3 * 3600 }),
    ]);
    for (const later of [point + 11 * 60_000, point + 21 * 60_000]) {
      expect((await approvalReminder(scheduled, await at(later))).reminded).toBe(0);
    }
    expect(replies(ts)).toHaveLength(1);
    expect(replies(ts)[0]?.args).toMatchObject({ channel: 'C0EXAMPLE' });
    expect(String(replies(ts)[0]?.args.text)).toContain('<@U0EXAMPLE1>');
    expect((await createApprovalStore().get(approvalIdForToken(token)))?.remindedAt).toBe(point + 60_000);
  });

  it('reminds a long run earlier: the lead is twice its estimate when that exceeds 3 h', async () => {
    const token = 'AQCEAAAAKgAAAAMAAAAAAAAAAexample-token-reminder-02';
    const deadline = await approvalWith(token, 4 * HOUR + 20 * 60_000, 2 * 3600);
    const record = await createApprovalStore().get(approvalIdForToken(token));
    expect(record?.reminder).toMatchObject({ leadSeconds: 4 * 3600, dueAt: deadline - 4 * HOUR });
  });

  it('owes no reminder when the point comes after the approval window, and drops a decided approval', async () => {
    const far = 'AQCEAAAAKgAAAAMAAAAAAAAAAexample-token-reminder-03';
    await approvalWith(far, 5 * HOUR);
    expect((await createApprovalStore().get(approvalIdForToken(far)))?.reminder).toBeNull();

    const decided = 'AQCEAAAAKgAAAAMAAAAAAAAAAexample-token-reminder-04';
    const deadline = await approvalWith(decided, 3.25 * HOUR);
    const id = approvalIdForToken(decided);
    await createApprovalStore().claimDecision(id, {
      decision: 'approved',
      by: { id: 'U0EXAMPLE1', username: 'example.approver' },
      at: Date.now(),
      reason: null,
    });
    const deps = await createApprovalReminderDeps({ overrides: { now: () => deadline - 2 * HOUR } });
    const result = await approvalReminder(scheduled, deps);
    expect(result.outcomes).toContainEqual({ code: 'not-pending', approvalId: id, status: 'DECIDED' });
    expect(result.reminded).toBe(0);
  });
});
