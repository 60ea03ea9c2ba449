/**
 * A local Slack interactivity endpoint: an HTTP server on 127.0.0.1 that takes Slack-signed
 * interaction requests and runs the REAL interaction core, as the Lambda Function URL does:
 * the raw body is passed base64-encoded (`isBase64Encoded: true`, as a Function URL may deliver
 * it), the ack is sent first, and the deferred follow-up (`SendTaskSuccess`, `response_url`
 * update) runs after the response has been written, in-process, instead of through an async
 * self-invocation.
 *
 * @see https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html#urls-payloads
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApprovalStore } from '#approval/approval-store.js';
import type { SlackApi } from '#approval/slack-client.js';
import { type AuditTrail, createAuditTrail } from '#incident/audit-trail.js';
import { logger } from '#platform/middleware.js';
import {
  acknowledgeInteraction,
  type FollowUp,
  type InteractionResponse,
  runFollowUp,
} from '../functions/slack-interaction/interaction.js';
import type { TaskCallbacks } from '../functions/slack-interaction/task-callbacks.js';

/** Options of {@link startSlackEndpoint}. */
export interface SlackEndpointOptions {
  signingSecret: string;
  approvals: ApprovalStore;
  /** Where `response_url` updates go (a capture server locally). */
  slack: Pick<SlackApi, 'respond'>;
  /** The SendTaskSuccess port: the local runner's task tokens, or a recording fake in tests. */
  callbacks: TaskCallbacks;
  /** Now, epoch milliseconds. @default Date.now */
  now?: () => number;
  /** Where decisions are recorded, as the Lambda records them. @default the DynamoDB audit trail */
  audit?: Pick<AuditTrail, 'record'>;
  /** @default 0 (a free port) */
  port?: number;
}

/** A running endpoint. */
export interface SlackEndpoint {
  /** POST interaction requests here, e.g. http://127.0.0.1:41234/slack/interactions */
  url: string;
  /** Resolves when every follow-up started so far has finished (errors are logged, not thrown). */
  settled(): Promise<void>;
  /** Results of finished follow-ups, in order ('sent', 'replied', 'closed', 'skipped' or 'error'). */
  readonly followUpResults: string[];
  close(): Promise<void>;
}

async function readRaw(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Starts the endpoint on 127.0.0.1. */
export async function startSlackEndpoint(options: SlackEndpointOptions): Promise<SlackEndpoint> {
  const now = options.now ?? (() => Date.now());
  const inFlight = new Set<Promise<void>>();
  const followUpResults: string[] = [];
  const runLater = (followUps: FollowUp[]) => {
    for (const followUp of followUps) {
      const job = runFollowUp(followUp, {
        approvals: options.approvals,
        slack: options.slack,
        callbacks: options.callbacks,
        now,
        audit: options.audit ?? createAuditTrail(),
      })
        .then((result) => {
          followUpResults.push(result);
        })
        .catch((error: unknown) => {
          followUpResults.push('error');
          logger.error('Slack follow-up failed', { error: String(error) });
        })
        .finally(() => inFlight.delete(job));
      inFlight.add(job);
    }
  };

  const server = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      const raw = await readRaw(req);
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(req.headers)) {
        if (typeof value === 'string') headers[key.toLowerCase()] = value;
      }
      const deferred: FollowUp[] = [];
      let response: InteractionResponse;
      try {
        response = await acknowledgeInteraction(
          { headers, body: raw.toString('base64'), isBase64Encoded: true },
          {
            signingSecret: options.signingSecret,
            approvals: options.approvals,
            defer: async (f) => {
              deferred.push(f);
            },
            now,
          },
        );
      } catch (error) {
        logger.error('Slack interaction failed', { error: String(error) });
        response = { statusCode: 500, headers: {}, body: '' };
      }
      res.writeHead(response.statusCode, response.headers);
      res.end(response.body, () => runLater(deferred));
    })();
  });
  server.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  server.unref();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/interactions`;

  return {
    url,
    followUpResults,
    async settled() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}
