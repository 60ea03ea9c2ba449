/**
 * Answering a Slack interaction through its `response_url`: a JSON POST with `fetch`, no bot
 * token and no Web API client. `response_url` posts only go to allowed prefixes
 * (`https://hooks.slack.com/` by default, config `SLACK_RESPONSE_URL_PREFIXES`): the URL comes
 * from a signed payload, but an allow-list keeps a leaked signing secret from turning the
 * function into an open HTTP relay.
 *
 * Kept apart from slack-client.ts so a function that only answers interactions needs no bot
 * token.
 *
 * @see https://api.slack.com/interactivity/handling#message_responses
 */
import type { KnownBlock } from '@slack/types';
import { timeLeftMs } from '#platform/deadline.js';
import { InvalidInputError, TransientError } from '#platform/errors.js';

/** Where a `response_url` may point unless configured otherwise. */
export const DEFAULT_RESPONSE_URL_PREFIXES: readonly string[] = ['https://hooks.slack.com/'];

/** A body posted to an interaction's `response_url`: a Slack message plus how to show it. */
export interface ResponseUrlMessage {
  /** The notification / fallback text. */
  text: string;
  /** The Block Kit layout. */
  blocks?: KnownBlock[];
  /** Replace the message the button was on (true) or post a new one (false). */
  replace_original?: boolean;
  /** `ephemeral` shows the message to the clicking user only. */
  response_type?: 'ephemeral' | 'in_channel';
}

/** The port that answers an interaction. */
export interface ResponseUrlPoster {
  /** POSTs JSON to an interaction's `response_url`. */
  respond(responseUrl: string, message: ResponseUrlMessage): Promise<void>;
}

/** Options of {@link createResponseUrlPoster}. */
export interface ResponseUrlPosterOptions {
  /** URL prefixes `response_url` may start with. @default DEFAULT_RESPONSE_URL_PREFIXES */
  allowedResponseUrlPrefixes?: readonly string[];
  /** Per-request timeout, milliseconds. @default 2500 */
  timeoutMs?: number;
}

/** True when `url` starts with one of the (non-empty) allowed prefixes. */
export function isAllowedResponseUrl(url: string, prefixes: readonly string[]): boolean {
  return prefixes.some((prefix) => prefix !== '' && url.startsWith(prefix));
}

/**
 * Builds the `response_url` poster.
 *
 * @throws InvalidInputError from `respond` when the URL is not on the allow-list.
 * @throws TransientError from `respond` when the post fails or answers a non-2xx status.
 */
export function createResponseUrlPoster(options: ResponseUrlPosterOptions = {}): ResponseUrlPoster {
  const allowed = options.allowedResponseUrlPrefixes ?? DEFAULT_RESPONSE_URL_PREFIXES;
  const timeout = options.timeoutMs ?? 2500;
  return {
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
        signal: AbortSignal.timeout(Math.max(1, Math.min(timeout, timeLeftMs()))),
      }).catch((error: unknown) => {
        throw new TransientError(`response_url post failed: ${String(error)}`, error);
      });
      if (!response.ok) {
        throw new TransientError(`response_url post answered HTTP ${response.status}`);
      }
    },
  };
}
