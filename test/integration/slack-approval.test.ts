/**
 * The Slack approval path end to end on the local stack: the real request-approval and
 * slack-interaction handlers, approval records in DynamoDB Local, Slack replaced by the local
 * capture server (Web API calls and response_url posts).
 *
 * Step Functions' SendTaskSuccess and Lambda's async Invoke have no local stand-in: each goes to a
 * small in-process HTTP fake on a loopback port that records the calls (the SDK clients are real,
 * pointed there by AWS_ENDPOINT_URL_SFN / AWS_ENDPOINT_URL_LAMBDA).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { approvalIdForToken, createApprovalStore } from '#approval/approval-store.js';
import { createSlackApi } from '#approval/slack-client.js';
import { EXPIRED_TEXT } from '#approval/slack-messages.js';
import { createIncidentStore } from '#incident/incident-store.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import type { IncidentSummary } from '#inventory/model.js';
import { sleep } from '#platform/sleep.js';
import { signSlackRequest } from '../../functions/slack-interaction/slack-signature.js';
import { startSlackEndpoint } from '../../local/slack-endpoint.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { startAwsFake } from '../support/aws-fake.js';
import { lambdaContext as context } from '../support/redrive-fixtures.js';
import type { SlackCapture } from '../support/slack-capture.js';
import {
  type Handler,
  type SlackRig,
  signedInteraction,
  startSlackRig,
} from '../support/slack-interaction.js';

const SECRET = 'test-signing-secret-not-real-0001'; // the fake secret of cases C15/C16
const basePayload = JSON.parse(
  readFileSync(new URL('../../events/slack/request-approval-task-payload.json', import.meta.url), 'utf8'),
) as {
  plan: Record<string, unknown> & { dlqArn: string; incidentId: string };
  preflight: Record<string, unknown>;
  taskToken: string;
};
const clickTemplate = JSON.parse(
  readFileSync(new URL('../../events/slack/block-actions-approve.payload.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

let stack: LocalStack;
let rig: SlackRig;
let capture: SlackCapture;
let sfn: Awaited<ReturnType<typeof startAwsFake>>;
let lambda: SlackRig['lambda'];
let sfnError: string | null = null;
let requestApprovalHandler: Handler;
let interactionHandler: Handler;

const DLQ = basePayload.plan.dlqArn;
const HOUR = 3_600_000;

beforeAll(async () => {
  stack = await startLocalStack();
  sfn = await startAwsFake(() =>
    sfnError
      ? { status: 400, body: { __type: sfnError, message: 'Provided task does not exist anymore' } }
      : { status: 200, body: {} },
  );
  rig = await startSlackRig(SECRET, { AWS_ENDPOINT_URL_SFN: sfn.url });
  ({ capture, lambda } = rig);
  requestApprovalHandler = (await import('../../functions/request-approval/handler.js')).handler as Handler;
  interactionHandler = (await import('../../functions/slack-interaction/handler.js')).handler as Handler;

  await createQueueRegistry().putRegistration({
    dlqArn: DLQ,
    slackChannel: 'C0EXAMPLE',
    approvers: ['U0EXAMPLE1', 'U0EXAMPLE2'],
  });
  const now = Date.now();
  const summary: IncidentSummary = {
    messageCount: 42,
    countBySource: { 'arn:aws:sqs:us-east-1:123456789012:orders-queue': 42 },
    causes: [
      {
        fingerprint: 'f1',
        errorClass: 'TimeoutError',
        count: 30,
        classification: 'transient',
        exampleMessageId: 'm-1',
        exampleReason: 'upstream <payments> timed out after 3000 ms',
      },
      {
        fingerprint: 'f2',
        errorClass: 'ValidationError',
        count: 12,
        classification: 'permanent',
        exampleMessageId: 'm-2',
        exampleReason: 'orderId missing',
      },
    ],
    countByClassification: { transient: 30, permanent: 12, poison: 0, systemic: 0, unknown: 0 },
    oldestMessageAgeMs: 73 * HOUR,
    earliestRetentionDeadline: now + 23 * HOUR, // C10: a standard DLQ, 4 days retention, sent 73 h ago
    expiringWithin24h: 3,
    partial: false,
  };
  await createIncidentStore().putIncident({
    incidentId: basePayload.plan.incidentId,
    dlqArn: DLQ,
    dlqUrl: String(basePayload.plan.dlqUrl),
    alarmArn: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:orders-dlq-visible',
    alarmName: 'orders-dlq-visible',
    dedupeKey: 'k',
    stateTimestamp: '2026-01-02T10:35:00.000+0000',
    sourceArns: ['arn:aws:sqs:us-east-1:123456789012:orders-queue'],
    status: 'OPEN',
    summary,
    createdAt: new Date(now).toISOString(),
    updatedAt: new Date(now).toISOString(),
  });
});

afterAll(async () => {
  await rig?.close();
  sfn?.server.closeAllConnections();
  sfn?.server.close();
  await stack?.stop();
});

beforeEach(() => {
  sfnError = null;
});

/** Posts an approval request for a fresh task token through the real handler. */
async function requestFor(taskToken: string) {
  await requestApprovalHandler({ ...basePayload, taskToken }, context);
  return approvalIdForToken(taskToken);
}

/** A Function URL event of a click, signed now with the fake secret. */
function click(
  approvalId: string,
  user: { id: string; username: string },
  options: { actionId?: string; retry?: boolean; base64?: boolean } = {},
) {
  const payload = {
    ...clickTemplate,
    user: { id: user.id, username: user.username, team_id: 'T0EXAMPLE' },
    response_url: capture.responseUrl(approvalId),
    actions: [
      {
        type: 'button',
        action_id: options.actionId ?? 'approve_redrive',
        block_id: 'redrive_approval',
        value: approvalId,
      },
    ],
  };
  return signedInteraction(SECRET, payload, {
    retry: options.retry === true,
    base64: options.base64 !== false,
  });
}

/** Sends a click to the real handler, then runs what it async-invoked (as Lambda would). */
const clickAndRunFollowUps = (event: unknown) => rig.clickAndRunFollowUps(interactionHandler, event);

const updatesFor = (approvalId: string) =>
  capture.responses.filter((r) => r.id === approvalId).map((r) => r.body);
const sendTaskSuccessCalls = () => sfn.calls.filter((c) => c.target === 'AWSStepFunctions.SendTaskSuccess');

describe('request-approval against DynamoDB Local and the Slack capture', () => {
  it('posts one Block Kit request with the summary, C10 deadline warning and an opaque approval id; the token stays server-side', async () => {
    const token = 'token-request-1';
    const approvalId = await requestFor(token);
    const posts = capture.callsTo('chat.postMessage');
    const post = posts.at(-1)?.args as { channel: string; text: string; blocks: unknown[] };
    expect(post.channel).toBe('C0EXAMPLE');
    const rendered = JSON.stringify(post.blocks);
    expect(rendered).toContain('*42 messages* in `orders-dlq`');
    expect(rendered).toContain('TimeoutError');
    expect(rendered).toContain('upstream &lt;payments&gt; timed out');
    expect(rendered).toContain(':warning: < 24 h');
    expect(rendered).toContain('12 poison/permanent messages will be parked first');
    expect(rendered).toContain('5 → 50 → 200 msg/s');
    expect(rendered).toContain(`"value":"${approvalId}"`);
    expect(JSON.stringify(posts.at(-1)?.args)).not.toContain(token);

    const record = await createApprovalStore().get(approvalId);
    expect(record).toMatchObject({
      taskToken: token,
      status: 'PENDING',
      incidentId: basePayload.plan.incidentId,
      dlqArn: DLQ,
      channel: 'C0EXAMPLE',
      approvers: ['U0EXAMPLE1', 'U0EXAMPLE2'],
    });
    expect(record?.messageTs).toMatch(/^1767350100\.\d{6}$/);
    // C04: the posted request is kept (JSON) so an "alarm cleared" update can repeat it.
    expect(JSON.parse(record?.requestMessage ?? 'null')).toEqual({ text: post.text, blocks: post.blocks });
    expect(record?.requestMessage).not.toContain(token);
    const ttlLeft = (record?.expiresAt ?? 0) - Date.now() / 1000;
    expect(ttlLeft).toBeGreaterThan(3600 + 900 - 60);
    expect(ttlLeft).toBeLessThanOrEqual(3600 + 900 + 1);
    expect(await createApprovalStore().getThread(basePayload.plan.incidentId)).toEqual({
      channel: 'C0EXAMPLE',
      ts: record?.messageTs,
      approvalId,
    });
  });

  it('a Lambda retry with the same task token does not post a second message', async () => {
    const before = capture.callsTo('chat.postMessage').length;
    await requestFor('token-request-2');
    await requestFor('token-request-2');
    expect(capture.callsTo('chat.postMessage').length - before).toBe(1);
  });

  it('a registration without a Slack channel fails naming slackChannel and writes nothing', async () => {
    const dlqArn = 'arn:aws:sqs:us-east-1:123456789012:no-channel-dlq';
    const token = 'token-no-channel';
    const error = await requestApprovalHandler(
      { ...basePayload, plan: { ...basePayload.plan, dlqArn }, taskToken: token },
      context,
    ).catch((e: unknown) => e);
    expect((error as Error).name).toBe('Redrive.InvalidInput');
    expect((error as Error).message).toContain('slackChannel');
    expect(await createApprovalStore().get(approvalIdForToken(token))).toBeNull();
  });
});

describe('slack-interaction handler against DynamoDB Local (C16, C17)', () => {
  it('C16 first click: 200 with an empty body, one async self-invoke, then exactly one SendTaskSuccess', async () => {
    const approvalId = await requestFor('token-click-1');
    const sentBefore = sendTaskSuccessCalls().length;
    const invokesBefore = lambda.calls.length;
    const ack = await interactionHandler(
      click(approvalId, { id: 'U0EXAMPLE1', username: 'example.approver' }),
      context,
    );
    expect(ack).toEqual({ statusCode: 200, headers: {}, body: '' });
    expect(sendTaskSuccessCalls().length).toBe(sentBefore); // nothing sent before the ack
    const invokes = lambda.calls.slice(invokesBefore);
    expect(invokes).toHaveLength(1);
    expect(invokes[0]?.target).toBe('/2015-03-31/functions/slack-interaction/invocations');

    await interactionHandler(invokes[0]?.body, context);
    const sent = sendTaskSuccessCalls().slice(sentBefore);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.body.taskToken).toBe('token-click-1');
    expect(JSON.parse(String(sent[0]?.body.output))).toEqual({
      decision: 'approved',
      approvedBy: 'example.approver',
      reason: null,
    });
    expect((await createApprovalStore().get(approvalId))?.status).toBe('CLOSED');
    expect(updatesFor(approvalId).at(-1)).toMatchObject({ replace_original: true });
    expect(String(updatesFor(approvalId).at(-1)?.text)).toMatch(/^Approved by example\.approver/);
  });

  it('C16 a retry (x-slack-retry-num) and a second approver change nothing and say who approved', async () => {
    const approvalId = await requestFor('token-click-2');
    const sentBefore = sendTaskSuccessCalls().length;
    await clickAndRunFollowUps(click(approvalId, { id: 'U0EXAMPLE1', username: 'example.approver' }));
    const retry = await clickAndRunFollowUps(
      click(approvalId, { id: 'U0EXAMPLE1', username: 'example.approver' }, { retry: true }),
    );
    const second = await clickAndRunFollowUps(
      click(approvalId, { id: 'U0EXAMPLE2', username: 'second.approver' }),
    );
    expect(retry).toEqual({ statusCode: 200, headers: {}, body: '' });
    expect(second).toEqual({ statusCode: 200, headers: {}, body: '' });
    expect(sendTaskSuccessCalls().length - sentBefore).toBe(1);
    expect(updatesFor(approvalId).map((u) => u.text)).toEqual([
      expect.stringMatching(/^Approved by example\.approver/),
      'Already approved by example.approver.',
      'Already approved by example.approver.',
    ]);
  });

  it('C16 two approvers clicking at the same moment: the conditional write lets exactly one decide', async () => {
    const approvalId = await requestFor('token-race');
    const sentBefore = sendTaskSuccessCalls().length;
    const acks = await Promise.all([
      clickAndRunFollowUps(click(approvalId, { id: 'U0EXAMPLE1', username: 'example.approver' })),
      clickAndRunFollowUps(
        click(approvalId, { id: 'U0EXAMPLE2', username: 'second.approver' }, { actionId: 'reject_redrive' }),
      ),
    ]);
    expect(acks.map((a) => (a as { statusCode: number }).statusCode)).toEqual([200, 200]);
    expect(sendTaskSuccessCalls().length - sentBefore).toBe(1);
    const record = await createApprovalStore().get(approvalId);
    const output = JSON.parse(String(sendTaskSuccessCalls().at(-1)?.body.output)) as { approvedBy: string };
    expect(output.approvedBy).toBe(record?.decidedBy?.username);
  });

  it('C16 a stale but validly signed request answers 401 and records nothing', async () => {
    const approvalId = await requestFor('token-stale');
    const event = click(approvalId, { id: 'U0EXAMPLE1', username: 'example.approver' }, { base64: false });
    const stale = String(Math.floor(Date.now() / 1000) - 600);
    event.headers['x-slack-request-timestamp'] = stale;
    event.headers['x-slack-signature'] = signSlackRequest(SECRET, stale, event.body);
    const invokesBefore = lambda.calls.length;
    expect(await interactionHandler(event, context)).toMatchObject({ statusCode: 401, body: '' });
    expect(lambda.calls.length).toBe(invokesBefore);
    expect((await createApprovalStore().get(approvalId))?.status).toBe('PENDING');
  });

  it.each(['TaskTimedOut', 'TaskDoesNotExist', 'InvalidToken'])(
    'C17 Step Functions answers %s: Slack still gets 200, the message says expired, the record is closed, no retry',
    async (code) => {
      const approvalId = await requestFor(`token-closed-${code}`);
      sfnError = code;
      const sentBefore = sendTaskSuccessCalls().length;
      const ack = await clickAndRunFollowUps(
        click(approvalId, { id: 'U0EXAMPLE1', username: 'example.approver' }),
      );
      expect(ack).toEqual({ statusCode: 200, headers: {}, body: '' });
      expect(sendTaskSuccessCalls().length - sentBefore).toBe(1);
      const record = await createApprovalStore().get(approvalId);
      expect(record?.status).toBe('CLOSED');
      expect(record?.closedReason).toBe(
        {
          TaskTimedOut: 'task-timed-out',
          TaskDoesNotExist: 'task-does-not-exist',
          InvalidToken: 'invalid-token',
        }[code],
      );
      expect(updatesFor(approvalId).at(-1)).toMatchObject({ text: EXPIRED_TEXT, replace_original: true });
    },
  );
});

describe('local interactivity endpoint (HTTP, real core, DynamoDB Local)', () => {
  it('C16 with SendTaskSuccess taking 2.5 s, the 200 empty-body ack arrives before the callback finishes', async () => {
    const approvalId = await requestFor('token-slow');
    const events: string[] = [];
    // In-process fake of SendTaskSuccess with the case's simulated latency (no local Step Functions).
    const endpoint = await startSlackEndpoint({
      signingSecret: SECRET,
      approvals: createApprovalStore(),
      slack: createSlackApi({
        token: 'xoxb-test',
        slackApiUrl: capture.apiUrl,
        allowedResponseUrlPrefixes: [capture.url],
      }),
      callbacks: {
        sendTaskSuccess: async (token, output) => {
          events.push(`send-start ${token}`);
          await sleep(2500);
          events.push(`send-done ${output.decision}`);
        },
      },
    });
    try {
      const event = click(approvalId, { id: 'U0EXAMPLE1', username: 'example.approver' }, { base64: false });
      const response = await fetch(endpoint.url, {
        method: 'POST',
        headers: event.headers,
        body: event.body,
      });
      events.push(`ack ${response.status} "${await response.text()}"`);
      await endpoint.settled();
      // The follow-up may start while the client reads the ack; it cannot finish before it.
      expect(events.indexOf('ack 200 ""')).toBeGreaterThanOrEqual(0);
      expect(events.indexOf('ack 200 ""')).toBeLessThan(events.indexOf('send-done approved'));
      expect(events.filter((e) => e.startsWith('send-start'))).toEqual(['send-start token-slow']);
      expect(endpoint.followUpResults).toEqual(['sent']);
    } finally {
      await endpoint.close();
    }
  });
});
