import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ApprovalRecord, ApprovalStore } from '#approval/approval-store.js';
import { createSlackApi } from '#approval/slack-client.js';
import { APPROVAL_BLOCK_ID, APPROVE_ACTION_ID, REJECT_ACTION_ID } from '#approval/slack-messages.js';
import { createSlackNotifier } from '#approval/slack-notifier.js';
import type { Notification } from '#incident/notifier.js';
import type { IncidentSummary } from '#inventory/model.js';
import { requestApproval } from '../../functions/request-approval/request-approval.js';
import { pendingApprovalRecord } from '../support/approval-record.js';
import { createInMemoryApprovalStore } from '../support/in-memory-approval-store.js';
import { type SlackCapture, startSlackCapture } from '../support/slack-capture.js';

const NOW = 1767352200000; // 2026-01-02T11:10:00Z
const INCIDENT = 'inc-0123456789abcdef01234567';
const APPROVAL = 'apr-0123456789abcdef0123456789abcdef';
const ROOT_TS = '1767350100.000042';
const DLQ_ARN = 'arn:aws:sqs:us-east-1:111122223333:orders-dlq';

const clearedNotice: Notification = {
  incidentId: INCIDENT,
  kind: 'alarm-cleared',
  text: 'alarm cleared at 2026-01-02T11:10:00.000Z: the pending approval stays open; the workflow re-checks the DLQ before any redrive',
  fields: {
    alarmName: 'orders-dlq-not-empty',
    clearedAt: '2026-01-02T11:10:00.000Z',
    alarmTransition: '2026-01-02T10:35:00.000+0000',
  },
};

function pendingApproval(): ApprovalRecord {
  return pendingApprovalRecord({
    approvalId: APPROVAL,
    taskToken: 'token-C04',
    incidentId: INCIDENT,
    dlqArn: DLQ_ARN,
    channel: 'C0OPS',
    messageTs: ROOT_TS,
    approvers: ['U0APPROVER'],
    createdAt: NOW - 2_100_000,
    expiresAt: Math.floor(NOW / 1000) + 3600,
  });
}

async function storeWithPendingApproval() {
  const approvals = createInMemoryApprovalStore();
  await approvals.create(pendingApproval());
  await approvals.putThread(INCIDENT, { channel: 'C0OPS', ts: ROOT_TS, approvalId: APPROVAL }, 0, {
    overwrite: true,
  });
  return approvals;
}

const approver = { id: 'U0APPROVER', username: 'alice' };

const TOKEN = 'AQCEAAAAKgAAAAMAAAAAAAAAAcC04-token';
const incidentSummary: IncidentSummary = {
  messageCount: 42,
  countBySource: { 'arn:aws:sqs:us-east-1:111122223333:orders': 42 },
  causes: [
    {
      fingerprint: 'fp-1',
      errorClass: 'PaymentGatewayTimeout',
      count: 37,
      classification: 'transient',
      exampleMessageId: 'm-0001',
      exampleReason: 'gateway timed out after 30 s',
    },
    {
      fingerprint: 'fp-2',
      errorClass: 'SchemaValidationError',
      count: 5,
      classification: 'poison',
      exampleMessageId: 'm-0002',
      exampleReason: 'missing field orderId',
    },
  ],
  countByClassification: { transient: 37, permanent: 0, poison: 5, systemic: 0, unknown: 0 },
  oldestMessageAgeMs: 3_600_000,
  earliestRetentionDeadline: NOW + 90 * 3_600_000,
  expiringWithin24h: 0,
  partial: false,
};

type Block = {
  type: string;
  block_id?: string;
  text?: { text: string };
  elements?: Array<{ text?: string; action_id?: string; value?: string }>;
};
const textOf = (blocks: Block[]) =>
  blocks
    .map((b) => [b.text?.text ?? '', ...(b.elements ?? []).map((e) => e.text ?? '')].join('\n'))
    .join('\n');

describe('C04 Slack notifier: alarm cleared while the approval waits', () => {
  let capture: SlackCapture;
  beforeAll(async () => {
    capture = await startSlackCapture();
  });
  afterAll(async () => {
    await capture?.close();
  });
  beforeEach(() => {
    capture.apiCalls.length = 0;
  });
  const notifierOver = (threads: Pick<ApprovalStore, 'getThread' | 'putThread' | 'close' | 'get'>) =>
    createSlackNotifier({
      slack: createSlackApi({ token: 'xoxb-test', slackApiUrl: capture.apiUrl }),
      threads,
      channelFor: async () => 'C0OTHER',
      now: () => NOW,
    });

  it('C04 replies in the incident thread and annotates the pending approval with "alarm cleared", keeping its buttons and leaving it open', async () => {
    const approvals = await storeWithPendingApproval();

    await notifierOver(approvals).notify(clearedNotice);

    const posts = capture.callsTo('chat.postMessage');
    expect(posts).toHaveLength(1);
    expect(posts[0]?.args).toMatchObject({ channel: 'C0OPS', thread_ts: ROOT_TS });
    expect(String(posts[0]?.args.text)).toBe(`alarm-cleared: ${clearedNotice.text}`);

    const updates = capture.callsTo('chat.update');
    expect(updates).toHaveLength(1);
    expect(updates[0]?.args).toMatchObject({ channel: 'C0OPS', ts: ROOT_TS });
    expect(String(updates[0]?.args.text)).toContain('alarm cleared at 2026-01-02T11:10:00.000Z');
    expect(String(updates[0]?.args.text)).toContain('nothing to redrive');
    const blocks = updates[0]?.args.blocks as Array<Record<string, unknown>>;
    const actions = blocks.find((b) => b.type === 'actions') as {
      block_id: string;
      elements: Array<{ action_id: string; value: string }>;
    };
    expect(actions.block_id).toBe(APPROVAL_BLOCK_ID);
    expect(actions.elements.map((e) => [e.action_id, e.value])).toEqual([
      [APPROVE_ACTION_ID, APPROVAL],
      [REJECT_ACTION_ID, APPROVAL],
    ]);
    expect(JSON.stringify(blocks[0])).toContain('orders-dlq (alarm cleared)');
    // Nothing cancelled: the approval is still waiting for a click.
    expect(approvals.records.get(APPROVAL)).toMatchObject({ status: 'PENDING', closedReason: null });
  });

  it('C04 a decided approval keeps its "Approved by" text: only the thread gets the notice', async () => {
    const approvals = await storeWithPendingApproval();
    await approvals.claimDecision(APPROVAL, {
      decision: 'approved',
      by: approver,
      at: NOW - 60_000,
      reason: null,
    });

    await notifierOver(approvals).notify(clearedNotice);

    expect(capture.callsTo('chat.postMessage').map((c) => c.args.thread_ts)).toEqual([ROOT_TS]);
    expect(capture.callsTo('chat.update')).toEqual([]);
  });

  it('C04 a click landing between the read and the annotation gets its decided text back instead of the buttons', async () => {
    const approvals = await storeWithPendingApproval();
    let reads = 0;
    const racing = {
      ...approvals,
      async get(id: string) {
        const record = await approvals.get(id);
        reads += 1;
        // The approver clicks right after the notifier saw PENDING.
        if (reads === 1)
          await approvals.claimDecision(id, { decision: 'approved', by: approver, at: NOW, reason: null });
        return record;
      },
    };

    await notifierOver(racing).notify(clearedNotice);

    const updates = capture.callsTo('chat.update').map((c) => String(c.args.text));
    expect(updates).toHaveLength(2);
    expect(updates[0]).toContain('alarm cleared');
    expect(updates[1]).toBe(
      'Approved by alice at 2026-01-02T11:10:00Z. The sample redrive starts now; progress follows in this thread.',
    );
  });

  it('C04 a thread started by a notice (no approval) just gets the reply', async () => {
    const approvals = createInMemoryApprovalStore();
    await approvals.putThread(INCIDENT, { channel: 'C0OPS', ts: ROOT_TS }, 0);

    await notifierOver(approvals).notify(clearedNotice);

    expect(capture.callsTo('chat.postMessage').map((c) => [c.args.channel, c.args.thread_ts])).toEqual([
      ['C0OPS', ROOT_TS],
    ]);
    expect(capture.callsTo('chat.update')).toEqual([]);
  });
  it('C04 the annotated request keeps what request-approval posted: summary (42 messages, top cause), plan (sample 5, ramp 1 → 5 → 25), warnings, the note and both buttons with the approval id', async () => {
    const approvals = createInMemoryApprovalStore();
    const slack = createSlackApi({ token: 'xoxb-test', slackApiUrl: capture.apiUrl });
    const posted = await requestApproval(
      {
        plan: {
          incidentId: INCIDENT,
          dlqArn: DLQ_ARN,
          mode: 'redrive',
          destinationArn: null,
          sampleSize: 5,
          rampRates: [1, 5, 25],
          dwellSeconds: 120,
          discardPoison: false,
          requestedBy: 'triage',
        },
        preflight: {
          dlqDepth: 42,
          sourceArns: ['arn:aws:sqs:us-east-1:111122223333:orders'],
          fifo: false,
          earliestRetentionDeadline: NOW + 90 * 3_600_000,
          warnings: [],
        },
        taskToken: TOKEN,
      },
      {
        approvals,
        slack,
        incidentSummary: async () => incidentSummary,
        registration: async () => ({ slackChannel: 'C0OPS', approvers: ['U0APPROVER'] }),
        now: () => NOW - 2_100_000,
      },
    );
    const requestBlocks = capture.callsTo('chat.postMessage')[0]?.args.blocks as Block[];
    capture.apiCalls.length = 0;

    await notifierOver(approvals).notify(clearedNotice);

    const updates = capture.callsTo('chat.update');
    expect(updates).toHaveLength(1);
    expect(updates[0]?.args).toMatchObject({ channel: 'C0OPS', ts: posted.ts });
    const blocks = updates[0]?.args.blocks as Block[];
    const shown = textOf(blocks);
    // The summary and the plan the approver is asked to approve.
    expect(shown).toContain('*42 messages* in `orders-dlq` from `orders`');
    expect(shown).toContain('*37* × `PaymentGatewayTimeout` (transient)');
    expect(shown).toContain('Sample first: 5 messages');
    expect(shown).toContain('Ramp: 1 → 5 → 25 msg/s, 120 s per step');
    expect(shown).toContain('5 poison/permanent messages will be parked first');
    // Every section of the request is there unchanged; only the header says "alarm cleared".
    for (const block of requestBlocks.filter((b) => b.type === 'section'))
      expect(blocks).toContainEqual(block);
    expect(blocks[0]?.text?.text).toBe('Redrive approval: orders-dlq (alarm cleared)');
    // The note, just above the buttons.
    const actionsAt = blocks.findIndex((b) => b.type === 'actions');
    const note = blocks[actionsAt - 1];
    expect(note?.type).toBe('context');
    expect(note?.elements?.[0]?.text).toContain('alarm cleared at 2026-01-02T11:10:00.000Z');
    expect(note?.elements?.[0]?.text).toContain('before any redrive');
    expect(note?.elements?.[0]?.text).toContain('as posted at 2026-01-02T10:35:00Z');
    expect(String(updates[0]?.args.text)).toContain('Redrive approval for orders-dlq: 42 messages');
    expect(String(updates[0]?.args.text)).toContain('nothing to redrive');
    // One actions block, with both buttons carrying the same opaque approval id.
    expect(blocks.filter((b) => b.type === 'actions')).toHaveLength(1);
    expect(blocks[actionsAt]?.block_id).toBe(APPROVAL_BLOCK_ID);
    expect(blocks[actionsAt]?.elements?.map((e) => [e.action_id, e.value])).toEqual([
      [APPROVE_ACTION_ID, posted.approvalId],
      [REJECT_ACTION_ID, posted.approvalId],
    ]);
    expect(JSON.stringify(blocks)).not.toContain(TOKEN);
    expect(blocks.length).toBe(requestBlocks.length + 1);
    expect(approvals.records.get(posted.approvalId)).toMatchObject({ status: 'PENDING' });
  });

  it('C04 a record without a stored request (written before it was stored) still gets the fallback: header, note and buttons only', async () => {
    const approvals = await storeWithPendingApproval();
    expect(approvals.records.get(APPROVAL)?.requestMessage).toBeUndefined();

    await notifierOver(approvals).notify(clearedNotice);

    const blocks = capture.callsTo('chat.update')[0]?.args.blocks as Block[];
    expect(blocks.map((b) => b.type)).toEqual(['header', 'section', 'actions', 'context']);
    expect(blocks[1]?.text?.text).toContain('alarm cleared at 2026-01-02T11:10:00.000Z');
    expect(blocks[2]?.elements?.map((e) => e.value)).toEqual([APPROVAL, APPROVAL]);
  });

  it('C04 a stored request that is not valid JSON falls back instead of failing the notice', async () => {
    const approvals = createInMemoryApprovalStore();
    await approvals.create({ ...pendingApproval(), requestMessage: '{"text":"x","blocks":[' });
    await approvals.putThread(INCIDENT, { channel: 'C0OPS', ts: ROOT_TS, approvalId: APPROVAL }, 0, {
      overwrite: true,
    });

    await notifierOver(approvals).notify(clearedNotice);

    const blocks = capture.callsTo('chat.update')[0]?.args.blocks as Block[];
    expect(blocks.map((b) => b.type)).toEqual(['header', 'section', 'actions', 'context']);
  });
});
