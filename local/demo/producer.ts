/**
 * The demo producer: order messages with the producer's own id in the body (`$.orderId`), a few
 * of them poison (a payload the consumer rejects every time).
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html
 */
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** Options of {@link produceOrders}. */
export interface ProduceOptions {
  /** How many messages. */
  count: number;
  /** Every n-th message is poison (0: none). @default 20 */
  poisonEvery?: number;
  /** First order number. @default 1 */
  firstOrder?: number;
  /** Order id prefix (distinct per scenario, so keys never collide). @default 'order' */
  prefix?: string;
  /**
   * Order ids are integers from this one on, written in the body as JSON numbers (ids beyond 2^53
   * that `JSON.parse` cannot tell apart). @default string ids (`order-000042`)
   */
  numericIdsFrom?: bigint;
  /** FIFO: the MessageGroupId of the i-th message (0-based). */
  groupOf?: (i: number) => string;
  /** Which messages are poison, by 0-based index; replaces `poisonEvery`. */
  poisonAt?: (i: number) => boolean;
}

/** What was sent. */
export interface Produced {
  /** Order ids sent, in order. */
  orderIds: string[];
  /** Order ids of poison messages. */
  poisonIds: string[];
  /** The exact body sent for each order id (exports are checked byte for byte against it). */
  bodies: Record<string, string>;
}

/** The order id of order number `n` (`order-000042`). */
export function orderId(n: number, prefix = 'order'): string {
  return `${prefix}-${String(n).padStart(6, '0')}`;
}

/** True for a payload the demo consumer rejects on every attempt. */
export function isPoison(body: string): boolean {
  try {
    const order = JSON.parse(body) as { quantity?: unknown };
    return typeof order.quantity !== 'number';
  } catch {
    return true;
  }
}

/**
 * The `i`-th order (0-based) of a run: its id, whether it is poison (every `poisonEvery`-th), and
 * its body. The producer and the DLQ seeding (seed.ts) build the same orders.
 */
export function order(
  i: number,
  options: {
    firstOrder?: number;
    poisonEvery?: number;
    prefix?: string | undefined;
    numericIdsFrom?: bigint | undefined;
    poisonAt?: ((i: number) => boolean) | undefined;
  } = {},
): { id: string; poison: boolean; body: string } {
  const poisonEvery = options.poisonEvery ?? 20;
  const n = (options.firstOrder ?? 1) + i;
  const numeric = options.numericIdsFrom;
  const id = numeric === undefined ? orderId(n, options.prefix) : String(numeric + BigInt(i));
  const poison = options.poisonAt ? options.poisonAt(i) : poisonEvery > 0 && (i + 1) % poisonEvery === 0;
  const body = poison
    ? { orderId: id, sku: `SKU-${n % 97}`, quantity: 'two' }
    : { orderId: id, sku: `SKU-${n % 97}`, quantity: (n % 5) + 1 };
  const json = JSON.stringify(body);
  return {
    id,
    poison,
    body: numeric === undefined ? json : json.replace(`"orderId":"${id}"`, `"orderId":${id}`),
  };
}

/** The orders {@link produceOrders} sends, and what it records of them, without sending anything. */
export function orderMessages(options: ProduceOptions): {
  orders: Array<ReturnType<typeof order>>;
  produced: Produced;
} {
  const orders = Array.from({ length: options.count }, (_, i) => order(i, options));
  return {
    orders,
    produced: {
      orderIds: orders.map((o) => o.id),
      poisonIds: orders.filter((o) => o.poison).map((o) => o.id),
      bodies: Object.fromEntries(orders.map((o) => [o.id, o.body])),
    },
  };
}

/**
 * Sends `count` order messages in batches of 10 (the SQS maximum per batch).
 * @throws Error when SQS reports a failed entry.
 */
export async function produceOrders(
  sqs: SQSClient,
  queueUrl: string,
  options: ProduceOptions,
): Promise<Produced> {
  const orderIds: string[] = [];
  const poisonIds: string[] = [];
  const bodies: Record<string, string> = {};
  for (let start = 0; start < options.count; start += 10) {
    const entries = [];
    for (let i = start; i < Math.min(start + 10, options.count); i++) {
      const { id, poison, body } = order(i, options);
      orderIds.push(id);
      if (poison) poisonIds.push(id);
      bodies[id] = body;
      entries.push({
        Id: String(i),
        MessageBody: bodies[id],
        MessageAttributes: { 'content-type': { DataType: 'String', StringValue: 'application/json' } },
        ...(options.groupOf ? { MessageGroupId: options.groupOf(i) } : {}),
      });
    }
    const out = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    if (out.Failed && out.Failed.length > 0)
      throw new Error(`SendMessageBatch failed for ${out.Failed.length} entries: ${out.Failed[0]?.Message}`);
  }
  return { orderIds, poisonIds, bodies };
}
