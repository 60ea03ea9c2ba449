/**
 * The Slack port: post and update messages through the Slack Web API (`chat.postMessage`,
 * `chat.update`) and answer interactions through their `response_url` (slack-response-url.ts).
 * Credentials: slack-secrets.ts.
 *
 * The two Web API methods are called with `fetch` (a JSON body and the bot token as a bearer
 * token, as the Web API accepts for write methods), not through `@slack/web-api`: its WebClient
 * is CommonJS with every Web API method, file uploads and a request queue, 67 KB of each
 * minified bundle that posts (13% of the 500 KB target, infra/bundling.ts) for two POSTs. What it
 * gave those two calls is kept here: a per-request timeout, short retries of network errors,
 * HTTP 5xx and 429 (`Retry-After` honoured when it fits a Lambda invocation), and platform
 * errors (`ok: false`) reported, not retried.
 *
 * The Web API base URL is configurable (`slackApiUrl`, config `SLACK_API_URL`) so tests and the local
 * runner point it at a capture server. `response_url` posts only go to allowed prefixes
 * (`https://hooks.slack.com/` by default): the URL comes from a signed payload, but an allow-list
 * keeps a leaked signing secret from turning the function into an open HTTP relay.
 *
 * @see https://api.slack.com/methods/chat.postMessage
 * @see https://api.slack.com/methods/chat.update
 * @see https://api.slack.com/web#posting_json
 * @see https://api.slack.com/apis/rate-limits
 * @see https://api.slack.com/interactivity/handling#message_responses
 */
import type { KnownBlock } from '@slack/types';
import type { SlackConfig } from '#platform/config.js';
import { timeLeftMs } from '#platform/deadline.js';
import { errorMessage, InvalidInputError, TransientError } from '#platform/errors.js';
import { sleep } from '#platform/sleep.js';
import {
  createResponseUrlPoster,
  DEFAULT_RESPONSE_URL_PREFIXES,
  type ResponseUrlMessage,
} from './slack-response-url.js';

/** A Slack message: `text` is the notification / fallback text, `blocks` the Block Kit layout. */
export interface SlackMessage {
  text: string;
  blocks?: KnownBlock[];
}

/** The Slack operations the pipeline uses. */
export interface SlackApi {
  /**
   * `chat.postMessage`. `threadTs` posts into that message's thread.
   * @returns the posted message's channel id and `ts`.
   */
  postMessage(channel: string, message: SlackMessage, options?: { threadTs?: string }): Promise<SlackPosted>;
  /** `chat.update` of a message the app posted. */
  updateMessage(channel: string, ts: string, message: SlackMessage): Promise<void>;
  /** POSTs JSON to an interaction's `response_url` (see {@link createResponseUrlPoster}). */
  respond(responseUrl: string, message: ResponseUrlMessage): Promise<void>;
}

/** Where a message was posted. */
export interface SlackPosted {
  channel: string;
  ts: string;
}

/** Options of {@link createSlackApi}. */
export interface SlackApiOptions {
  /** Bot token (`xoxb-...`) with the `chat:write` scope. */
  token: string;
  /** Web API base URL, ending in `/` (config `SLACK_API_URL`). @default 'https://slack.com/api/' */
  slackApiUrl?: string;
  /**
   * URL prefixes `response_url` may start with (config `SLACK_RESPONSE_URL_PREFIXES`).
   * @default ['https://hooks.slack.com/']
   */
  allowedResponseUrlPrefixes?: readonly string[];
  /** Per-request timeout, milliseconds. @default 2500 */
  timeoutMs?: number;
}

/** The {@link SlackApiOptions} of the pipeline's Slack configuration. */
export function slackApiOptions(token: string, slack: SlackConfig): SlackApiOptions {
  return { token, slackApiUrl: slack.apiUrl, allowedResponseUrlPrefixes: slack.responseUrlPrefixes };
}

/** Retries after the first attempt of a Web API call. */
const RETRIES = 2;
/** Backoff before retry n (0-based), milliseconds: 200, 400. */
const backoffMs = (retry: number) => 200 * 2 ** retry;
/** The longest `Retry-After` waited for inside an invocation, milliseconds; longer ones fail. */
const MAX_RETRY_AFTER_MS = 1000;

/**
 * Builds the Slack port over `fetch`: Web API calls with the bot token, `response_url` posts
 * without it.
 *
 * Retries are short (2 retries, 200 then 400 ms, or a `Retry-After` of at most 1 s) because every
 * caller runs inside a Lambda invocation; no request or wait runs past the invocation's deadline
 * (`timeLeftMs`, platform/deadline.ts).
 *
 * @throws TransientError from its methods when Slack cannot be reached, answers 5xx, rate-limits
 *   longer than 1 s or times out, after the retries.
 * @throws InvalidInputError from `postMessage` / `updateMessage` when Slack refuses the call
 *   (`ok: false`: `channel_not_found`, `not_in_channel`, `invalid_auth`...; retrying does not
 *   help), naming Slack's error; from `respond` when the URL is not on the allow-list.
 */
export function createSlackApi(options: SlackApiOptions): SlackApi {
  const slackApiUrl = options.slackApiUrl ?? 'https://slack.com/api/';
  const allowed = options.allowedResponseUrlPrefixes ?? DEFAULT_RESPONSE_URL_PREFIXES;
  const timeout = options.timeoutMs ?? 2500;

  const attempt = async (
    method: string,
    args: Record<string, unknown>,
  ): Promise<WebApiResult | { retry: TransientError; retryAfterMs?: number }> => {
    // Each request ends by the invocation's deadline (platform/deadline.ts, N03), not only its own timeout.
    const left = timeLeftMs();
    if (left <= 0) throw new TransientError(`Slack ${method}: no time left in this invocation`);
    let response: Response;
    try {
      response = await fetch(`${slackApiUrl}${method}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${options.token}`,
          'content-type': 'application/json; charset=utf-8',
        },
        body: JSON.stringify(args),
        signal: AbortSignal.timeout(Math.min(timeout, left)),
      });
    } catch (error) {
      return { retry: new TransientError(`Slack ${method} failed: ${errorMessage(error)}`, error) };
    }
    if (response.status === 429 || response.status >= 500) {
      await response.body?.cancel();
      const retryAfter = Number(response.headers.get('retry-after'));
      return {
        retry: new TransientError(`Slack ${method} answered HTTP ${response.status}`),
        ...(response.status === 429 && Number.isFinite(retryAfter) && retryAfter >= 0
          ? { retryAfterMs: retryAfter * 1000 }
          : {}),
      };
    }
    const result = (await response.json().catch(() => ({}))) as WebApiResult;
    if (result.ok !== true) {
      throw new InvalidInputError(`Slack ${method} refused`, [
        `slack: ${result.error ?? `HTTP ${response.status} without an ok result`}`,
      ]);
    }
    return result;
  };

  const call = async (method: string, args: Record<string, unknown>): Promise<WebApiResult> => {
    for (let retry = 0; ; retry++) {
      const outcome = await attempt(method, args);
      if (!('retry' in outcome)) return outcome;
      const waitMs = outcome.retryAfterMs ?? backoffMs(retry);
      // A wait the invocation cannot afford (Slack's Retry-After, or what is left before the
      // deadline) fails at once: the caller falls back (the notifier to the log) instead of timing out.
      if (retry >= RETRIES || waitMs > Math.min(MAX_RETRY_AFTER_MS, timeLeftMs())) throw outcome.retry;
      await sleep(waitMs);
    }
  };

  return {
    async postMessage(channel, message, opts = {}) {
      const result = await call('chat.postMessage', {
        channel,
        text: message.text,
        ...(message.blocks ? { blocks: message.blocks } : {}),
        ...(opts.threadTs ? { thread_ts: opts.threadTs } : {}),
        unfurl_links: false,
        unfurl_media: false,
      });
      if (!result.ts || !result.channel) throw new TransientError('chat.postMessage returned no ts');
      return { channel: result.channel, ts: result.ts };
    },

    async updateMessage(channel, ts, message) {
      await call('chat.update', {
        channel,
        ts,
        text: message.text,
        ...(message.blocks ? { blocks: message.blocks } : {}),
      });
    },

    respond: createResponseUrlPoster({ allowedResponseUrlPrefixes: allowed, timeoutMs: timeout }).respond,
  };
}

/** The part of a Web API answer the port reads. */
interface WebApiResult {
  ok?: boolean;
  error?: string;
  channel?: string;
  ts?: string;
}
