/**
 * A local stand-in for Slack: an HTTP server on 127.0.0.1 that answers Web API calls
 * (`<url>/api/<method>`, JSON as the pipeline's Slack client sends them, or form-encoded) and
 * records them, and records posts to `response_url`s under `<url>/response/<id>`.
 *
 * Point the Slack client at it with `slackApiUrl: capture.apiUrl` (env `SLACK_API_URL`), and put
 * `capture.responseUrl()` in interaction payloads (allow it with `SLACK_RESPONSE_URL_PREFIXES`).
 *
 * @see https://api.slack.com/web#posting_json
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sleep } from '#platform/sleep.js';

/** One recorded Web API call; JSON-looking form fields (`blocks`, `metadata`) are parsed. */
export interface CapturedApiCall {
  method: string;
  args: Record<string, unknown>;
  /** Authorization header as sent (`Bearer xoxb-...`). */
  authorization: string | undefined;
}

/** One recorded `response_url` post. */
export interface CapturedResponse {
  id: string;
  body: Record<string, unknown>;
}

/** A running capture server. */
export interface SlackCapture {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** Web API base URL, ending in `/`. */
  apiUrl: string;
  /** A response_url served by this capture (`id` tells responses apart). */
  responseUrl(id?: string): string;
  readonly apiCalls: CapturedApiCall[];
  readonly responses: CapturedResponse[];
  /** Calls of one Web API method. */
  callsTo(method: string): CapturedApiCall[];
  /** Makes the next call of `method` answer `{ ok: false, error }`. */
  failNext(method: string, error: string): void;
  /**
   * Makes the next `times` calls of `method` answer HTTP `status` (a 5xx, or 429 with
   * `Retry-After: retryAfterSeconds`) without doing anything, as Slack does when it is down or
   * rate-limits. They are still recorded in {@link apiCalls}.
   */
  failNextHttp(
    method: string,
    status: number,
    options?: { times?: number; retryAfterSeconds?: number },
  ): void;
  /** Resolves once `predicate` holds, polling every 10 ms. @throws Error after `timeoutMs`. */
  waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseArgs(contentType: string, text: string): Record<string, unknown> {
  if (contentType.includes('application/json'))
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    out[key] = /^[[{]/.test(value) ? JSON.parse(value) : value;
  }
  return out;
}

/**
 * Starts a capture server on a free loopback port.
 * @param options.unref - do not keep the process alive for it (the local runner).
 */
export async function startSlackCapture(options: { unref?: boolean } = {}): Promise<SlackCapture> {
  const apiCalls: CapturedApiCall[] = [];
  const responses: CapturedResponse[] = [];
  const failures = new Map<string, string>();
  const httpFailures = new Map<string, { status: number; times: number; retryAfterSeconds?: number }>();
  let tsCounter = 100;

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path.startsWith('/response/')) {
        responses.push({ id: path.slice('/response/'.length), body: text ? JSON.parse(text) : {} });
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
        return;
      }
      if (!path.startsWith('/api/')) return send(res, 404, { ok: false, error: 'unknown_path' });
      const method = path.slice('/api/'.length);
      const args = parseArgs(String(req.headers['content-type'] ?? ''), text);
      apiCalls.push({ method, args, authorization: req.headers.authorization });
      const httpFailure = httpFailures.get(method);
      if (httpFailure) {
        if (--httpFailure.times <= 0) httpFailures.delete(method);
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (httpFailure.retryAfterSeconds !== undefined)
          headers['retry-after'] = String(httpFailure.retryAfterSeconds);
        res.writeHead(httpFailure.status, headers);
        res.end(
          JSON.stringify({ ok: false, error: httpFailure.status === 429 ? 'ratelimited' : 'fatal_error' }),
        );
        return;
      }
      const failure = failures.get(method);
      if (failure) {
        failures.delete(method);
        return send(res, 200, { ok: false, error: failure });
      }
      const channel = typeof args.channel === 'string' ? args.channel : 'C0LOCAL';
      if (method === 'chat.postMessage') {
        tsCounter += 1;
        return send(res, 200, { ok: true, channel, ts: `1767350100.${String(tsCounter).padStart(6, '0')}` });
      }
      if (method === 'chat.update') return send(res, 200, { ok: true, channel, ts: args.ts });
      return send(res, 200, { ok: true });
    })().catch((error: unknown) => send(res, 500, { ok: false, error: String(error) }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  if (options.unref) server.unref();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let responseCounter = 0;

  return {
    url,
    apiUrl: `${url}/api/`,
    responseUrl: (id) => `${url}/response/${id ?? `r${++responseCounter}`}`,
    apiCalls,
    responses,
    callsTo: (method) => apiCalls.filter((c) => c.method === method),
    failNext: (method, error) => failures.set(method, error),
    failNextHttp: (method, status, options = {}) =>
      httpFailures.set(method, {
        status,
        times: options.times ?? 1,
        ...(options.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: options.retryAfterSeconds }),
      }),
    async waitFor(predicate, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate()) {
        if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
        await sleep(10);
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
