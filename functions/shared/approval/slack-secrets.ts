/**
 * The Slack app's credentials (bot token and signing secret), loaded once per container: from
 * `SLACK_BOT_TOKEN` and `SLACK_SIGNING_SECRET` locally, else from the Secrets Manager secret named
 * by `SLACK_SECRET_ARN`. Apart from slack-client.ts so that reading the signing secret brings no
 * Web API client into a bundle.
 *
 * @see https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { onResetClients, secretsManagerClient } from '#platform/clients.js';
import type { SlackConfig } from '#platform/config.js';
import { InvalidInputError } from '#platform/errors.js';

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

/** Forgets cached credentials (tests and the local runner); `resetClients()` calls it too. */
export function resetSlackSecrets(): void {
  cached = undefined;
}
onResetClients(resetSlackSecrets);

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
