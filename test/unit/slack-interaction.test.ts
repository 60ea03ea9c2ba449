import { readFileSync } from 'node:fs';
import type { SFNClient } from '@aws-sdk/client-sfn';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ApprovalRecord } from '#approval/approval-store.js';
import { EXPIRED_TEXT, NOT_APPROVER_TEXT } from '#approval/slack-messages.js';
import type { ResponseUrlMessage } from '#approval/slack-response-url.js';
import {
  acknowledgeInteraction,
  CALLBACK_LEASE_MS,
  type FollowUp,
  type FunctionUrlRequest,
  runFollowUp,
} from '../../functions/slack-interaction/interaction.js';
import { signSlackRequest } from '../../functions/slack-interaction/slack-signature.js';
import {
  type ApprovalOutput,
  createTaskCallbacks,
  type TaskCallbacks,
} from '../../functions/slack-interaction/task-callbacks.js';
import { pendingApprovalRecord } from '../support/approval-record.js';
import { createInMemoryApprovalStore } from '../support/in-memory-approval-store.js';

const caseFile = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../../shared/cases/${name}`, import.meta.url), 'utf8')) as {
    input: Record<string, unknown>;
  };
const c16 = caseFile('C16-replay-window-retries-double-clicks-3-second-ack-r.json').input as {
  signing_secret: string;
  now_epoch_s: number;
  raw_body: string;
  requests: { name: string; headers?: Record<string, string> }[];
};
const functionUrlEvent = JSON.parse(
  readFileSync(new URL('../../events/slack/function-url-block-actions-base64.json', import.meta.url), 'utf8'),
) as FunctionUrlRequest;
const payloadTemplate = JSON.parse(
  readFileSync(new URL('../../events/slack/block-actions-approve.payload.json', import.meta.url), 'utf8'),
) as Record<string, unknown> & { user: Record<string, string>; actions: Record<string, string>[] };

const APPROVAL_ID = 'approval#orders-dlq#2026-01-02T10:35:00Z';
const NOW_MS = c16.now_epoch_s * 1000;
const headersOf = (name: string) => c16.requests.find((r) => r.name === name)?.headers ?? {};

/** A body like the case's, for another user / action, signed with the case's fake secret. */
function signedRequest(
  overrides: { user?: { id: string; username: string }; actionId?: string; responseUrl?: string },
  ts = c16.now_epoch_s - 2,
): FunctionUrlRequest {
  const payload = structuredClone(payloadTemplate);
  if (overrides.user) payload.user = { ...payload.user, ...overrides.user };
  if (overrides.actionId) (payload.actions[0] as Record<string, string>).action_id = overrides.actionId;
  if (overrides.responseUrl) payload.response_url = overrides.responseUrl;
  const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
  return {
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': String(ts),
      'x-slack-signature': signSlackRequest(c16.signing_secret, ts, body),
    },
    body,
    isBase64Encoded: false,
  };
}

function pendingRecord(overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return pendingApprovalRecord(
    {
      approvalId: APPROVAL_ID,
      taskToken: 'AQCEAAAAKgAAAA-example-task-token',
      incidentId: 'orders-dlq#2026-01-02T10:35:00Z',
      dlqArn: 'arn:aws:sqs:us-east-1:111122223333:orders-dlq',
      channel: 'C0EXAMPLE',
      messageTs: '1767350100.000100',
      approvers: ['U0EXAMPLE1', 'U0EXAMPLE2'],
      createdAt: NOW_MS - 300_000,
      expiresAt: c16.now_epoch_s + 3600,
    },
    overrides,
  );
}

function harness(callbacks?: TaskCallbacks) {
  const approvals = createInMemoryApprovalStore();
  const deferred: FollowUp[] = [];
  const responses: { url: string; message: ResponseUrlMessage }[] = [];
  const sent: { token: string; output: ApprovalOutput }[] = [];
  const recording: TaskCallbacks = callbacks ?? {
    async sendTaskSuccess(token, output) {
      sent.push({ token, output });
    },
  };
  const ackDeps = {
    signingSecret: c16.signing_secret,
    approvals,
    defer: async (f: FollowUp) => {
      deferred.push(f);
    },
    now: () => NOW_MS,
  };
  const followUpDeps = {
    approvals,
    slack: {
      respond: async (url: string, message: ResponseUrlMessage) => {
        responses.push({ url, message });
      },
    },
    callbacks: recording,
    now: () => NOW_MS + 1000,
  };
  /** Runs what the ack deferred, in order (in Lambda: the async self-invocation). */
  const drain = async () => {
    const results: string[] = [];
    while (deferred.length > 0) results.push(await runFollowUp(deferred.shift() as FollowUp, followUpDeps));
    return results;
  };
  return { approvals, deferred, responses, sent, ackDeps, followUpDeps, drain };
}

const withHeaders = (headers: Record<string, string>): FunctionUrlRequest => ({
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  body: c16.raw_body,
  isBase64Encoded: false,
});

describe('Slack interaction: replay window, retries, double clicks (C16)', () => {
  let h: ReturnType<typeof harness>;
  beforeEach(async () => {
    h = harness();
    await h.approvals.create(pendingRecord());
  });

  it('C16 stale_but_validly_signed answers 401 and records nothing', async () => {
    const res = await acknowledgeInteraction(withHeaders(headersOf('stale_but_validly_signed')), h.ackDeps);
    expect(res.statusCode).toBe(401);
    expect(h.deferred).toHaveLength(0);
    expect((await h.approvals.get(APPROVAL_ID))?.status).toBe('PENDING');
  });

  it('C16 first_click answers 200 with an empty body before any Step Functions call, then sends exactly one SendTaskSuccess', async () => {
    const res = await acknowledgeInteraction(withHeaders(headersOf('first_click')), h.ackDeps);
    expect(res).toEqual({ statusCode: 200, headers: {}, body: '' });
    expect(h.sent).toHaveLength(0); // the callback waits for the deferred part
    expect((await h.approvals.get(APPROVAL_ID))?.status).toBe('DECIDED');

    expect(await h.drain()).toEqual(['sent']);
    expect(h.sent).toEqual([
      {
        token: 'AQCEAAAAKgAAAA-example-task-token',
        output: { decision: 'approved', approvedBy: 'example.approver', reason: null },
      },
    ]);
    const record = await h.approvals.get(APPROVAL_ID);
    expect(record?.status).toBe('CLOSED');
    expect(record?.closedReason).toBe('callback-sent');
    expect(h.responses).toHaveLength(1);
    expect(h.responses[0]?.url).toBe(
      'https://hooks.slack.com/actions/T0EXAMPLE/0000000000/EXAMPLEEXAMPLEEXAMPLE',
    );
    expect(h.responses[0]?.message.replace_original).toBe(true);
    expect(h.responses[0]?.message.text).toMatch(/^Approved by example\.approver/);
  });

  it('C16 the base64 Function URL event of the first click is acknowledged the same way', async () => {
    const res = await acknowledgeInteraction(functionUrlEvent, h.ackDeps);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    expect(h.deferred).toEqual([
      {
        kind: 'callback',
        approvalId: APPROVAL_ID,
        responseUrl: 'https://hooks.slack.com/actions/T0EXAMPLE/0000000000/EXAMPLEEXAMPLEEXAMPLE',
      },
    ]);
  });

  it('C16 retry_of_first (x-slack-retry-num 1) answers 200, sends no second SendTaskSuccess and says who approved', async () => {
    await acknowledgeInteraction(withHeaders(headersOf('first_click')), h.ackDeps);
    await h.drain();
    const res = await acknowledgeInteraction(withHeaders(headersOf('retry_of_first')), h.ackDeps);
    expect(res).toEqual({ statusCode: 200, headers: {}, body: '' });
    expect(await h.drain()).toEqual(['replied']);
    expect(h.sent).toHaveLength(1);
    expect(h.responses.at(-1)?.message).toMatchObject({
      text: 'Already approved by example.approver.',
      replace_original: true,
    });
  });

  it('C16 a retry that arrives before the first follow-up ran still sends only one SendTaskSuccess', async () => {
    await acknowledgeInteraction(withHeaders(headersOf('first_click')), h.ackDeps);
    await acknowledgeInteraction(withHeaders(headersOf('retry_of_first')), h.ackDeps);
    expect(await h.drain()).toEqual(['sent', 'replied']);
    expect(h.sent).toHaveLength(1);
  });

  it('C16 second_approver_click (U0EXAMPLE2, re-signed) answers 200 and changes nothing', async () => {
    await acknowledgeInteraction(withHeaders(headersOf('first_click')), h.ackDeps);
    await h.drain();
    const second = signedRequest({ user: { id: 'U0EXAMPLE2', username: 'second.approver' } });
    const res = await acknowledgeInteraction(second, h.ackDeps);
    expect(res.statusCode).toBe(200);
    await h.drain();
    expect(h.sent).toHaveLength(1);
    const record = await h.approvals.get(APPROVAL_ID);
    expect(record?.decidedBy).toEqual({ id: 'U0EXAMPLE1', username: 'example.approver' });
    expect(h.responses.at(-1)?.message.text).toBe('Already approved by example.approver.');
  });

  it('C15 a missing signature header answers 401 and sends no SendTaskSuccess', async () => {
    const res = await acknowledgeInteraction(
      withHeaders({ 'x-slack-request-timestamp': '1767350395' }),
      h.ackDeps,
    );
    expect(res.statusCode).toBe(401);
    await h.drain();
    expect(h.sent).toHaveLength(0);
  });

  it('a user who is not an approver gets an ephemeral "not an approver" and no Step Functions call', async () => {
    const res = await acknowledgeInteraction(
      signedRequest({ user: { id: 'U0OUTSIDER', username: 'outsider' } }),
      h.ackDeps,
    );
    expect(res.statusCode).toBe(200);
    await h.drain();
    expect(h.sent).toHaveLength(0);
    expect(h.responses[0]?.message).toMatchObject({
      text: NOT_APPROVER_TEXT,
      response_type: 'ephemeral',
      replace_original: false,
    });
    expect((await h.approvals.get(APPROVAL_ID))?.status).toBe('PENDING');
  });

  it('the Reject button sends decision rejected with the rejecting user and a reason', async () => {
    await acknowledgeInteraction(signedRequest({ actionId: 'reject_redrive' }), h.ackDeps);
    await h.drain();
    expect(h.sent[0]?.output).toEqual({
      decision: 'rejected',
      approvedBy: 'example.approver',
      reason: 'rejected in Slack by example.approver',
    });
    expect(h.responses[0]?.message.text).toMatch(/^Rejected by example\.approver/);
  });

  it('a signed payload with an unknown action answers 400 naming the field and records nothing', async () => {
    const res = await acknowledgeInteraction(signedRequest({ actionId: 'delete_everything' }), h.ackDeps);
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatch(/payload\.actions\.0\.action_id/);
    expect(h.deferred).toHaveLength(0);
    expect((await h.approvals.get(APPROVAL_ID))?.status).toBe('PENDING');
  });

  it('an unknown approval id (record expired by TTL) edits the message to expired and sends nothing', async () => {
    await h.approvals.records.delete(APPROVAL_ID);
    await acknowledgeInteraction(withHeaders(headersOf('first_click')), h.ackDeps);
    await h.drain();
    expect(h.sent).toHaveLength(0);
    expect(h.responses[0]?.message.text).toBe(EXPIRED_TEXT);
  });

  it('a follow-up delivered twice (async invoke retry) sends SendTaskSuccess once', async () => {
    await acknowledgeInteraction(withHeaders(headersOf('first_click')), h.ackDeps);
    const followUp = h.deferred[0] as FollowUp;
    expect(await runFollowUp(followUp, h.followUpDeps)).toBe('sent');
    expect(await runFollowUp(followUp, h.followUpDeps)).toBe('skipped');
    expect(h.sent).toHaveLength(1);
  });

  it('when the follow-up cannot be scheduled the claim is released so the user can click again', async () => {
    const failing = { ...h.ackDeps, defer: async () => Promise.reject(new Error('Lambda unavailable')) };
    await expect(acknowledgeInteraction(withHeaders(headersOf('first_click')), failing)).rejects.toThrow(
      'Lambda unavailable',
    );
    expect((await h.approvals.get(APPROVAL_ID))?.status).toBe('PENDING');
  });
});

describe('Slack interaction: closed task tokens (C17)', () => {
  // A client mock covers this rare error path (the local task-token stand-in covers it end to end).
  const sfnFailingWith = (name: string, calls: unknown[]) =>
    ({
      send: async (command: unknown) => {
        calls.push(command);
        throw Object.assign(new Error('Provided task does not exist anymore'), {
          name,
          $metadata: { httpStatusCode: 400 },
        });
      },
    }) as unknown as SFNClient;

  it.each([
    ['TaskTimedOut', 'task-timed-out'],
    ['TaskDoesNotExist', 'task-does-not-exist'],
    ['InvalidToken', 'invalid-token'],
  ])(
    'C17 %s: answers Slack 200, edits the message to expired, closes the record, no retry',
    async (code, reason) => {
      const calls: unknown[] = [];
      const h = harness(createTaskCallbacks(sfnFailingWith(code, calls)));
      await h.approvals.create(pendingRecord());
      const res = await acknowledgeInteraction(withHeaders(headersOf('first_click')), h.ackDeps);
      expect(res).toEqual({ statusCode: 200, headers: {}, body: '' });
      expect(await h.drain()).toEqual(['closed']);
      expect(calls).toHaveLength(1); // one SendTaskSuccess, not retried; nothing else called
      const record = await h.approvals.get(APPROVAL_ID);
      expect(record?.status).toBe('CLOSED');
      expect(record?.closedReason).toBe(reason);
      expect(h.responses).toEqual([
        {
          url: 'https://hooks.slack.com/actions/T0EXAMPLE/0000000000/EXAMPLEEXAMPLEEXAMPLE',
          message: expect.objectContaining({ text: EXPIRED_TEXT, replace_original: true }),
        },
      ]);
      // A later click on the closed approval says expired too, without another call.
      await acknowledgeInteraction(withHeaders(headersOf('retry_of_first')), h.ackDeps);
      await h.drain();
      expect(calls).toHaveLength(1);
      expect(h.responses.at(-1)?.message.text).toBe(EXPIRED_TEXT);
    },
  );

  it('C17 an SDK error other than a closed task is rethrown; the retry after the lease sends once', async () => {
    let attempts = 0;
    const h = harness({
      sendTaskSuccess: async () => {
        attempts += 1;
        if (attempts === 1) {
          throw Object.assign(new Error('Rate exceeded'), {
            name: 'ThrottlingException',
            $metadata: { httpStatusCode: 400 },
          });
        }
      },
    });
    await h.approvals.create(pendingRecord());
    await acknowledgeInteraction(withHeaders(headersOf('first_click')), h.ackDeps);
    const followUp = h.deferred[0] as FollowUp;
    await expect(runFollowUp(followUp, h.followUpDeps)).rejects.toThrow('Rate exceeded');
    expect((await h.approvals.get(APPROVAL_ID))?.status).toBe('SENDING');
    // A retry inside the lease sends nothing; one after it takes over and sends.
    expect(await runFollowUp(followUp, h.followUpDeps)).toBe('skipped');
    const later = { ...h.followUpDeps, now: () => NOW_MS + 1000 + CALLBACK_LEASE_MS + 1 };
    expect(await runFollowUp(followUp, later)).toBe('sent');
    expect(attempts).toBe(2);
    expect((await h.approvals.get(APPROVAL_ID))?.status).toBe('CLOSED');
  });

  it('C16 two deliveries of the same follow-up running at once send SendTaskSuccess once', async () => {
    const h = harness();
    await h.approvals.create(pendingRecord());
    await acknowledgeInteraction(withHeaders(headersOf('first_click')), h.ackDeps);
    const followUp = h.deferred[0] as FollowUp;
    const results = await Promise.all([
      runFollowUp(followUp, h.followUpDeps),
      runFollowUp(followUp, h.followUpDeps),
    ]);
    expect(results.sort()).toEqual(['sent', 'skipped']);
    expect(h.sent).toHaveLength(1);
    expect(h.responses).toHaveLength(1);
  });
});
