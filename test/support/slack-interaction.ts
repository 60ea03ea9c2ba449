/**
 * What the slack-interaction tests on the local stack share (slack-approval, slack-cancel): the
 * Slack capture server, the recording fake of Lambda's async Invoke (the interaction's follow-up),
 * the environment that points the real handlers at them, signed Function URL events of a click,
 * and running a click's follow-ups as Lambda would.
 */
import type { Context } from 'aws-lambda';
import { resetSlackSecrets } from '#approval/slack-secrets.js';
import { resetClients } from '#platform/clients.js';
import { signSlackRequest } from '../../functions/slack-interaction/slack-signature.js';
import { startAwsFake } from './aws-fake.js';
import { lambdaContext } from './redrive-fixtures.js';
import { type SlackCapture, startSlackCapture } from './slack-capture.js';

/** A Lambda handler as the tests call it. */
export type Handler = (event: unknown, context: Context) => Promise<unknown>;

/** The Slack side of a test: capture server and Lambda Invoke fake, both on loopback ports. */
export interface SlackRig {
  capture: SlackCapture;
  /** Records every async Invoke (answers 202). */
  lambda: Awaited<ReturnType<typeof startAwsFake>>;
  /**
   * Sends a click to `handler`, then runs each follow-up it async-invoked (as Lambda would).
   * @returns the handler's answer to the click (the Function URL response).
   */
  clickAndRunFollowUps(handler: Handler, event: unknown): Promise<unknown>;
  /** Closes the servers. */
  close(): Promise<void>;
}

/**
 * Starts the capture server and the Lambda fake, and points the handlers' environment at them
 * (Slack API URL, bot token, signing secret, response_url prefix, `AWS_ENDPOINT_URL_LAMBDA`,
 * `AWS_LAMBDA_FUNCTION_NAME`, plus `env`); the SDK clients and Slack secrets are built afresh.
 */
export async function startSlackRig(
  signingSecret: string,
  env: Record<string, string> = {},
): Promise<SlackRig> {
  const capture = await startSlackCapture();
  const lambda = await startAwsFake(() => ({ status: 202, body: {} }));
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_LAMBDA: lambda.url,
    SLACK_API_URL: capture.apiUrl,
    SLACK_BOT_TOKEN: 'xoxb-test',
    SLACK_SIGNING_SECRET: signingSecret,
    SLACK_RESPONSE_URL_PREFIXES: capture.url,
    AWS_LAMBDA_FUNCTION_NAME: 'slack-interaction',
    ...env,
  });
  resetClients();
  resetSlackSecrets();
  return {
    capture,
    lambda,
    async clickAndRunFollowUps(handler, event) {
      const before = lambda.calls.length;
      const ack = await handler(event, lambdaContext);
      for (const call of lambda.calls.slice(before)) await handler(call.body, lambdaContext);
      return ack;
    },
    async close() {
      await capture.close();
      lambda.server.closeAllConnections();
      lambda.server.close();
    },
  };
}

/**
 * A Function URL event of a Slack interaction `payload` (form-encoded, as Slack posts it), signed
 * now with `secret`.
 * @param options.base64 - the body base64-encoded, as Function URLs deliver form posts. @default false
 * @param options.retry - Slack's retry headers (a redelivery after its 3-second timeout).
 */
export function signedInteraction(
  secret: string,
  payload: Record<string, unknown>,
  options: { base64?: boolean; retry?: boolean } = {},
) {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const ts = String(Math.floor(Date.now() / 1000));
  return {
    version: '2.0',
    rawPath: '/',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': ts,
      'x-slack-signature': signSlackRequest(secret, ts, body),
      ...(options.retry ? { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' } : {}),
    },
    requestContext: { http: { method: 'POST', path: '/' } },
    body: options.base64 ? Buffer.from(body).toString('base64') : body,
    isBase64Encoded: options.base64 === true,
  };
}
