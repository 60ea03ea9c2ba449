/**
 * The Slack port: post and update messages through `@slack/web-api` (`chat.postMessage`,
 * `chat.update`) and answer interactions through their `response_url`, plus loading the app's
 * bot token and signing secret.
 *
 * The Web API base URL is configurable (`slackApiUrl`, config `SLACK_API_URL`) so tests and the local
 * runner point it at a capture server. `response_url` posts only go to allowed prefixes
 * (`https://hooks.slack.com/` by default): the URL comes from a signed payload, but an allow-list
 * keeps a leaked signing secret from turning the function into an open HTTP relay.
 *
 * @see https://api.slack.com/methods/chat.postMessage
 * @see https://api.slack.com/interactivity/handling#message_responses
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { KnownBlock } from '@slack/types';
import { WebClient } from '@slack/web-api';
import { secretsManagerClient } from '#platform/clients.js';
import type { SlackConfig } from '#platform/config.js';
import { InvalidInputError, TransientError } from '#platform/errors.js';

/** A Slack message: `text` is the notification / fallback text, `blocks` the Block Kit layout. */
export interface SlackMessage {
  text: string;
  blocks?: KnownBlock[];
}

/** A body posted to an interaction's `response_url`. */
export interface ResponseUrlMessage extends SlackMessage {
  /** Replace the message the button was on (true) or post a new one (false). */
  replace_original?: boolean;
  /** `ephemeral` shows the message to the clicking user only. */
  response_type?: 'ephemeral' | 'in_channel';
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
  /** POSTs JSON to an interaction's `response_url`. */
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

/** True when `url` starts with one of the (non-empty) allowed prefixes. */
export function isAllowedResponseUrl(url: string, prefixes: readonly string[]): boolean {
  return prefixes.some((prefix) => prefix !== '' && url.startsWith(prefix));
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
  const allowed = options.allowedResponseUrlPrefixes ?? ['https://hooks.slack.com/'];
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

    async respond(responseUrl, message) {
      if (!isAllowedResponseUrl(responseUrl, allowed)) {
        throw new InvalidInputError('invalid Slack request', [
          `payload.response_url: must start with one of ${allowed.join(', ')}`,
        ]);
      }
      const response = await fetch(responseUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify(message),
        signal: AbortSignal.timeout(timeout),
      }).catch((error: unknown) => {
        throw new TransientError(`response_url post failed: ${String(error)}`, error);
      });
      if (!response.ok) {
        throw new TransientError(`response_url post answered HTTP ${response.status}`);
      }
    },
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

/** The Slack app's credentials. */
export interface SlackSecrets {
  /** Bot token, `xoxb-...`. */
  botToken: string;
  /** Signing secret used to verify interaction requests. */
  signingSecret: string;
}

let cached: Promise<SlackSecrets> | undefined;

/** Where the Slack credentials come from (the `SLACK_*` part of the configuration). */
export type SlackCredentialsConfig = Partial<Pick<SlackConfig, 'secretArn' | 'botToken' | 'signingSecret'>>;

/**
 * Loads the Slack credentials once per container: from `SLACK_BOT_TOKEN` and
 * `SLACK_SIGNING_SECRET` when both are set (local runs), else from the Secrets Manager secret named
 * by `SLACK_SECRET_ARN`, a JSON object `{ "botToken": "...", "signingSecret": "..." }`.
 *
 * @param slack - the Slack configuration (`pipelineConfig().slack`).
 * @param client - @default the shared Secrets Manager client
 * @throws InvalidInputError naming the missing variable or secret field.
 * @see https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html
 */
export function loadSlackSecrets(
  slack: SlackCredentialsConfig,
  client: () => SecretsManagerClient = secretsManagerClient,
): Promise<SlackSecrets> {
  cached ??= readSecrets(slack, client).catch((error: unknown) => {
    cached = undefined;
    throw error;
  });
  return cached;
}

/** Forgets cached credentials (tests and the local runner). */
export function resetSlackSecrets(): void {
  cached = undefined;
}

async function readSecrets(
  slack: SlackCredentialsConfig,
  client: () => SecretsManagerClient,
): Promise<SlackSecrets> {
  if (slack.botToken && slack.signingSecret) {
    return { botToken: slack.botToken, signingSecret: slack.signingSecret };
  }
  const arn = slack.secretArn;
  if (!arn) {
    throw new InvalidInputError('Slack credentials are not configured', [
      'SLACK_SECRET_ARN: is required (or both SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET)',
    ]);
  }
  const out = await client().send(new GetSecretValueCommand({ SecretId: arn }));
  let parsed: { botToken?: unknown; signingSecret?: unknown };
  try {
    parsed = JSON.parse(out.SecretString ?? '') as typeof parsed;
  } catch (error) {
    throw new InvalidInputError('invalid Slack secret', [`${arn}: must be a JSON object`], error);
  }
  const problems: string[] = [];
  if (typeof parsed.botToken !== 'string' || parsed.botToken === '') problems.push('botToken: is required');
  if (typeof parsed.signingSecret !== 'string' || parsed.signingSecret === '')
    problems.push('signingSecret: is required');
  if (problems.length > 0) throw new InvalidInputError('invalid Slack secret', problems);
  return { botToken: parsed.botToken as string, signingSecret: parsed.signingSecret as string };
}
