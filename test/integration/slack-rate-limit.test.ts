import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSlackApi } from '#approval/slack-client.js';
import { createSlackNotifier } from '#approval/slack-notifier.js';
import { createIncidentStore } from '#incident/incident-store.js';
import { createMissedNotices } from '#incident/missed-notices.js';
import type { IncidentSummary } from '#inventory/model.js';
import { boundByDeadline, setInvocationDeadline } from '#platform/deadline.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { createInMemoryApprovalStore } from '../support/in-memory-approval-store.js';
import { createMemoryNotifier } from '../support/memory-notifier.js';
import { type SlackCapture, startSlackCapture } from '../support/slack-capture.js';

let stack: LocalStack;
let capture: SlackCapture;
beforeAll(async () => {
  stack = await startLocalStack();
  capture = await startSlackCapture();
});
afterAll(async () => {
  setInvocationDeadline(undefined);
  await capture?.close();
  await stack?.stop();
});

const summary: IncidentSummary = {
  messageCount: 1,
  countBySource: {},
  causes: [],
  countByClassification: { transient: 1, permanent: 0, poison: 0, systemic: 0, unknown: 0 },
  oldestMessageAgeMs: 0,
  earliestRetentionDeadline: null,
  expiringWithin24h: 0,
  partial: false,
};

async function incident(incidentId: string): Promise<void> {
  const now = new Date().toISOString();
  await createIncidentStore().putIncident({
    incidentId,
    dlqArn: 'arn:aws:sqs:us-east-1:123456789012:orders-dlq',
    dlqUrl: 'http://localhost/123456789012/orders-dlq',
    alarmArn: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:orders-dlq-visible',
    alarmName: 'orders-dlq-visible',
    dedupeKey: `k-${incidentId}`,
    stateTimestamp: now,
    sourceArns: [],
    status: 'OPEN',
    summary,
    createdAt: now,
    updatedAt: now,
  });
}

describe('Slack rate limits inside a Lambda (N03)', () => {
  it('N03 a 429 with Retry-After 11 falls back to the log at once, and the next Slack message carries the missed notice', async () => {
    await incident('inc-n03');
    const threads = createInMemoryApprovalStore();
    await threads.putThread('inc-n03', { channel: 'C0EXAMPLE', ts: '1767350100.000100' }, 0);
    const fallback = createMemoryNotifier();
    const notifier = createSlackNotifier({
      slack: createSlackApi({ token: 'xoxb-test', slackApiUrl: capture.apiUrl }),
      threads,
      channelFor: async () => 'C0EXAMPLE',
      fallback,
      missed: createMissedNotices(),
      now: () => Date.parse('2026-12-01T12:00:00Z'),
    });
    // Notify has 30 s; Slack asks for 11 s: waiting would leave too little for anything else.
    setInvocationDeadline(Date.now() + 28_000);
    capture.failNextHttp('chat.postMessage', 429, { retryAfterSeconds: 11 });
    const before = capture.callsTo('chat.postMessage').length;
    const started = Date.now();
    await notifier.notify({
      incidentId: 'inc-n03',
      kind: 'completed',
      text: 'redrive complete: 12 redriven',
      fields: {},
    });
    const took = Date.now() - started;
    expect(capture.callsTo('chat.postMessage').length - before).toBe(1); // not retried
    expect(took).toBeLessThan(11_000); // Retry-After not waited out
    expect(fallback.sent.map((n) => n.kind)).toEqual(['completed']);

    await notifier.notify({ incidentId: 'inc-n03', kind: 'halted', text: 'a later notice', fields: {} });
    const posted = capture.callsTo('chat.postMessage').at(-1)?.args as { text: string; thread_ts: string };
    expect(posted.thread_ts).toBe('1767350100.000100');
    expect(posted.text).toContain('halted: a later notice');
    expect(posted.text).toContain('1 earlier notice(s) could not be posted');
    expect(posted.text).toContain('2026-12-01T12:00:00Z completed: redrive complete: 12 redriven');
    // Carried once: the notice left the incident when it was posted.
    expect(await createMissedNotices().take('inc-n03')).toEqual([]);
    expect(fallback.sent).toHaveLength(1);
  });

  it('keeps at most ten missed notices on an incident and none for an incident that does not exist', async () => {
    await incident('inc-n03-many');
    const missed = createMissedNotices();
    for (let i = 0; i < 12; i++) await missed.keep('inc-n03-many', { kind: 'k', text: `n${i}`, at: i });
    await missed.keep('inc-n03-none', { kind: 'k', text: 'x', at: 0 });
    const kept = await missed.take('inc-n03-many');
    expect(kept.map((m) => m.text)).toEqual(['n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8', 'n9']);
    expect(await missed.take('inc-n03-none')).toEqual([]);
  });
});

describe('the invocation deadline on SDK calls (issue 8 item 7)', () => {
  let silent: Server;
  beforeAll(async () => {
    // An endpoint that accepts the connection and never answers: a hung dependency.
    silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => {
    silent.closeAllConnections();
    silent.close();
  });

  it('aborts an SQS call still running at the deadline as Redrive.Transient naming the command', async () => {
    const { port } = silent.address() as AddressInfo;
    const sqs = boundByDeadline(
      new SQSClient({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', maxAttempts: 1 }),
    );
    setInvocationDeadline(Date.now() + 500);
    const started = Date.now();
    const error = await sqs
      .send(new ReceiveMessageCommand({ QueueUrl: `http://127.0.0.1:${port}/123456789012/q` }))
      .catch((e: unknown) => e);
    setInvocationDeadline(undefined);
    expect((error as Error).name).toBe('Redrive.Transient');
    expect((error as Error).message).toMatch(/^ReceiveMessageCommand did not answer within the \d+ ms left/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('fails a call at once when the invocation has no time left', async () => {
    const { port } = silent.address() as AddressInfo;
    const sqs = boundByDeadline(new SQSClient({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1' }));
    setInvocationDeadline(Date.now() - 1);
    const error = await sqs
      .send(new ReceiveMessageCommand({ QueueUrl: `http://127.0.0.1:${port}/123456789012/q` }))
      .catch((e: unknown) => e);
    setInvocationDeadline(undefined);
    expect((error as Error).message).toBe(
      'ReceiveMessageCommand: no time left in this invocation to make the call',
    );
  });
});
