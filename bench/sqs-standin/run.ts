/**
 * The SQS stand-in benchmark (`npm run bench:sqs-standin`; depths default to 1,000, 20,000 and
 * 100,000): per depth, for the unedited `local-aws-sqs` and for the indexed one
 * (local/aws-standins/sqs-indexed.ts), each on a server of its own in a process of its own (client
 * and server share it, as in the pipeline's local runs):
 *
 * 1. seed a standard queue with `depth` messages (SendMessageBatch, 10 a call);
 * 2. receive everything, holding it (ReceiveMessage, 10 a call, VisibilityTimeout 300 s);
 * 3. release everything (ChangeMessageVisibilityBatch to 0, 10 a call, in receive order);
 * 4. delete everything (DeleteMessageBatch, 10 a call, in receive order).
 *
 * It prints, per phase, the wall time per message of the first 1,000 and of the last 1,000
 * messages (4 calls in flight), last/first, and original/indexed for the last 1,000. On a stand-in
 * whose per-message cost stays flat with depth, last/first stays near 1.
 *
 * The unedited package costs the square of the depth in the release and delete phases, so above
 * `--original-full-max` (default 20,000) its release and delete phases handle only the first
 * 1,000 and the last 1,000 received messages (the queue stays at full depth meanwhile); the table
 * says so ("ends"). Compare figures within one run: the machine is shared.
 *
 * Usage: npx tsx bench/sqs-standin/run.ts [--original-full-max=N] [--only=original|indexed] [depths...]
 */
import { spawn } from 'node:child_process';
import type { Server } from 'node:http';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import {
  ChangeMessageVisibilityBatchCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import * as original from 'local-aws-sqs';
import * as indexed from '../../local/aws-standins/sqs-indexed.js';

const args = process.argv.slice(2);
const fullMaxArg = args.find((a) => a.startsWith('--original-full-max='));
const ORIGINAL_FULL_MAX = fullMaxArg ? Number(fullMaxArg.split('=')[1]) : 20_000;
const onlyArg = args.find((a) => a.startsWith('--only='));
const IMPLS = onlyArg ? [onlyArg.split('=')[1] as Impl] : (['original', 'indexed'] as const);
const DEPTHS = args.filter((a) => !a.startsWith('--')).map(Number);
if (DEPTHS.length === 0) DEPTHS.push(1_000, 20_000, 100_000);
const IN_FLIGHT = 4;
const ENDS = 1_000;

type Impl = 'original' | 'indexed';
type Phase = 'seed' | 'receive' | 'release' | 'delete';

/** One phase: milliseconds per message over its first and last {@link ENDS} messages. */
interface PhaseResult {
  firstMs: number;
  lastMs: number;
  totalS: number;
  /** Whether only the first and last {@link ENDS} messages went through the phase. */
  endsOnly: boolean;
}

/**
 * Makes calls (each resolves to the messages it handled) with {@link IN_FLIGHT} in flight while
 * `more()` says so, and times the first and the last {@link ENDS} of `messages`.
 */
async function timedWhile(
  more: () => boolean,
  call: () => Promise<number>,
  messages: number,
): Promise<PhaseResult> {
  const t0 = performance.now();
  let done = 0;
  let firstAt = Number.NaN;
  let lastFrom = messages <= ENDS ? t0 : Number.NaN;
  const worker = async () => {
    while (more()) {
      const before = done;
      const handled = await call();
      done += handled;
      if (Number.isNaN(firstAt) && done >= Math.min(ENDS, messages)) firstAt = performance.now();
      if (Number.isNaN(lastFrom) && before < messages - ENDS && done >= messages - ENDS)
        lastFrom = performance.now();
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const end = performance.now();
  return {
    firstMs: (firstAt - t0) / Math.min(ENDS, messages),
    lastMs: (end - lastFrom) / Math.min(ENDS, messages),
    totalS: (end - t0) / 1000,
    endsOnly: false,
  };
}

/** {@link timedWhile} over a list of calls, in order. */
function timed(calls: Array<() => Promise<number>>, messages: number): Promise<PhaseResult> {
  let next = 0;
  return timedWhile(
    () => next < calls.length,
    () => (calls[next++] as () => Promise<number>)(),
    messages,
  );
}

const chunks = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

async function runDepth(impl: Impl, depth: number): Promise<Record<Phase, PhaseResult>> {
  const create = impl === 'original' ? original.createSqsServer : indexed.createSqsServer;
  const server: Server = await create({
    port: 0,
    hostname: '127.0.0.1',
    emulateQueueCreationLifecycle: false,
  });
  const { port } = server.address() as { port: number };
  const sqs = new SQSClient({
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${port}`,
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
  });
  try {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `bench-${impl}-${depth}` }));
    const body = JSON.stringify({ orderId: 'x'.repeat(36), amount: 42, note: 'y'.repeat(200) });
    const seed = await timed(
      chunks(
        Array.from({ length: depth }, (_, i) => i),
        10,
      ).map((ids) => async () => {
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl,
            Entries: ids.map((i) => ({ Id: String(i), MessageBody: body })),
          }),
        );
        return ids.length;
      }),
      depth,
    );
    await new Promise((r) => setTimeout(r, 50)); // the stand-in's zero delay is a timer

    const handles: string[] = [];
    let empties = 0;
    const receiveOne = async (): Promise<number> => {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 300 }),
      );
      for (const m of Messages) handles.push(m.ReceiptHandle as string);
      empties = Messages.length === 0 ? empties + 1 : 0;
      if (empties > 200)
        throw new Error(`${impl}: ${handles.length}/${depth} received, then 200 empty receives`);
      return Messages.length;
    };
    const receive = await timedWhile(() => handles.length < depth, receiveOne, depth);

    const endsOnly = impl === 'original' && depth > ORIGINAL_FULL_MAX;
    const phaseOver = async (handle: (batch: string[]) => Promise<number>): Promise<PhaseResult> => {
      if (!endsOnly) {
        return timed(
          chunks(handles, 10).map((batch) => () => handle(batch)),
          handles.length,
        );
      }
      const head = await timed(
        chunks(handles.slice(0, ENDS), 10).map((batch) => () => handle(batch)),
        ENDS,
      );
      const tail = await timed(
        chunks(handles.slice(-ENDS), 10).map((batch) => () => handle(batch)),
        ENDS,
      );
      return { firstMs: head.firstMs, lastMs: tail.lastMs, totalS: head.totalS + tail.totalS, endsOnly };
    };
    const entries = (batch: string[]) => batch.map((ReceiptHandle, i) => ({ Id: String(i), ReceiptHandle }));
    const release = await phaseOver(async (batch) => {
      const out = await sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl,
          Entries: entries(batch).map((e) => ({ ...e, VisibilityTimeout: 0 })),
        }),
      );
      if (out.Failed?.length) throw new Error(`${impl}: release failed ${JSON.stringify(out.Failed[0])}`);
      return batch.length;
    });
    const del = await phaseOver(async (batch) => {
      const out = await sqs.send(new DeleteMessageBatchCommand({ QueueUrl, Entries: entries(batch) }));
      if (out.Failed?.length) throw new Error(`${impl}: delete failed ${JSON.stringify(out.Failed[0])}`);
      return batch.length;
    });
    return { seed, receive, release, delete: del };
  } finally {
    sqs.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

const fmt = (n: number, digits = 2) => n.toFixed(digits).padStart(8);

/** Runs one stand-in at one depth in a process of its own, so no run inherits another's heap. */
async function inChild(impl: Impl, depth: number): Promise<Record<Phase, PhaseResult>> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), ...args, `--child=${impl}:${depth}`],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`${impl} at ${depth} failed (exit ${code})`);
  return JSON.parse(out.trim().split('\n').at(-1) as string) as Record<Phase, PhaseResult>;
}

const childArg = args.find((a) => a.startsWith('--child='));
if (childArg) {
  const [impl, depth] = childArg.split('=')[1]?.split(':') ?? [];
  console.log(JSON.stringify(await runDepth(impl as Impl, Number(depth))));
} else {
  console.log(
    `SQS stand-in: ms per message, first vs last ${ENDS.toLocaleString('en-US')} of each phase, ` +
      `${IN_FLIGHT} calls in flight, 10 messages a call (load ${loadavg()[0]?.toFixed(1)})`,
  );
  console.log(
    'depth    | stand-in | phase   |  first ms |   last ms | last/first | phase s | original/indexed (last)',
  );
  for (const depth of DEPTHS) {
    const results: Partial<Record<Impl, Record<Phase, PhaseResult>>> = {};
    for (const impl of IMPLS) {
      const mine = await inChild(impl, depth);
      results[impl] = mine;
      for (const phase of ['seed', 'receive', 'release', 'delete'] as const) {
        const r = mine[phase];
        const base = results.original?.[phase];
        const vs = impl === 'indexed' && base ? fmt(base.lastMs / r.lastMs, 1) : ''.padStart(8);
        console.log(
          `${depth.toLocaleString('en-US').padEnd(8)} | ${impl.padEnd(8)} | ${phase.padEnd(7)} | ${fmt(r.firstMs, 3)}  | ${fmt(r.lastMs, 3)}  | ${fmt(r.lastMs / r.firstMs)}   | ${fmt(r.totalS, 1)}${r.endsOnly ? ' (ends)' : '       '} | ${vs}`,
        );
      }
    }
  }
  console.log(`load at the end ${loadavg()[0]?.toFixed(1)}`);
}
