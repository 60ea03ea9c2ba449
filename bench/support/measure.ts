/**
 * What the local-stack benchmarks (bench/triage, bench/mover) share: counting the SQS and DynamoDB
 * calls a run makes (a middleware on each SDK client), timing a run, the seeded messages (an order
 * payload of about 300 bytes with the error attributes a failing consumer sets) and the table of
 * results. Numbers are for this machine and the local stand-ins; the benchmarks print ratios.
 */
import type { SeedMessage } from '../../test/support/seed-dlq.js';

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
  const calls = { sqs: 0, dynamo: 0 };
  return {
    count(client, service) {
      (client.middlewareStack as { add: (m: unknown, o: unknown) => void }).add(
        (next: (a: unknown) => unknown) => async (args: unknown) => {
          calls[service]++;
          return next(args);
        },
        { step: 'initialize', name: `count-${service}` },
      );
    },
    async measure(label, fn) {
      const before = { ...calls };
      const t0 = performance.now();
      const messages = await fn();
      const ms = performance.now() - t0;
      return { label, messages, ms, sqs: calls.sqs - before.sqs, dynamo: calls.dynamo - before.dynamo };
    },
  };
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
