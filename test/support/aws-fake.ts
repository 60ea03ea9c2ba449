/**
 * A recording fake of an AWS JSON-protocol endpoint (Step Functions' SendTaskSuccess, Lambda's
 * async Invoke: the two boundaries of the Slack interaction without a local stand-in), on a
 * loopback port the real SDK clients reach through AWS_ENDPOINT_URL_SFN / AWS_ENDPOINT_URL_LAMBDA.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One recorded call: the `x-amz-target` (or the path) and the JSON body. */
export interface Recorded {
  target: string;
  body: Record<string, unknown>;
}

/** An AWS JSON-protocol fake: records each call; `answer` picks the HTTP status and body. */
export async function startAwsFake(
  answer: (call: Recorded) => { status: number; body: unknown },
): Promise<{ url: string; calls: Recorded[]; server: Server }> {
  const calls: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const call = {
        target: String(req.headers['x-amz-target'] ?? req.url),
        body: text ? JSON.parse(text) : {},
      };
      calls.push(call);
      const out = answer(call);
      res.writeHead(out.status, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify(out.body));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls, server };
}
