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
import { rampDisplay, rampSummaryLine, startRampProgress } from '../../local/demo/progress.js';
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

// npm start's drain and ramp lines read queue depths through local/demo/queues.ts: visible and in
// flight apart, each message counted once.
describe('the demo queue depth on the local SQS', () => {
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

    const depth = await queueDepth(sqs, url);
    // The tests' seeding helper counts the same way (it used to add in-flight twice).
    const { queueDepth: supportDepth } = await import('../support/seed-dlq.js');
    expect(await supportDepth(sqs, url)).toEqual({
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

    const depth = await queueDepth(sqs, url);
    expect(depth.visible + depth.inFlight).toBe(7);
    expect(end.total).toBe(5);
    expect(end.left).toBeLessThanOrEqual(end.total);
    // What is left of the backlog plus what arrived is what the DLQ holds.
    expect(end.total - end.left + end.arrived).toBe(7);
    expect(end.depth).toBe(7);
    for (const [, moved, total] of text().matchAll(/ramp: (\d+)\/(\d+) left the DLQ/g))
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
    expect(atStop).toMatch(/^ramp: 0\/3 left the DLQ, task moved 0,/);
    // A later ramp result (a second run's) and a second stop print nothing more.
    display.onTaskResult('CheckProgress', { rate: 50, rateIndex: 1 }, sqs, url);
    await new Promise((r) => setTimeout(r, 1100));
    await display.stop();
    expect(text()).toBe(atStop);
    expect(said).toEqual(['Ramp: the move task moved 0 of 3; the DLQ holds 3.']);
  });

  it('says what the move task moved apart from what left the DLQ: a message deleted by hand was not moved (hand-deleted)', async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'ramp-hand-deleted' }));
    const url = QueueUrl as string;
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [0, 1, 2, 3].map((i) => ({ Id: `m${i}`, MessageBody: `order ${i}` })),
      }),
    );
    const { stream, text } = captured();
    const said: string[] = [];
    const display = rampDisplay({
      say: (line) => said.push(line),
      progress: { tty: false, stream, pollMs: 5 },
    });
    display.onTaskResult(
      'StartMoveTask',
      { taskHandle: 't-1', toMove: 4, rate: 5, rateIndex: 0, moved: 0 },
      sqs,
      url,
    );
    // Three leave the DLQ: the task moved one (its ApproximateNumberOfMessagesMoved), two are deleted by hand (its ApproximateNumberOfMessagesMoved).
    // (A receive may return fewer than asked for: receive until three are gone.)
    for (let gone = 0; gone < 3; ) {
      const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 3 - gone }));
      const messages = got.Messages ?? [];
      if (messages.length === 0) continue;
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: url,
          Entries: messages.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle as string })),
        }),
      );
      gone += messages.length;
    }
    display.onTaskResult(
      'CheckProgress',
      { taskHandle: 't-1', rate: 5, rateIndex: 0, moved: 1, movedBefore: 0 },
      sqs,
      url,
    );
    // One line a second: wait for the one after the deletes (a loaded machine may take longer).
    for (let waited = 0; waited < 10_000 && !/ramp: 3\/4 /.test(text()); waited += 100)
      await new Promise((r) => setTimeout(r, 100));
    await display.stop();
    expect(text()).toMatch(/ramp: 3\/4 left the DLQ[^,]*, task moved 1,/);
    expect(text()).not.toMatch(/\d+\/\d+ moved/);
    expect(said).toEqual([
      'Ramp: the move task moved 1 of 4; the DLQ holds 1 of the 3 the task left there: 2 left it without the move task (deleted or moved by hand, or parked).',
    ]);
  });

  it("the summary line takes the report's moved and returned (consumer-breaks-during-ramp, hand-deleted)", () => {
    // The reason says 'stopped after 150 of 215 moved', the table 'returned to the DLQ 120'.
    expect(rampSummaryLine({ total: 215, taskMoved: 150, left: 125, arrived: 95, depth: 185 })).toBe(
      'Ramp: the move task moved 150 of 215; the DLQ holds 185: the 65 the task left there and 120 that arrived meanwhile (returned copies or late arrivals).',
    );
    // 56 moved by the move task, 5 deleted by hand (the report's missing 5).
    expect(rampSummaryLine({ total: 61, taskMoved: 56, left: 61, arrived: 0, depth: 0 })).toMatch(
      /^Ramp: the move task moved 56 of 61; the DLQ holds 0 of the 5 the task left there: 5 left it without the move task/,
    );
  });
});
