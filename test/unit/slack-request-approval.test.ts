import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { approvalIdForToken } from '#approval/approval-store.js';
import type { SlackMessage } from '#approval/slack-client.js';
import { approvalRequestMessage, approvalWarnings } from '#approval/slack-messages.js';
import { createSlackNotifier } from '#approval/slack-notifier.js';
import type { IncidentSummary } from '#inventory/model.js';
import { FIFO_ORDER_KEPT } from '../../functions/preflight/preflight.js';
import {
  APPROVAL_RECORD_MARGIN_SECONDS,
  type RequestApprovalDeps,
  RequestApprovalInput,
  requestApproval,
} from '../../functions/request-approval/request-approval.js';
import { createInMemoryApprovalStore } from '../support/in-memory-approval-store.js';
import { createMemoryNotifier } from '../support/memory-notifier.js';

const NOW = 1767350400000; // C10's now_epoch_ms
const HOUR = 3_600_000;
const payload = RequestApprovalInput.parse(
  JSON.parse(
    readFileSync(new URL('../../events/slack/request-approval-task-payload.json', import.meta.url), 'utf8'),
  ),
);

function summary(overrides: Partial<IncidentSummary> = {}): IncidentSummary {
  return {
    messageCount: 42,
    countBySource: { 'arn:aws:sqs:us-east-1:123456789012:orders-queue': 42 },
    causes: [
      {
        fingerprint: 'a',
        errorClass: 'TimeoutError',
        count: 30,
        classification: 'transient',
        exampleMessageId: 'm-1',
        exampleReason: 'timed out',
      },
    ],
    countByClassification: { transient: 42, permanent: 0, poison: 0, systemic: 0, unknown: 0 },
    oldestMessageAgeMs: 2 * HOUR,
    earliestRetentionDeadline: NOW + 90 * HOUR,
    expiringWithin24h: 0,
    partial: false,
    ...overrides,
  };
}

function fakeSlack() {
  const posts: { channel: string; message: SlackMessage; threadTs: string | undefined }[] = [];
  const updates: { channel: string; ts: string; message: SlackMessage }[] = [];
  return {
    posts,
    updates,
    async updateMessage(channel: string, ts: string, message: SlackMessage) {
      updates.push({ channel, ts, message });
    },
    async postMessage(channel: string, message: SlackMessage, options: { threadTs?: string } = {}) {
      posts.push({ channel, message, threadTs: options.threadTs });
      return { channel, ts: `1767350100.${String(posts.length).padStart(6, '0')}` };
    },
  };
}

function deps(overrides: Partial<RequestApprovalDeps> = {}) {
  const approvals = createInMemoryApprovalStore();
  const slack = fakeSlack();
  const d: RequestApprovalDeps = {
    approvals,
    slack,
    incidentSummary: async () => summary(),
    registration: async () => ({ slackChannel: 'C0EXAMPLE', approvers: ['U0EXAMPLE1'] }),
    now: () => NOW,
    ...overrides,
  };
  return { d, approvals, slack };
}

const view = (s: IncidentSummary | null, extra: { fifo?: boolean; discardPoison?: boolean } = {}) => ({
  approvalId: 'apr-1',
  incidentId: 'inc-1',
  dlqArn: payload.plan.dlqArn,
  summary: s,
  plan: { ...payload.plan, discardPoison: extra.discardPoison ?? false },
  preflight: { ...payload.preflight, fifo: extra.fifo ?? false },
  nowMs: NOW,
  expiresAtMs: NOW + HOUR,
});

describe('request-approval', () => {
  it('stores the task token server-side under an opaque id with a TTL of the timeout plus a margin', async () => {
    const { d, approvals, slack } = deps();
    const out = await requestApproval(payload, d);
    expect(out.approvalId).toBe(approvalIdForToken(payload.taskToken));
    expect(out.approvalId).toMatch(/^apr-[0-9a-f]{32}$/);
    const record = approvals.records.get(out.approvalId);
    expect(record?.taskToken).toBe(payload.taskToken);
    expect(record?.messageTs).toBe(out.ts);
    expect(record?.expiresAt).toBe(NOW / 1000 + 3600 + APPROVAL_RECORD_MARGIN_SECONDS);
    expect(JSON.stringify(slack.posts)).not.toContain(payload.taskToken);
  });

  it('posts once when RequestApproval is retried with the same task token', async () => {
    const { d, slack } = deps();
    const first = await requestApproval(payload, d);
    const second = await requestApproval(payload, d);
    expect(slack.posts).toHaveLength(1);
    expect(second).toEqual({ ...first, posted: false });
  });

  it('posts again when the previous attempt failed before recording the message ts', async () => {
    const { d, approvals, slack } = deps();
    const failing = {
      ...d,
      slack: {
        postMessage: async () => {
          throw new Error('slack down');
        },
      },
    };
    await expect(requestApproval(payload, failing)).rejects.toThrow('slack down');
    const out = await requestApproval(payload, d);
    expect(slack.posts).toHaveLength(1);
    expect(approvals.records.get(out.approvalId)?.postAttempts).toBe(2);
  });

  it('fails naming slackChannel, before any write, when no channel is registered or configured', async () => {
    const { d, approvals } = deps({ registration: async () => ({ approvers: [] }) });
    await expect(requestApproval(payload, d)).rejects.toThrow(/slackChannel/);
    expect(approvals.records.size).toBe(0);
  });

  it('warns in the message when the queue has no approvers', async () => {
    const { d, slack } = deps({ registration: async () => ({ slackChannel: 'C1', approvers: [] }) });
    await requestApproval(payload, d);
    expect(JSON.stringify(slack.posts[0]?.message.blocks)).toContain('nobody can approve from Slack');
  });
});

describe('approval message', () => {
  it('C10 shows the earliest retention deadline with a "< 24 h" warning when it is 23 h away', () => {
    const s = summary({ earliestRetentionDeadline: NOW + 23 * HOUR, expiringWithin24h: 1 });
    const text = JSON.stringify(approvalRequestMessage(view(s)).blocks);
    expect(text).toContain(
      'Earliest retention deadline: 2026-01-03T09:40:00Z (:warning: < 24 h, in 23 h 0 min)',
    );
    expect(approvalWarnings(view(s))[0]).toBe(
      '< 24 h of retention left: the earliest message expires at 2026-01-03T09:40:00Z (in 23 h 0 min); 1 message expires within 24 h',
    );
  });

  it('C10 shows no retention warning when the earliest deadline is 90 h away', () => {
    expect(approvalWarnings(view(summary()))).toEqual([]);
  });

  it('C08 warns that FIFO ordering within a message group is not preserved relative to new traffic', () => {
    const warnings = approvalWarnings(view(summary(), { fifo: true }));
    expect(
      warnings.some((w) =>
        w.includes('ordering within a message group is not preserved relative to new traffic'),
      ),
    ).toBe(true);
  });

  it('C08 a FIFO run the recording mover moves says group order is kept, and not the generic "not preserved"', () => {
    const v = view(summary(), { fifo: true });
    const warnings = approvalWarnings({ ...v, preflight: { ...v.preflight, warnings: [FIFO_ORDER_KEPT] } });
    expect(warnings).toEqual([FIFO_ORDER_KEPT]);
    expect(FIFO_ORDER_KEPT).toMatch(/^FIFO: order within each message group is kept/);
  });

  it('C07 says poison and permanent messages will be parked first, and names messages without a source', () => {
    const s = summary({
      countByClassification: { transient: 1, permanent: 0, poison: 1, systemic: 0, unknown: 0 },
      countBySource: { 'arn:aws:sqs:us-east-1:111122223333:orders-queue': 1, unknown: 1 },
    });
    expect(approvalWarnings(view(s))).toEqual([
      '1 poison/permanent message will be parked first (a move task cannot skip messages)',
      '1 message has no DeadLetterQueueSourceArn (sent straight to the DLQ)',
    ]);
    expect(approvalWarnings(view(s, { discardPoison: true }))[0]).toContain('will be DISCARDED first');
  });

  it('shows counts, top causes with an example, the oldest age, classification counts, sample size and ramp', () => {
    const text = JSON.stringify(approvalRequestMessage(view(summary())).blocks);
    expect(text).toContain('*42 messages* in `orders-dlq` from `orders-queue`');
    expect(text).toContain('*30* × `TimeoutError` (transient): e.g. `m-1`: timed out');
    expect(text).toMatch(/Oldest message: sent \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(2 h 0 min ago\)/);
    expect(text).toContain('Classification: transient 42');
    expect(text).toContain('Sample first: 5 messages');
    expect(text).toContain(
      "Ramp: 5 → 50 → 200 msg/s, 180 s per step (the plan's 60 s dwell, at least one 180 s return window",
    );
  });

  it('puts only the approval id in the Approve and Reject buttons', () => {
    const actions = approvalRequestMessage(view(summary())).blocks?.find((b) => b.type === 'actions') as {
      elements: { action_id: string; value: string }[];
    };
    expect(actions.elements.map((e) => [e.action_id, e.value])).toEqual([
      ['approve_redrive', 'apr-1'],
      ['reject_redrive', 'apr-1'],
    ]);
  });

  it('falls back to the preflight depth when the incident has no triage summary (console start)', () => {
    const text = JSON.stringify(approvalRequestMessage(view(null)).blocks);
    expect(text).toContain('*42 messages* (approximate) in `orders-dlq`');
    expect(text).toContain('No triage summary');
  });
});

describe('Slack notifier', () => {
  it('posts progress into the approval thread of the incident', async () => {
    const approvals = createInMemoryApprovalStore();
    await approvals.putThread('inc-1', { channel: 'C0EXAMPLE', ts: '1767350100.000100' }, 0);
    const slack = fakeSlack();
    const notifier = createSlackNotifier({
      slack,
      threads: approvals,
      channelFor: async () => null,
      now: () => NOW,
    });
    await notifier.notify({
      incidentId: 'inc-1',
      kind: 'completed',
      text: 'redriven 42',
      fields: { redriven: 42 },
    });
    expect(slack.posts).toHaveLength(1);
    expect(slack.posts[0]).toMatchObject({ channel: 'C0EXAMPLE', threadTs: '1767350100.000100' });
    expect(slack.posts[0]?.message.text).toBe('completed: redriven 42');
  });

  it('C17 approval-expired replaces the request (no buttons), closes the approval and notes it in the thread', async () => {
    const { d, approvals, slack } = deps();
    const posted = await requestApproval(payload, d);
    const notifier = createSlackNotifier({
      slack,
      threads: approvals,
      channelFor: async () => null,
      now: () => NOW,
    });
    await notifier.notify({
      incidentId: payload.plan.incidentId,
      kind: 'approval-expired',
      text: 'approval expired, nothing moved',
      fields: {},
    });
    expect(slack.updates).toEqual([
      {
        channel: 'C0EXAMPLE',
        ts: posted.ts,
        message: expect.objectContaining({
          text: 'Approval expired: nobody answered in time. Nothing was moved.',
        }),
      },
    ]);
    expect(approvals.records.get(posted.approvalId)).toMatchObject({
      status: 'CLOSED',
      closedReason: 'task-timed-out',
    });
    expect(slack.posts.at(-1)).toMatchObject({ channel: 'C0EXAMPLE', threadTs: posted.ts });
  });

  it('starts a thread in the queue channel when there is none, and uses it for the next notice', async () => {
    const approvals = createInMemoryApprovalStore();
    const slack = fakeSlack();
    const notifier = createSlackNotifier({
      slack,
      threads: approvals,
      channelFor: async () => 'C0OPS',
      now: () => NOW,
    });
    await notifier.notify({ incidentId: 'inc-2', kind: 'refused', text: 'queue types differ', fields: {} });
    await notifier.notify({ incidentId: 'inc-2', kind: 'failed', text: 'later', fields: {} });
    expect(slack.posts.map((p) => [p.channel, p.threadTs])).toEqual([
      ['C0OPS', undefined],
      ['C0OPS', '1767350100.000001'],
    ]);
  });

  it('hands the notification to the fallback instead of throwing when Slack fails', async () => {
    const fallback = createMemoryNotifier();
    const notifier = createSlackNotifier({
      slack: {
        postMessage: async () => {
          throw new Error('channel_not_found');
        },
        updateMessage: async () => undefined,
      },
      threads: createInMemoryApprovalStore(),
      channelFor: async () => 'C0GONE',
      fallback,
      now: () => NOW,
    });
    await notifier.notify({ incidentId: 'inc-3', kind: 'halted', text: 'halted', fields: {} });
    expect(fallback.sent.map((n) => n.kind)).toEqual(['halted']);
  });
});

describe('RequestApproval payload limits', () => {
  it('accepts a task token of 2048 characters (SendTaskSuccess allows 2048) and refuses 2049 naming taskToken', () => {
    const raw = JSON.parse(
      readFileSync(new URL('../../events/slack/request-approval-task-payload.json', import.meta.url), 'utf8'),
    ) as Record<string, unknown>;
    const long = RequestApprovalInput.safeParse({ ...raw, taskToken: 'A'.repeat(2048) });
    const tooLong = RequestApprovalInput.safeParse({ ...raw, taskToken: 'A'.repeat(2049) });
    expect(long.success).toBe(true);
    expect(tooLong.success).toBe(false);
    expect(tooLong.error?.issues.map((i) => i.path.join('.'))).toEqual(['taskToken']);
  });
});
