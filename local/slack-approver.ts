/**
 * `npm start -- --approve-via slack`: the approval goes through the real Slack path, locally.
 *
 * 1. The real request-approval core posts the Block Kit request to a local Slack stand-in (the
 *    capture server from test/support) and stores the task token in the approval record
 *    (DynamoDB Local).
 * 2. This approver then "clicks" Approve (or Reject) as a local user: it builds a `block_actions`
 *    payload, signs it with a local signing secret (`v0`, exactly as Slack does) and POSTs it to
 *    the local interactivity endpoint ({@link startSlackEndpoint}).
 * 3. The endpoint runs the real interaction core; its SendTaskSuccess port resolves the runner's
 *    pending task token, and the `response_url` update lands in the stand-in.
 *
 * Importing this module registers the approver under the name `slack` (local/approver.ts).
 * When the queue registration lists no approvers, the local user is made the only approver (a
 * local run has no Slack workspace to take user ids from); any listed approver's id is used as is.
 *
 * @see https://api.slack.com/interactivity/handling#payloads
 */
import { randomBytes } from 'node:crypto';
import { createApprovalStore } from '#approval/approval-store.js';
import { createSlackApi } from '#approval/slack-client.js';
import { APPROVAL_BLOCK_ID, APPROVE_ACTION_ID, REJECT_ACTION_ID } from '#approval/slack-messages.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { parseOrThrow } from '#platform/middleware.js';
import { sleep } from '#platform/sleep.js';
import { createRequestApprovalDeps } from '../functions/request-approval/deps.js';
import { RequestApprovalInput, requestApproval } from '../functions/request-approval/request-approval.js';
import { signSlackRequest } from '../functions/slack-interaction/slack-signature.js';
import { asTaskClosed } from '../functions/slack-interaction/task-callbacks.js';
import { type SlackCapture, startSlackCapture } from '../test/support/slack-capture.js';
import { type Approver, registerApprover, registeredApprovers } from './approver.js';
import { type SlackEndpoint, startSlackEndpoint } from './slack-endpoint.js';
import type { TaskTokenCallbacks } from './task-tokens.js';

/** Options of {@link slackApprover}. */
export interface SlackApproverOptions {
  /** The button the local user clicks. @default 'approved' */
  decision?: 'approved' | 'rejected';
  /** Slack user id of the local user. @default 'ULOCALUSER' */
  userId?: string;
  /** @default process.env.USER ?? 'local-operator' */
  username?: string;
  /** @default process.env.SLACK_SIGNING_SECRET ?? a random secret for this process */
  signingSecret?: string;
  /** Where the request and the outcome are printed. @default process.stdout */
  output?: NodeJS.WritableStream;
  /**
   * Waits this long before clicking, milliseconds (a late click after the state's timeout).
   * @default 0
   */
  clickAfterMs?: number;
}

/** What the last run did (for tests and the demo's report). */
export interface SlackApprovalTrace {
  approvalId: string;
  channel: string;
  ts: string;
  /** HTTP status of the signed click. */
  clickStatus: number;
  /** Text of the `response_url` update (e.g. "Approved by alice at ..."). */
  update: string | null;
}

/** An {@link Approver} that goes through the real Slack request and interaction path locally. */
export function slackApprover(options: SlackApproverOptions = {}): Approver & {
  readonly traces: SlackApprovalTrace[];
  close(): Promise<void>;
} {
  const decision = options.decision ?? 'approved';
  const userId = options.userId ?? 'ULOCALUSER';
  const username = options.username ?? process.env.USER ?? 'local-operator';
  const signingSecret =
    options.signingSecret ?? process.env.SLACK_SIGNING_SECRET ?? randomBytes(16).toString('hex');
  const output = options.output ?? process.stdout;
  const traces: SlackApprovalTrace[] = [];
  let started: Promise<{ capture: SlackCapture; endpoint: SlackEndpoint }> | undefined;

  const start = (callbacks: TaskTokenCallbacks) => {
    started ??= (async () => {
      const capture = await startSlackCapture({ unref: true });
      const slack = createSlackApi({
        token: 'xoxb-local',
        slackApiUrl: capture.apiUrl,
        allowedResponseUrlPrefixes: [capture.url],
      });
      const endpoint = await startSlackEndpoint({
        signingSecret,
        approvals: createApprovalStore(),
        slack,
        callbacks: {
          // The local token registry throws the API's error names; map them like the SDK adapter.
          sendTaskSuccess: (token, out) =>
            callbacks.sendTaskSuccess(token, out).catch((error: unknown) => {
              throw asTaskClosed(error);
            }),
        },
      });
      return { capture, endpoint };
    })();
    return started;
  };

  return {
    name: 'slack',
    traces,
    async requestApproval(request, callbacks) {
      const { capture, endpoint } = await start(callbacks);
      const input = parseOrThrow(
        RequestApprovalInput,
        {
          ...(request.payload as Record<string, unknown>),
          taskToken: request.taskToken,
          ...(request.timeoutSeconds === null ? {} : { timeoutSeconds: request.timeoutSeconds }),
        },
        'approval request',
      );
      const registry = createQueueRegistry();
      const posted = await requestApproval(
        input,
        await createRequestApprovalDeps({
          overrides: {
            slack: createSlackApi({ token: 'xoxb-local', slackApiUrl: capture.apiUrl }),
            async registration(dlqArn) {
              const registration = await registry.getRegistration(dlqArn);
              return registration.approvers.length > 0
                ? registration
                : { ...registration, approvers: [userId] };
            },
            defaultChannel: 'C0LOCAL',
          },
        }),
      );
      const message = capture.callsTo('chat.postMessage').at(-1)?.args;
      output.write(
        `Slack approval request posted to ${posted.channel} (ts ${posted.ts}): ${String(message?.text)}\n`,
      );

      if (options.clickAfterMs) await sleep(options.clickAfterMs);
      const actionTs = (Date.now() / 1000).toFixed(6);
      const payload = {
        type: 'block_actions',
        user: { id: userId, username, name: username, team_id: 'TLOCAL' },
        team: { id: 'TLOCAL', domain: 'local' },
        channel: { id: posted.channel, name: 'local' },
        container: {
          type: 'message',
          message_ts: posted.ts,
          channel_id: posted.channel,
          is_ephemeral: false,
        },
        response_url: capture.responseUrl(posted.approvalId),
        message: { ts: posted.ts, text: String(message?.text ?? '') },
        actions: [
          {
            type: 'button',
            action_id: decision === 'approved' ? APPROVE_ACTION_ID : REJECT_ACTION_ID,
            block_id: APPROVAL_BLOCK_ID,
            value: posted.approvalId,
            action_ts: actionTs,
          },
        ],
      };
      const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
      const timestamp = String(Math.floor(Date.now() / 1000));
      const response = await fetch(endpoint.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-slack-request-timestamp': timestamp,
          'x-slack-signature': signSlackRequest(signingSecret, timestamp, body),
        },
        body,
      });
      await endpoint.settled();
      const update = capture.responses.filter((r) => r.id === posted.approvalId).at(-1)?.body.text;
      traces.push({
        approvalId: posted.approvalId,
        channel: posted.channel,
        ts: posted.ts,
        clickStatus: response.status,
        update: typeof update === 'string' ? update : null,
      });
      output.write(
        `Slack click by ${username} (${userId}): HTTP ${response.status}; ${update ?? 'no update'}\n`,
      );
    },
    async close() {
      if (!started) return;
      const { capture, endpoint } = await started;
      await endpoint.close();
      await capture.close();
    },
  };
}

if (!registeredApprovers().includes('slack')) {
  registerApprover('slack', () => slackApprover());
}
