/**
 * The Slack port: post and update messages through `@slack/web-api` (`chat.postMessage`,
 * `chat.update`) and answer interactions through their `response_url` (slack-response-url.ts).
 * Credentials: slack-secrets.ts. A function that only answers `response_url`s (the Slack
 * interaction) uses slack-response-url.ts alone and bundles no WebClient (about 64 KB).
 *
 * The Web API base URL is configurable (`slackApiUrl`, config `SLACK_API_URL`) so tests and the local
 * runner point it at a capture server. `response_url` posts only go to allowed prefixes
 * (`https://hooks.slack.com/` by default): the URL comes from a signed payload, but an allow-list
 * keeps a leaked signing secret from turning the function into an open HTTP relay.
 *
 * @see https://api.slack.com/methods/chat.postMessage
 * @see https://api.slack.com/interactivity/handling#message_responses
 */
import type { KnownBlock } from '@slack/types';
import { WebClient } from '@slack/web-api';
import type { SlackConfig } from '#platform/config.js';
import { InvalidInputError, TransientError } from '#platform/errors.js';
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

/**
 * Builds the Slack port over `@slack/web-api`'s WebClient and `fetch` (for `response_url`).
 *
 * Retries are short (2 retries) because every caller runs inside a Lambda invocation.
 *
 * @throws TransientError from its methods when Slack answers 5xx / rate-limits / times out.
 * @throws InvalidInputError from `respond` when the URL is not on the allow-list.
 * @see https://docs.slack.dev/tools/node-slack-sdk/web-api/#custom-api-url
 */
export function createSlackApi(options: SlackApiOptions): SlackApi {
  const slackApiUrl = options.slackApiUrl ?? 'https://slack.com/api/';
  const allowed = options.allowedResponseUrlPrefixes ?? DEFAULT_RESPONSE_URL_PREFIXES;
  const timeout = options.timeoutMs ?? 2500;
  const web = new WebClient(options.token, {
    slackApiUrl,
    timeout,
    retryConfig: { retries: 2, factor: 2, minTimeout: 200, maxTimeout: 1000 },
    allowAbsoluteUrls: false,
  });

  return {
    async postMessage(channel, message, opts = {}) {
      const result = await web.chat
        .postMessage({
          channel,
          text: message.text,
          ...(message.blocks ? { blocks: message.blocks } : {}),
          ...(opts.threadTs ? { thread_ts: opts.threadTs } : {}),
          unfurl_links: false,
          unfurl_media: false,
        })
        .catch(slackFailure('chat.postMessage'));
      if (!result.ts || !result.channel) throw new TransientError('chat.postMessage returned no ts');
      return { channel: result.channel, ts: result.ts };
    },

    async updateMessage(channel, ts, message) {
      await web.chat
        .update({ channel, ts, text: message.text, ...(message.blocks ? { blocks: message.blocks } : {}) })
        .catch(slackFailure('chat.update'));
    },

    respond: createResponseUrlPoster({ allowedResponseUrlPrefixes: allowed, timeoutMs: timeout }).respond,
  };
}

function slackFailure(method: string): (error: unknown) => never {
  return (error: unknown) => {
    const e = error as { code?: string; data?: { error?: string }; message?: string };
    // Platform errors (channel_not_found, not_in_channel, invalid_auth) are configuration
    // problems: retrying does not help. Request/HTTP/rate-limit errors are transient.
    if (e.code === 'slack_webapi_platform_error') {
      throw new InvalidInputError(
        `Slack ${method} refused`,
        [`slack: ${e.data?.error ?? e.message ?? 'error'}`],
        error,
      );
    }
    throw new TransientError(`Slack ${method} failed: ${e.message ?? String(error)}`, error);
  };
}
