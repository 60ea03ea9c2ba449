import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSlackApi } from '#approval/slack-client.js';
import { loadSlackSecrets, resetSlackSecrets } from '#approval/slack-secrets.js';
import { readConfig } from '#platform/config.js';
import { InvalidInputError, TransientError } from '#platform/errors.js';
import { type SlackCapture, startSlackCapture } from '../support/slack-capture.js';

let capture: SlackCapture;
beforeAll(async () => {
  capture = await startSlackCapture();
});
afterAll(async () => {
  await capture.close();
});

const api = () =>
  createSlackApi({
    token: 'xoxb-test',
    slackApiUrl: capture.apiUrl,
    allowedResponseUrlPrefixes: [capture.url],
  });

describe('Slack client against the local capture server', () => {
  it('posts Block Kit messages with the bot token, into a thread when asked', async () => {
    const posted = await api().postMessage(
      'C0EXAMPLE',
      { text: 'hello', blocks: [{ type: 'section', text: { type: 'mrkdwn', text: '*hi*' } }] },
      { threadTs: '1767350100.000100' },
    );
    const call = capture.callsTo('chat.postMessage').at(-1);
    expect(posted.channel).toBe('C0EXAMPLE');
    expect(posted.ts).toMatch(/^1767350100\.\d{6}$/);
    expect(call?.authorization).toBe('Bearer xoxb-test');
    expect(call?.args).toMatchObject({
      channel: 'C0EXAMPLE',
      text: 'hello',
      thread_ts: '1767350100.000100',
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: '*hi*' } }],
    });
  });

  it('turns a Slack platform error into InvalidInputError naming the Slack error (not retried)', async () => {
    capture.failNext('chat.postMessage', 'channel_not_found');
    const before = capture.callsTo('chat.postMessage').length;
    const error = await api()
      .postMessage('C0GONE', { text: 'x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toContain('slack: channel_not_found');
    expect(capture.callsTo('chat.postMessage').length - before).toBe(1);
  });

  it('retries a 5xx answer and returns the post that then succeeds', async () => {
    capture.failNextHttp('chat.postMessage', 503);
    const before = capture.callsTo('chat.postMessage').length;
    const posted = await api().postMessage('C0EXAMPLE', { text: 'after an outage' });
    expect(capture.callsTo('chat.postMessage').length - before).toBe(2);
    expect(posted.ts).toMatch(/^1767350100\.\d{6}$/);
  });

  it('waits a short Retry-After of a rate limit and retries the update', async () => {
    capture.failNextHttp('chat.update', 429, { retryAfterSeconds: 0 });
    const before = capture.callsTo('chat.update').length;
    await api().updateMessage('C0EXAMPLE', '1767350100.000100', { text: 'updated' });
    const calls = capture.callsTo('chat.update').slice(before);
    expect(calls.map((c) => c.args.text)).toEqual(['updated', 'updated']);
  });

  it('gives up as transient at once when Retry-After is longer than an invocation can wait', async () => {
    capture.failNextHttp('chat.postMessage', 429, { retryAfterSeconds: 30 });
    const before = capture.callsTo('chat.postMessage').length;
    const error = await api()
      .postMessage('C0EXAMPLE', { text: 'x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as Error).message).toContain('HTTP 429');
    expect(capture.callsTo('chat.postMessage').length - before).toBe(1);
  });

  it('reports Slack down as transient after two retries', async () => {
    capture.failNextHttp('chat.postMessage', 500, { times: 3 });
    const before = capture.callsTo('chat.postMessage').length;
    const error = await api()
      .postMessage('C0EXAMPLE', { text: 'x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as Error).message).toContain('chat.postMessage answered HTTP 500');
    expect(capture.callsTo('chat.postMessage').length - before).toBe(3);
  });

  it('posts response_url updates as JSON to allowed prefixes only', async () => {
    await api().respond(capture.responseUrl('a1'), { text: 'Approved', replace_original: true });
    expect(capture.responses.at(-1)).toEqual({
      id: 'a1',
      body: { text: 'Approved', replace_original: true },
    });
    const error = await api()
      .respond('https://evil.example/hook', { text: 'x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toContain('payload.response_url');
  });

  it('reports an unreachable response_url as transient', async () => {
    const closed = await startSlackCapture();
    const url = closed.responseUrl('gone');
    await closed.close();
    const slack = createSlackApi({ token: 'x', allowedResponseUrlPrefixes: ['http://127.0.0.1:'] });
    await expect(slack.respond(url, { text: 'x' })).rejects.toBeInstanceOf(TransientError);
  });
});

describe('Slack credentials', () => {
  beforeEach(() => resetSlackSecrets());

  it('uses SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET when both are set', async () => {
    expect(
      await loadSlackSecrets(readConfig({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's1' }).slack),
    ).toEqual({
      botToken: 'xoxb-1',
      signingSecret: 's1',
    });
  });

  it('names SLACK_SECRET_ARN when nothing is configured', async () => {
    await expect(loadSlackSecrets(readConfig({}).slack)).rejects.toThrow(/SLACK_SECRET_ARN: is required/);
  });

  it('names each missing field of a malformed secret', async () => {
    // A client stub for a rare path: a secret someone filled in by hand without the signing secret.
    const client = () =>
      ({
        send: async () => ({ SecretString: JSON.stringify({ botToken: 'xoxb-2' }) }),
      }) as unknown as SecretsManagerClient;
    await expect(
      loadSlackSecrets(readConfig({ SLACK_SECRET_ARN: 'arn:aws:secretsmanager:x' }).slack, client),
    ).rejects.toThrow(/signingSecret: is required/);
  });
});
