/**
 * The Slack interaction endpoint against forged, tampered, malformed and racing requests: every
 * refusal leaves the approval record as it was and schedules no follow-up.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { ApprovalRecord } from '#approval/approval-store.js';
import {
  acknowledgeInteraction,
  type FollowUp,
  type FunctionUrlRequest,
  runFollowUp,
} from '../../functions/slack-interaction/interaction.js';
import { signSlackRequest } from '../../functions/slack-interaction/slack-signature.js';
import type { ApprovalOutput } from '../../functions/slack-interaction/task-callbacks.js';
import { pendingApprovalRecord } from '../support/approval-record.js';
import { createInMemoryApprovalStore } from '../support/in-memory-approval-store.js';

const SECRET = 'test-signing-secret';
const NOW_S = 1_767_350_400;
const APPROVAL_ID = 'apr-0123456789abcdef0123456789abcdef';

function record(): ApprovalRecord {
  return pendingApprovalRecord({
    approvalId: APPROVAL_ID,
    taskToken: 'token-1',
    incidentId: 'inc-1',
    dlqArn: 'arn:aws:sqs:us-east-1:111122223333:orders-dlq',
    channel: 'C0EXAMPLE',
    messageTs: '1767350100.000100',
    approvers: ['U1', 'U2'],
    createdAt: NOW_S * 1000 - 60_000,
    expiresAt: NOW_S + 3600,
  });
}

function payload(user: string, actionId: string, value = APPROVAL_ID): Record<string, unknown> {
  return {
    type: 'block_actions',
    user: { id: user, username: user.toLowerCase() },
    response_url: 'https://hooks.slack.com/actions/T1/1/abc',
    actions: [{ action_id: actionId, block_id: 'redrive_approval', value }],
  };
}

function form(p: unknown): string {
  return `payload=${encodeURIComponent(JSON.stringify(p))}`;
}

function signed(body: string, ts = NOW_S - 1, headers: Record<string, string> = {}): FunctionUrlRequest {
  return {
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': String(ts),
      'x-slack-signature': signSlackRequest(SECRET, ts, body),
      ...headers,
    },
    body,
    isBase64Encoded: false,
  };
}

function harness() {
  const approvals = createInMemoryApprovalStore();
  const deferred: FollowUp[] = [];
  const sent: ApprovalOutput[] = [];
  const ack = (request: FunctionUrlRequest) =>
    acknowledgeInteraction(request, {
      allowedResponseUrlPrefixes: ['https://hooks.slack.com/'],
      signingSecret: SECRET,
      approvals,
      defer: async (f) => {
        deferred.push(f);
      },
      now: () => NOW_S * 1000,
    });
  const drain = async () => {
    while (deferred.length > 0)
      await runFollowUp(deferred.shift() as FollowUp, {
        approvals,
        slack: { respond: async () => undefined },
        callbacks: {
          async sendTaskSuccess(_token, output) {
            sent.push(output);
          },
        },
        now: () => NOW_S * 1000 + 500,
      });
  };
  return { approvals, deferred, sent, ack, drain };
}

describe('Slack interaction under hostile requests', () => {
  let h: ReturnType<typeof harness>;
  beforeEach(async () => {
    h = harness();
    await h.approvals.create(record());
  });

  const unchanged = async () => {
    expect(await h.approvals.get(APPROVAL_ID)).toEqual(record());
    expect(h.deferred).toEqual([]);
  };

  it('C15 a body tampered after signing (approve turned into reject) answers 401 and changes nothing', async () => {
    const request = signed(form(payload('U1', 'approve_redrive')));
    const tampered = { ...request, body: form(payload('U1', 'reject_redrive')) };
    expect((await h.ack(tampered)).statusCode).toBe(401);
    await unchanged();
  });

  it('C16 a timestamp 10 minutes in the future answers 401 even though the signature matches it', async () => {
    const response = await h.ack(signed(form(payload('U1', 'approve_redrive')), NOW_S + 600));
    expect(response).toEqual({ statusCode: 401, headers: {}, body: '' });
    await unchanged();
  });

  it('C15 forged, missing, duplicated (comma-joined) or non-v0 signatures answer 401 and change nothing', async () => {
    const body = form(payload('U1', 'approve_redrive'));
    const good = signed(body).headers['x-slack-signature'] as string;
    const variants: Record<string, string>[] = [
      { 'x-slack-signature': `v0=${'0'.repeat(64)}` },
      { 'x-slack-signature': '' },
      { 'x-slack-signature': `${good},${good}` },
      { 'x-slack-signature': good.replace('v0=', 'v1=') },
      { 'x-slack-signature': good.toUpperCase() },
      { 'x-slack-request-timestamp': `${NOW_S - 1}.0` },
      { 'x-slack-request-timestamp': '' },
    ];
    for (const headers of variants) {
      const response = await h.ack(signed(body, NOW_S - 1, headers));
      expect(response.statusCode, JSON.stringify(headers)).toBe(401);
    }
    const signedWithOtherSecret = {
      ...signed(body),
      headers: {
        'x-slack-request-timestamp': String(NOW_S - 1),
        'x-slack-signature': signSlackRequest('another-secret', NOW_S - 1, body),
      },
    };
    expect((await h.ack(signedWithOtherSecret)).statusCode).toBe(401);
    await unchanged();
  });

  it('C15 the signature is checked over the transport bytes: a base64 body signed as its base64 text answers 401', async () => {
    const body = form(payload('U1', 'approve_redrive'));
    const b64 = Buffer.from(body).toString('base64');
    const request = { ...signed(b64), body: b64, isBase64Encoded: true };
    expect((await h.ack(request)).statusCode).toBe(401);
    await unchanged();
  });

  it('signed but malformed bodies answer 400 naming the field, and change nothing', async () => {
    const cases: Array<[string, string]> = [
      ['', 'payload: is required'],
      ['payload=%7Bnot-json', 'payload: must be JSON'],
      [form({ ...payload('U1', 'approve_redrive'), type: 'view_submission' }), 'payload.type'],
      [form(payload('U1', 'delete_everything')), 'payload.actions.0.action_id'],
      [form(payload('U1', 'approve_redrive', 'x'.repeat(1_000_000))), 'payload.actions.0.value'],
      [form({ ...payload('U1', 'approve_redrive'), user: null }), 'payload.user'],
      [
        form({ ...payload('U1', 'approve_redrive'), user: { id: 'U1', username: 'u'.repeat(500_000) } }),
        'payload.user.username',
      ],
      [form(payload('U'.repeat(100_000), 'approve_redrive')), 'payload.user.id'],
      [form({ ...payload('U1', 'approve_redrive'), actions: [] }), 'payload.actions'],
      [
        form({ ...payload('U1', 'approve_redrive'), response_url: 'javascript:alert(1)' }),
        'payload.response_url',
      ],
    ];
    for (const [body, field] of cases) {
      const response = await h.ack(signed(body));
      expect([response.statusCode, response.body.includes(field)], field).toEqual([400, true]);
    }
    await unchanged();
  });

  it('an approval id that does not exist schedules only an "expired" reply and no callback', async () => {
    await h.ack(signed(form(payload('U1', 'approve_redrive', 'apr-ffffffffffffffffffffffffffffffff'))));
    expect(h.deferred.map((f) => f.kind)).toEqual(['reply']);
    await h.drain();
    expect(h.sent).toEqual([]);
    expect((await h.approvals.get(APPROVAL_ID))?.status).toBe('PENDING');
  });

  it('C16 two approvers clicking Approve and Reject at the same moment: exactly one decision and one SendTaskSuccess, matching the winner', async () => {
    const responses = await Promise.all([
      h.ack(signed(form(payload('U1', 'approve_redrive')))),
      h.ack(signed(form(payload('U2', 'reject_redrive')))),
    ]);
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200]);
    expect(h.deferred.filter((f) => f.kind === 'callback')).toHaveLength(1);
    await h.drain();
    const decided = await h.approvals.get(APPROVAL_ID);
    expect(h.sent).toHaveLength(1);
    expect(h.sent[0]?.decision).toBe(decided?.decision);
    expect(h.sent[0]?.approvedBy).toBe(decided?.decidedBy?.username);
    expect(decided?.status).toBe('CLOSED');
  });

  it('a signed click whose response_url is off the allow-list answers 400 naming payload.response_url, with no decision taken', async () => {
    for (const url of [
      'https://evil.example/hooks',
      'http://hooks.slack.com/actions/T1/1/abc',
      'https://hooks.slack.com.evil.example/x',
    ]) {
      const response = await h.ack(signed(form({ ...payload('U1', 'approve_redrive'), response_url: url })));
      expect([response.statusCode, response.body.includes('payload.response_url')], url).toEqual([400, true]);
    }
    await unchanged();
  });
});
