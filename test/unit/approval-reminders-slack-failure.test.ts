/**
 * remindDueApprovals when Slack refuses one approval's post: the others due in the same check are
 * still reminded, the refused one is given back, and the check still reports the failure.
 */
import { describe, expect, it } from 'vitest';
import { type ApprovalReminders, remindDueApprovals } from '#approval/approval-reminders.js';
import type { ApprovalRecord } from '#approval/approval-store.js';
import { pendingApprovalRecord } from '../support/approval-record.js';

const NOW = Date.UTC(2026, 11, 4, 12);
const HOUR = 3_600_000;

function record(approvalId: string, channel: string, dueAt: number): ApprovalRecord {
  return pendingApprovalRecord(
    {
      approvalId,
      taskToken: `token-${approvalId}`,
      incidentId: `inc-${approvalId}`,
      dlqArn: 'arn:aws:sqs:us-east-1:111122223333:orders-dlq',
      channel,
      messageTs: `17000.${approvalId}`,
      approvers: ['U0EXAMPLE1'],
      createdAt: NOW - HOUR,
      expiresAt: Math.floor(NOW / 1000) + 86_400,
    },
    { reminder: { dueAt, deadline: dueAt + 3 * HOUR, leadSeconds: 10_800, approvalEndsAt: NOW + HOUR } },
  );
}

/** The reminder storage in memory: listed records, earliest due first. */
function remindersOf(records: ApprovalRecord[]) {
  const listed = new Map(records.map((r) => [r.approvalId, r]));
  const released: string[] = [];
  const port: ApprovalReminders = {
    async due(now) {
      return [...listed.values()]
        .filter((r) => (r.reminder?.dueAt ?? Number.POSITIVE_INFINITY) <= now)
        .sort((a, b) => (a.reminder?.dueAt ?? 0) - (b.reminder?.dueAt ?? 0));
    },
    async claim(approvalId) {
      return listed.delete(approvalId);
    },
    async release(r) {
      released.push(r.approvalId);
      listed.set(r.approvalId, r);
    },
    async drop(approvalId) {
      listed.delete(approvalId);
    },
  };
  return { port, listed, released };
}

describe('retention reminders when Slack refuses one post', () => {
  it('reminds the approvals due after a refused one in the same check, and gives the refused one back', async () => {
    const { port, listed, released } = remindersOf([
      record('a1', 'C0ARCHIVED', NOW - 2 * HOUR),
      record('a2', 'C0EXAMPLE', NOW - HOUR),
      record('a3', 'C0EXAMPLE', NOW - 1000),
    ]);
    const posted: string[] = [];
    const slack = {
      async postMessage(channel: string, _message: unknown, options?: { threadTs?: string }) {
        if (channel === 'C0ARCHIVED')
          throw Object.assign(new Error('is_archived'), { code: 'slack_webapi_platform_error' });
        posted.push(options?.threadTs ?? '');
        return { ts: '1' };
      },
    };
    const check = remindDueApprovals({ reminders: port, slack: slack as never, now: () => NOW });
    await expect(check).rejects.toThrow(/is_archived/);
    expect(posted).toEqual(['17000.a2', '17000.a3']);
    expect(released).toEqual(['a1']);
    expect([...listed.keys()]).toEqual(['a1']);
  });
});
