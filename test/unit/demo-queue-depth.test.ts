import type { Server } from 'node:http';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqsServer } from '../../local/aws-standins/sqs-indexed.js';
import { rampDisplay, startRampProgress } from '../../local/demo/progress.js';
import { queueDepth } from '../../local/demo/queues.js';

/** A stream that keeps what is written to it. */
function captured(): { stream: NodeJS.WritableStream; text: () => string } {
  let lines = '';
  const stream = {
    write: (t: string) => {
      lines += t;
      return true;
    },
  } as unknown as NodeJS.WritableStream;
  return { stream, text: () => lines };
}

// npm start's drain and ramp lines read queue depths through local/demo/queues.ts: on the local
// SQS stand-in, ApproximateNumberOfMessages also counts in-flight messages.
describe('the demo queue depth on the local SQS stand-in', () => {
  let server: Server;
  let sqs: SQSClient;
  beforeAll(async () => {
    server = (await createSqsServer({
      port: 0,
      hostname: '127.0.0.1',
      region: 'us-east-1',
      accountId: '123456789012',
      emulateQueueCreationLifecycle: false,
    })) as Server;
    const address = server.address() as { port: number };
    sqs = new SQSClient({
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${address.port}`,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
  });
  afterAll(async () => {
    sqs?.destroy();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('counts each of 20 messages once while a consumer holds 10 in flight (never "30 of 20")', async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'depth-check' }));
    const url = QueueUrl as string;
    for (const batch of [0, 10])
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: Array.from({ length: 10 }, (_, i) => ({
            Id: `m${batch + i}`,
            MessageBody: `order ${batch + i}`,
          })),
        }),
      );
    const held = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 300 }),
    );
    const inFlight = held.Messages?.length ?? 0;
    expect(inFlight).toBeGreaterThan(0);

    const depth = await queueDepth(sqs, url, { visibleIncludesInFlight: true });
    // The tests' seeding helper counts the same way (it used to add in-flight twice).
    const { queueDepth: supportDepth } = await import('../support/seed-dlq.js');
    expect(await supportDepth(sqs, url, { visibleIncludesInFlight: true })).toEqual({
      visible: depth.visible,
      inFlight: depth.inFlight,
    });
    expect(depth.visible + depth.inFlight).toBe(20);

    expect(depth.inFlight).toBe(inFlight);
    expect(depth.visible + depth.inFlight + depth.delayed).toBe(20);
  });

  it('the ramp counter never passes its total: messages arriving after the start are counted apart', async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'ramp-progress' }));
    const url = QueueUrl as string;
    const send = (from: number, n: number) =>
      sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: Array.from({ length: n }, (_, i) => ({
            Id: `m${from + i}`,
            MessageBody: `order ${from + i}`,
          })),
        }),
      );
    await send(0, 5);
    const { stream, text } = captured();
    const progress = startRampProgress(sqs, url, 5, { tty: false, stream, pollMs: 10 });
    // Two leave the DLQ (the move task), then four more dead-letter (late arrivals).
    const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 2 }));
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: (got.Messages ?? []).map((m, i) => ({
          Id: `d${i}`,
          ReceiptHandle: m.ReceiptHandle as string,
        })),
      }),
    );
    await send(10, 4);

    const end = await progress.stop();

    const depth = await queueDepth(sqs, url, { visibleIncludesInFlight: true });
    expect(depth.visible + depth.inFlight).toBe(7);
    expect(end.total).toBe(5);
    expect(end.moved).toBeLessThanOrEqual(end.total);
    // What is left of the backlog plus what arrived is what the DLQ holds.
    expect(end.total - end.moved + end.arrived).toBe(7);
    for (const [, moved, total] of text().matchAll(/ramp: (\d+)\/(\d+) moved/g))
      expect(Number(moved)).toBeLessThanOrEqual(Number(total));
  });

  it('the ramp display ends when Reconcile starts: its summary said once, no ramp line printed after it (newcomer finding)', async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'ramp-display-check' }));
    const url = QueueUrl as string;
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [0, 1, 2].map((i) => ({ Id: `m${i}`, MessageBody: `order ${i}` })),
      }),
    );
    const { stream, text } = captured();
    const said: string[] = [];
    const display = rampDisplay({
      say: (line) => said.push(line),
      progress: { tty: false, stream, pollMs: 5 },
    });
    display.onTaskResult('StartMoveTask', { taskHandle: 't-1', toMove: 3, rate: 5, rateIndex: 0 }, sqs, url);
    await new Promise((r) => setTimeout(r, 1100));
    await display.stop();
    const atStop = text();
    expect(atStop).toMatch(/^ramp: 0\/3 moved/);
    // A later ramp result (a second run's) and a second stop print nothing more.
    display.onTaskResult('CheckProgress', { rate: 50, rateIndex: 1 }, sqs, url);
    await new Promise((r) => setTimeout(r, 1100));
    await display.stop();
    expect(text()).toBe(atStop);
    expect(said).toEqual(['Ramp: 0/3 left the DLQ while the move task ran.']);
  });
});
