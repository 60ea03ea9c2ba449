import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  type Message,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import type * as original from 'local-aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '#platform/sleep.js';
import * as indexed from '../../local/aws-standins/sqs-indexed.js';
import {
  applyEdits,
  EDITED_VERSION,
  EDITS,
  indexedRecords,
  SqsStandinPatchError,
} from '../../local/aws-standins/sqs-indexed.js';

const ACCOUNT = '123456789012';
const arn = (name: string) => `arn:aws:sqs:us-east-1:${ACCOUNT}:${name}`;

type StandIn = Pick<typeof original, 'createSqsServer'>;

const clientOf = (port: number) =>
  new SQSClient({
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${port}`,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });

/** A stand-in's request handler on a server of its own, with a client and the service behind it. */
async function start(standIn: StandIn) {
  const server: Server = await standIn.createSqsServer({
    port: 0,
    hostname: '127.0.0.1',
    accountId: ACCOUNT,
    emulateQueueCreationLifecycle: false,
  });
  const { port } = server.address() as { port: number };
  const sqs = clientOf(port);
  return {
    sqs,
    port,
    stop: async () => {
      sqs.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Polls `check` (every 50 ms, at most `tries` times) until it returns a value. */
async function until<T>(check: () => Promise<T | undefined>, tries = 200): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await check();
    if (value !== undefined) return value;
    await sleep(50);
  }
  throw new Error('condition not reached');
}

/**
 * Replaces what differs between two runs of the same calls (ids, handles, sequence numbers,
 * timestamps, the port) with stable names, keeping which values are equal: the first id seen is
 * `MessageId#0` wherever it appears again.
 */
function normalized(transcript: unknown, port: number): unknown {
  const names = new Map<string, string>();
  const rename = (key: string, value: string) => {
    if (!names.has(value)) names.set(value, `${key}#${names.size}`);
    return names.get(value);
  };
  const text = JSON.stringify(transcript)
    .replaceAll(`:${port}/`, ':PORT/')
    .replace(/receipt handle \\"[^\\"]+\\"/g, 'receipt handle \\"(handle)\\"');
  return JSON.parse(text, (key, value) => {
    if (key === '$metadata' || /Timestamp$/.test(key)) return undefined;
    if (typeof value === 'string' && /^(MessageId|ReceiptHandle|TaskHandle|SequenceNumber)$/.test(key))
      return rename(key, value);
    return value;
  });
}

const bodies = (messages: Message[] | undefined) =>
  (messages ?? []).map((m) => `${m.Body} x${m.Attributes?.ApproximateReceiveCount}`);

/** One sequence of calls through the whole surface the pipeline uses, returning what each call answered. */
async function scenario(sqs: SQSClient) {
  const out: Record<string, unknown> = {};
  const counts = async (QueueUrl: string) =>
    (
      await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl,
          AttributeNames: [
            'ApproximateNumberOfMessages',
            'ApproximateNumberOfMessagesNotVisible',
            'ApproximateNumberOfMessagesDelayed',
          ],
        }),
      )
    ).Attributes;
  // A long poll (1 s): on a loaded machine the stand-in's 40 ms short poll can end before its
  // first 10 ms scan (both packages; measured with load average 19).
  const receive = (QueueUrl: string, MaxNumberOfMessages: number, VisibilityTimeout: number) =>
    sqs.send(
      new ReceiveMessageCommand({
        QueueUrl,
        MaxNumberOfMessages,
        VisibilityTimeout,
        WaitTimeSeconds: 1,
        AttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );

  const dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'orders-dlq' }))).QueueUrl as string;
  const url = (
    await sqs.send(
      new CreateQueueCommand({
        QueueName: 'orders',
        Attributes: {
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn('orders-dlq'), maxReceiveCount: 3 }),
        },
      }),
    )
  ).QueueUrl as string;

  // Send: one by one, a batch with attributes, one delayed for the whole test.
  out.sent = [];
  for (const i of [1, 2, 3])
    (out.sent as unknown[]).push(
      await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: `m${i}` })),
    );
  out.batch = await sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: url,
      Entries: [4, 5, 6, 7, 8].map((i) => ({
        Id: `e${i}`,
        MessageBody: `m${i}`,
        MessageAttributes: { errorCode: { DataType: 'String', StringValue: `E${i}` } },
      })),
    }),
  );
  await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'late', DelaySeconds: 600 }));
  await sleep(30); // the stand-in's zero delay is a timer
  out.afterSend = await counts(url);

  // Receive 4 held, then delete, release and batch variants on them.
  const first = await receive(url, 4, 300);
  out.first = first.Messages;
  out.held = await counts(url);
  const [a, b, c, d] = (first.Messages ?? []).map((m) => m.ReceiptHandle as string);
  out.deleted = await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: a }));
  out.deletedBatch = await sqs.send(
    new DeleteMessageBatchCommand({
      QueueUrl: url,
      Entries: [
        { Id: 'ok', ReceiptHandle: b },
        { Id: 'bad', ReceiptHandle: 'not-a-handle' },
      ],
    }),
  );
  out.released = await sqs.send(
    new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: c, VisibilityTimeout: 0 }),
  );
  out.extendedBatch = await sqs.send(
    new ChangeMessageVisibilityBatchCommand({
      QueueUrl: url,
      Entries: [
        { Id: 'keep', ReceiptHandle: d, VisibilityTimeout: 600 },
        { Id: 'gone', ReceiptHandle: a, VisibilityTimeout: 600 },
      ],
    }),
  );
  await sleep(30);
  out.afterChanges = await counts(url);

  // The rest, held; then m3, released, received a third time and released: past maxReceiveCount
  // 3, it dead-letters (a release is not a receive).
  const rest = await receive(url, 10, 300);
  out.rest = bodies(rest.Messages);
  out.restAll = await counts(url);
  const release = (ReceiptHandle: string | undefined) =>
    sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle, VisibilityTimeout: 0 }));
  await release((rest.Messages ?? []).find((m) => m.Body === 'm3')?.ReceiptHandle);
  const third = await receive(url, 10, 300);
  out.third = bodies(third.Messages);
  await release(third.Messages?.[0]?.ReceiptHandle);
  out.dlq = await until(async () => {
    const now = await counts(dlqUrl);
    return now?.ApproximateNumberOfMessages === '1' ? now : undefined;
  });
  const dead = await receive(dlqUrl, 10, 300);
  out.dead = dead.Messages;
  out.sourceAfterDeadLetter = await counts(url);

  // A move task takes it back to its source.
  await sqs.send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: dlqUrl,
      ReceiptHandle: dead.Messages?.[0]?.ReceiptHandle,
      VisibilityTimeout: 0,
    }),
  );
  await sleep(30);
  out.task = await sqs.send(
    new StartMessageMoveTaskCommand({ SourceArn: arn('orders-dlq'), MaxNumberOfMessagesPerSecond: 10 }),
  );
  out.taskDone = await until(async () => {
    const [task] =
      (await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arn('orders-dlq') }))).Results ?? [];
    return task?.Status === 'COMPLETED' ? task : undefined;
  });
  out.dlqAfterMove = await counts(dlqUrl);
  out.sourceAfterMove = await counts(url);
  await sleep(30);
  out.moved = bodies((await receive(url, 10, 300)).Messages);

  // FIFO: content-based deduplication within the 5-minute window.
  const fifo = (
    await sqs.send(
      new CreateQueueCommand({
        QueueName: 'orders.fifo',
        Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
      }),
    )
  ).QueueUrl as string;
  out.fifoSent = [];
  for (const [body, group] of [
    ['f1', 'g1'],
    ['f1', 'g1'],
    ['f2', 'g1'],
    ['f1', 'g2'],
  ] as const)
    (out.fifoSent as unknown[]).push(
      await sqs.send(new SendMessageCommand({ QueueUrl: fifo, MessageBody: body, MessageGroupId: group })),
    );
  await sleep(30);
  out.fifoCounts = await counts(fifo);
  const fifoReceived = await receive(fifo, 10, 300);
  out.fifoReceived = fifoReceived.Messages;
  out.fifoDelete = await sqs.send(
    new DeleteMessageCommand({ QueueUrl: fifo, ReceiptHandle: fifoReceived.Messages?.[0]?.ReceiptHandle }),
  );
  out.fifoStaleRelease = await sqs
    .send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: fifo,
        ReceiptHandle: fifoReceived.Messages?.[0]?.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    )
    .catch((e: Error) => e.name);
  out.fifoAfter = await counts(fifo);

  // PurgeQueue starts (the stand-in clears after 60 s); a second one while it runs is refused.
  out.purge = await sqs.send(new PurgeQueueCommand({ QueueUrl: dlqUrl }));
  out.purgeAgain = await sqs.send(new PurgeQueueCommand({ QueueUrl: dlqUrl })).catch((e: Error) => e.name);
  return out;
}

describe('the edited SQS stand-in (local/aws-standins/sqs-indexed.ts) through the calls the pipeline makes', () => {
  let run: Record<string, unknown> = {};
  beforeAll(async () => {
    const server = await start(indexed);
    try {
      run = normalized(await scenario(server.sqs), server.port) as Record<string, unknown>;
    } finally {
      await server.stop();
    }
  });

  it('counts visible messages apart from in-flight ones, and only receives as receives', () => {
    expect(run.afterSend).toEqual({
      ApproximateNumberOfMessages: '8',
      ApproximateNumberOfMessagesNotVisible: '0',
      ApproximateNumberOfMessagesDelayed: '1',
    });
    expect(run.held).toMatchObject({
      ApproximateNumberOfMessages: '4',
      ApproximateNumberOfMessagesNotVisible: '4',
    });
    // m1, m2 deleted; m3 released; m4 held; the rest visible.
    expect(run.afterChanges).toMatchObject({
      ApproximateNumberOfMessages: '5',
      ApproximateNumberOfMessagesNotVisible: '1',
    });
    expect(run.rest).toEqual(['m3 x2', 'm5 x1', 'm6 x1', 'm7 x1', 'm8 x1']);
    expect(run.third).toEqual(['m3 x3']);
    expect((run.deletedBatch as { Failed: Array<{ Id: string }> }).Failed.map((f) => f.Id)).toEqual(['bad']);
  });

  it('dead-letters by RedrivePolicy keeping the receive count, and a move task brings the message back as new', () => {
    const [dead] = run.dead as Message[];
    expect(dead?.Body).toBe('m3');
    expect(dead?.Attributes?.ApproximateReceiveCount).toBe('4');
    expect(dead?.Attributes?.DeadLetterQueueSourceArn).toBe(arn('orders'));
    expect(run.sourceAfterDeadLetter).toMatchObject({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '5',
    });
    expect(run.taskDone).toMatchObject({ Status: 'COMPLETED', ApproximateNumberOfMessagesMoved: 1 });
    expect(run.dlqAfterMove).toMatchObject({ ApproximateNumberOfMessages: '0' });
    expect(run.moved).toEqual(['m3 x1']);
  });

  it('deduplicates FIFO sends by content across the queue (DeduplicationScope queue), and refuses a deleted message handle', () => {
    const ids = (run.fifoSent as Array<{ MessageId: string }>).map((s) => s.MessageId);
    expect(ids).toEqual([ids[0], ids[0], ids[2], ids[0]]);
    expect(ids[2]).not.toBe(ids[0]);
    expect(run.fifoCounts).toMatchObject({ ApproximateNumberOfMessages: '2' });
    expect(run.fifoStaleRelease).toBe('InvalidParameterValue');
    expect(run.purgeAgain).toBe('PurgeQueueInProgress');
  });

  it('clears a purged queue: counts and receives start from nothing, and new messages are found by id', async () => {
    const { service, requestHandler } = indexed.createRequestHandler({
      port: 0,
      emulateQueueCreationLifecycle: false,
    });
    const server = (await import('node:http')).createServer((req, res) => void requestHandler(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const sqs = clientOf((server.address() as { port: number }).port);
    try {
      const QueueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'purged' }))).QueueUrl as string;
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'before' }));
      await sleep(30);
      await sqs.send(new ReceiveMessageCommand({ QueueUrl, VisibilityTimeout: 300 }));
      // What PurgeQueue does after its 60 s: the queue's clearRecords().
      service.Queues.find((q) => q.QueueName === 'purged')?.clearRecords();
      const cleared = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }));
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'after' }));
      await sleep(30);
      const [after] =
        (await sqs.send(new ReceiveMessageCommand({ QueueUrl, VisibilityTimeout: 300 }))).Messages ?? [];
      await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: after?.ReceiptHandle }));
      const emptied = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }));

      expect(cleared.Attributes).toMatchObject({
        ApproximateNumberOfMessages: '0',
        ApproximateNumberOfMessagesNotVisible: '0',
      });
      expect(after?.Body).toBe('after');
      expect(emptied.Attributes).toMatchObject({ ApproximateNumberOfMessages: '0' });
    } finally {
      sqs.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('the edits of the local-aws-sqs bundle', () => {
  const require = createRequire(import.meta.url);
  const source = readFileSync(require.resolve('local-aws-sqs'), 'utf8');
  const { version } = require('local-aws-sqs/package.json') as { version: string };

  it('are for the pinned version, and each one applies to the installed bundle', () => {
    const edited = applyEdits(source, version);

    expect(version).toBe(EDITED_VERSION);
    for (const edit of EDITS) {
      expect(edited).toContain(edit.replace);
      expect(edited).not.toContain(edit.find);
    }
  });

  it('throw an error naming the version and the edit whose anchor is missing', () => {
    const edits = [...EDITS, { name: 'receive-scan-v3', find: 'for(let y of S(this,Q))', replace: '' }];

    const attempt = () => applyEdits(source, version, edits);

    expect(attempt).toThrow(SqsStandinPatchError);
    expect(attempt).toThrow(
      `local-aws-sqs ${version}: edit 'receive-scan-v3' expects its anchor exactly once, found 0`,
    );
  });

  it('throw when an anchor occurs more than once (an edit must point at one place)', () => {
    const attempt = () => applyEdits(source, version, [{ name: 'too-wide', find: 'S(this,E)', replace: '' }]);

    expect(attempt).toThrow("edit 'too-wide' expects its anchor exactly once, found 19");
  });
});

describe('indexedRecords', () => {
  const record = (id: string) => ({ visible: true, delayed: false, record: { MessageId: id } });

  it('finds the first of two records that share a MessageId, as the unedited findIndex did', () => {
    const records = indexedRecords();
    const first = record('same');
    records.push(record('other'), first, record('same'));

    expect(records.findById('same')).toBe(first);
    expect(records.indexOfId('same')).toBe(1);
    records.splice(1, 1);
    expect(records.indexOfId('same')).toBe(1);
    expect(records.indexOfId('missing')).toBe(-1);
  });

  it('keeps the in-flight and not-delayed counts as records change and leave', () => {
    const records = indexedRecords();
    const [a, b, c] = [record('a'), record('b'), { ...record('c'), delayed: true }];
    records.push(a, b, c);
    a.visible = false;
    b.visible = false;
    b.visible = false;
    records.splice(records.indexOfId('a'), 1);

    expect([records.invisible, records.notDelayed, records.length]).toEqual([1, 1, 2]);
    expect(records.filter((r) => r.visible).map((r) => r.record.MessageId)).toEqual(['c']);
    expect(Array.isArray(records.filter(() => true))).toBe(true);
  });

  it('hands out receivable records in queue order, again once they turn visible', () => {
    const records = indexedRecords();
    const [a, b, c] = [record('a'), record('b'), record('c')];
    records.push(a, b, c);
    const take = () =>
      [...records.receivable()].map((r) => {
        r.visible = false;
        return r.record.MessageId;
      });

    const firstTake = take();
    c.visible = true;
    a.visible = true;
    const secondTake = take();

    expect(firstTake).toEqual(['a', 'b', 'c']);
    expect(secondTake).toEqual(['a', 'c']);
    expect(take()).toEqual([]);
  });
});
