/**
 * What the local-stack benchmarks (bench/triage, bench/mover, bench/big-incident) share: counting
 * the SQS and DynamoDB calls a run makes (api-counters.ts on each SDK client), timing a run, the
 * seeded messages (an order payload of about 300 bytes with the error attributes a failing
 * consumer sets), the bare receive-and-write loop triage is compared with, and the table of
 * results. Numbers are for this machine and the local stand-ins; the benchmarks print ratios.
 */
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, sqsClient } from '#platform/clients.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import type { SeedMessage } from '../../test/support/seed-dlq.js';
import { type ApiCounts, countCalls, totalCalls } from './api-counters.js';

/** One measured run. */
export interface Measure {
  label: string;
  /** Messages the run handled. */
  messages: number;
  /** Wall time, milliseconds. */
  ms: number;
  /** SQS calls the run made. */
  sqs: number;
  /** DynamoDB calls the run made. */
  dynamo: number;
  /** DynamoDB read and write capacity units the run consumed (table and indexes). */
  rcu: number;
  wcu: number;
}

/** Counts API calls per service and measures runs against those counts. */
export interface ApiCallMeter {
  /** Counts every call `client` sends (a middleware at the initialize step) under `service`. */
  count(client: { middlewareStack: unknown }, service: 'sqs' | 'dynamo'): void;
  /** Runs `fn` (which returns how many messages it handled), timing it and counting its calls. */
  measure(label: string, fn: () => Promise<number>): Promise<Measure>;
}

/** A fresh meter (its counts start at zero). */
export function apiCallMeter(): ApiCallMeter {
  const counters: Partial<Record<'sqs' | 'dynamo', ApiCounts>> = {};
  const calls = (service: 'sqs' | 'dynamo') => totalCalls(counters[service] ?? { calls: {}, rcu: 0, wcu: 0 });
  return {
    count(client, service) {
      counters[service] = countCalls(client, { capacity: service === 'dynamo' });
    },
    async measure(label, fn) {
      const units = () => ({ rcu: counters.dynamo?.rcu ?? 0, wcu: counters.dynamo?.wcu ?? 0 });
      const before = { sqs: calls('sqs'), dynamo: calls('dynamo'), ...units() };
      const t0 = performance.now();
      const messages = await fn();
      const ms = performance.now() - t0;
      const after = units();
      return {
        label,
        messages,
        ms,
        sqs: calls('sqs') - before.sqs,
        dynamo: calls('dynamo') - before.dynamo,
        rcu: after.rcu - before.rcu,
        wcu: after.wcu - before.wcu,
      };
    },
  };
}

/**
 * The floor an inventory is compared with, on the same DLQ and stack: receive 10 with every
 * attribute (held for `visibilityTimeoutSeconds`), BatchWrite 25 minimal items (16 batches in
 * flight at most), then release every message; no envelope, no existence check, no summary.
 * Uses the shared SQS and document clients (so a meter on them counts its calls).
 * @returns messages received, and how many of their releases failed.
 */
export async function bareLoop(options: {
  dlqUrl: string;
  tableName: string;
  visibilityTimeoutSeconds: number;
}): Promise<{ seen: number; releaseFailures: number }> {
  const handles: string[] = [];
  let pending: Array<Record<string, unknown>> = [];
  let seen = 0;
  const writes: Promise<unknown>[] = [];
  const flush = () => {
    for (let i = 0; i < pending.length; i += 25) {
      const batch = pending.slice(i, i + 25);
      writes.push(
        documentClient().send(
          new BatchWriteCommand({
            RequestItems: { [options.tableName]: batch.map((Item) => ({ PutRequest: { Item } })) },
          }),
        ),
      );
    }
    pending = [];
  };
  for (;;) {
    const out = await sqsClient().send(
      new ReceiveMessageCommand({
        QueueUrl: options.dlqUrl,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: options.visibilityTimeoutSeconds,
        WaitTimeSeconds: 1,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
        AttributeNames: ['All'],
      }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) break;
    for (const m of messages) {
      handles.push(m.ReceiptHandle as string);
      pending.push({ pk: 'BENCH', sk: m.MessageId, body: m.Body });
      seen++;
    }
    if (pending.length >= 100) {
      flush();
      if (writes.length >= 16) await Promise.all(writes.splice(0));
    }
  }
  flush();
  await Promise.all(writes);
  const releaseFailures = await createSqsQueues().changeVisibility(options.dlqUrl, handles, 0);
  return { seen, releaseFailures };
}

/** Messages per millisecond. */
export const rate = (m: Measure): number => m.messages / m.ms;

/** Prints one row per run: messages, seconds, messages/s and calls per message. */
export function printMeasures(measures: readonly Measure[]): void {
  console.table(
    measures.map((m) => ({
      run: m.label,
      messages: m.messages,
      seconds: Number((m.ms / 1000).toFixed(2)),
      'msg/s': Math.round(rate(m) * 1000),
      'SQS calls/msg': Number((m.sqs / m.messages).toFixed(3)),
      'DynamoDB calls/msg': Number((m.dynamo / m.messages).toFixed(3)),
      'API calls/msg': Number(((m.sqs + m.dynamo) / m.messages).toFixed(3)),
      'DynamoDB RCU/msg': Number((m.rcu / m.messages).toFixed(3)),
      'DynamoDB WCU/msg': Number((m.wcu / m.messages).toFixed(3)),
    })),
  );
}

/**
 * `n` order messages as a failing consumer would dead-letter them.
 * @param failure - the `error-class` and `error-message` attributes of message `i`.
 */
export function orderMessages(
  n: number,
  failure: (i: number) => { errorClass: string; errorMessage: string },
): SeedMessage[] {
  return Array.from({ length: n }, (_, i) => {
    const { errorClass, errorMessage } = failure(i);
    return {
      body: JSON.stringify({
        orderId: `o-${i}`,
        items: [{ sku: `sku-${i % 97}`, qty: (i % 5) + 1 }],
        note: 'x'.repeat(200),
      }),
      attributes: {
        'error-class': { DataType: 'String', StringValue: errorClass },
        'error-message': { DataType: 'String', StringValue: errorMessage },
      },
    };
  });
}
