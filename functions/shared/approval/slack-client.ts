/**
 * The Slack port: post and update messages through the Slack Web API (`chat.postMessage`,
 * `chat.update`) with `@slack/web-api`'s `WebClient`, and answer interactions through their
 * `response_url` (slack-response-url.ts). Credentials: slack-secrets.ts. The one module that
 * calls the Web API (a dependency-cruiser rule keeps it so).
 *
 * Inside a Lambda the WebClient's defaults do not fit: it waits out any `Retry-After` and retries
 * for about 30 minutes. So the client is built with `rejectRateLimitedCalls` and no retries of its
 * own, every request ends by the invocation's deadline (platform/deadline.ts), and the retries are
 * here: two short ones of network errors, HTTP 5xx and 429 (`Retry-After` waited for only when it
 * is at most 1 s and fits the time left); platform errors (`ok: false`) are reported, not retried.
 * The package is loaded on the first call (`await import()`), not at import.
 *
 * The Web API base URL is configurable (`slackApiUrl`, config `SLACK_API_URL`) so tests and the
 * local runner point it at a capture server.
 *
 * @see https://docs.slack.dev/tools/node-slack-sdk/web-api/
 * @see https://api.slack.com/methods/chat.postMessage
 * @see https://api.slack.com/methods/chat.update
 * @see https://api.slack.com/apis/rate-limits
 */
import type { KnownBlock } from '@slack/types';
import type { WebClient } from '@slack/web-api';
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

/** What `@slack/web-api` errors carry (`code` from its `ErrorCode`). */
interface WebApiError {
  code?: string;
  message: string;
  data?: { error?: string };
  statusCode?: number;
  retryAfter?: number;
}

/**
 * The pipeline's error for a failed Web API call, and whether to try again: after the backoff,
 * after Slack's `Retry-After` (milliseconds), or never.
 */
function classify(method: string, error: unknown): { error: Error; wait: 'backoff' | 'never' | number } {
  if (error instanceof TransientError) return { error, wait: 'backoff' };
  const e = error as WebApiError;
  switch (e.code) {
    case 'slack_webapi_platform_error':
      return {
        error: new InvalidInputError(`Slack ${method} refused`, [
          `slack: ${e.data?.error ?? 'no error named'}`,
        ]),
        wait: 'never',
      };
    case 'slack_webapi_rate_limited_error':
      return {
        error: new TransientError(`Slack ${method} answered HTTP 429 (Retry-After ${e.retryAfter} s)`, error),
        wait: (e.retryAfter ?? 0) * 1000,
      };
    case 'slack_webapi_http_error': {
      const failure = new TransientError(`Slack ${method} answered HTTP ${e.statusCode}`, error);
      if ((e.statusCode ?? 0) >= 500) return { error: failure, wait: 'backoff' };
      return {
        error: new InvalidInputError(`Slack ${method} refused`, [
          `slack: HTTP ${e.statusCode} without an ok result`,
        ]),
        wait: 'never',
      };
    }
    default:
      return {
        error: new TransientError(`Slack ${method} failed: ${errorMessage(error)}`, error),
        wait: 'backoff',
      };
  }
}

/**
 * Builds the Slack port over `@slack/web-api`: Web API calls with the bot token, `response_url`
 * posts without it.
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
 * @example
 * const slack = createSlackApi({ token, slackApiUrl: 'https://slack.com/api/' });
 * await slack.postMessage('C0123', { text: 'redrive complete' }, { threadTs });
 */
export function createSlackApi(options: SlackApiOptions): SlackApi {
  const allowed = options.allowedResponseUrlPrefixes ?? DEFAULT_RESPONSE_URL_PREFIXES;
  const timeout = options.timeoutMs ?? 2500;
  let client: Promise<WebClient> | undefined;
  const web = () =>
    (client ??= import('@slack/web-api').then(
      (m) =>
        new m.WebClient(options.token, {
          slackApiUrl: options.slackApiUrl ?? 'https://slack.com/api/',
          rejectRateLimitedCalls: true,
          retryConfig: { retries: 0 },
          logLevel: m.LogLevel.WARN,
          // Each request ends by its own timeout or the invocation's deadline, whichever is first.
          fetch: (url, init) => {
            const left = timeLeftMs();
            if (left <= 0) throw new TransientError('no time left in this invocation');
            return fetch(url, { ...init, signal: AbortSignal.timeout(Math.min(timeout, left)) });
          },
        }),
    ));

  const call = async (method: string, args: Record<string, unknown>): Promise<WebApiResult> => {
    const slack = await web();
    for (let retry = 0; ; retry++) {
      try {
        return (await slack.apiCall(method, args)) as WebApiResult;
      } catch (caught) {
        const { error, wait } = classify(method, caught);
        const waitMs = wait === 'backoff' ? backoffMs(retry) : wait;
        // A wait the invocation cannot afford (Slack's Retry-After, or what is left before the
        // deadline) fails at once: the caller falls back (the notifier to the log) instead of timing out.
        if (waitMs === 'never' || retry >= RETRIES || waitMs > Math.min(MAX_RETRY_AFTER_MS, timeLeftMs()))
          throw error;
        await sleep(waitMs);
      }
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
