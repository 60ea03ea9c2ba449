/**
 * What SQS does that `local-aws-sqs` 2.0.2 does not, as functions its edited bundle calls
 * (local/aws-standins/sqs-indexed.ts holds the anchored edits that call them):
 *
 * - FIFO deduplication over the 5-minute interval, deleted messages included ({@link seen},
 *   {@link remember}); the package compared only with messages still in the queue.
 * - Message sizes in UTF-8 bytes, binary attributes by their raw bytes ({@link bytes},
 *   {@link attributeBytes}); the package counted characters and base64 text.
 * - Dead-lettering keeps the message's receive count, and a FIFO DLQ copy's deduplication id is
 *   its message id ({@link deadLettered}); the package started the count at 0 again.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-key-terms.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html
 */

/** SQS's deduplication interval, milliseconds. */
export const DEDUPLICATION_INTERVAL_MS = 5 * 60_000;

/** The queue of the bundle, as far as these functions read it. */
interface FifoQueueLike {
  FifoQueue: boolean;
  DeduplicationScope: 'queue' | 'messageGroup';
}

/** A record of the bundle (`createRecord`'s first element). */
interface RecordLike {
  MessageId: string;
  attributes: Record<string, string | undefined>;
}

interface Sent {
  at: number;
  group: string;
  messageId: string;
  sequenceNumber: string | undefined;
}

/** Per queue: deduplication id to the sends within the interval, oldest first. */
const history = new WeakMap<object, { byId: Map<string, Sent[]>; order: Array<[string, Sent]> }>();
let clock: () => number = Date.now;

/** Replaces the clock of the deduplication interval (tests); returns the previous one. */
export function setDeduplicationClock(now: () => number): () => number {
  const previous = clock;
  clock = now;
  return previous;
}

function historyOf(queue: object) {
  let h = history.get(queue);
  if (!h) {
    h = { byId: new Map(), order: [] };
    history.set(queue, h);
  }
  const oldest = clock() - DEDUPLICATION_INTERVAL_MS;
  let drop = 0;
  while (drop < h.order.length && (h.order[drop] as [string, Sent])[1].at <= oldest) {
    const [id, sent] = h.order[drop] as [string, Sent];
    const list = h.byId.get(id);
    if (list?.[0] === sent) list.shift();
    if (list?.length === 0) h.byId.delete(id);
    drop += 1;
  }
  if (drop > 0) h.order.splice(0, drop);
  return h;
}

/**
 * The earlier send this one duplicates, within the interval and the queue's DeduplicationScope,
 * shaped as the bundle's record (its MessageId and SequenceNumber are answered again); undefined
 * when none.
 */
export function seen(
  queue: FifoQueueLike,
  group: unknown,
  deduplicationId: unknown,
): { record: { MessageId: string; attributes: { SequenceNumber: string | undefined } } } | undefined {
  const list = historyOf(queue).byId.get(String(deduplicationId));
  const match = list?.find((s) => queue.DeduplicationScope !== 'messageGroup' || s.group === String(group));
  return (
    match && { record: { MessageId: match.messageId, attributes: { SequenceNumber: match.sequenceNumber } } }
  );
}

/** Remembers a FIFO message the queue accepted, for {@link seen}. */
export function remember(queue: FifoQueueLike, record: RecordLike): void {
  const id = record.attributes.MessageDeduplicationId;
  if (!queue.FifoQueue || id === undefined) return;
  const h = historyOf(queue);
  const sent: Sent = {
    at: clock(),
    group: String(record.attributes.MessageGroupId),
    messageId: record.MessageId,
    sequenceNumber: record.attributes.SequenceNumber,
  };
  const list = h.byId.get(id);
  if (list) list.push(sent);
  else h.byId.set(id, [sent]);
  h.order.push([id, sent]);
}

/** A string's length in UTF-8 bytes. */
export function bytes(text: unknown): number {
  return typeof text === 'string' ? Buffer.byteLength(text, 'utf8') : 0;
}

/**
 * What message attributes add to a message's size: each name, data type and value, strings in
 * UTF-8 bytes and binary values by their raw bytes (the wire carries them in base64).
 */
export function attributeBytes(attributes: unknown): number {
  if (!attributes || typeof attributes !== 'object') return 0;
  let total = 0;
  for (const [name, value] of Object.entries(attributes as Record<string, unknown>)) {
    total += bytes(name);
    if (!value || typeof value !== 'object') continue;
    const { DataType, StringValue, BinaryValue } = value as Record<string, unknown>;
    total += bytes(DataType) + bytes(StringValue);
    if (typeof BinaryValue === 'string') total += Buffer.from(BinaryValue, 'base64').length;
    else if (BinaryValue instanceof Uint8Array) total += BinaryValue.length;
  }
  return total;
}

/**
 * The DLQ copy of a dead-lettered message: it keeps the receive count (and the first receive's
 * time) it had in the source queue.
 * @param added - what the DLQ's `setRecord` returned.
 * @param from - the source queue's record.
 */
export function deadLettered(added: { record?: RecordLike } | undefined, from: RecordLike): void {
  const attributes = added?.record?.attributes;
  if (!attributes) return;
  attributes.ApproximateReceiveCount = from.attributes.ApproximateReceiveCount;
  attributes.ApproximateFirstReceiveTimestamp = from.attributes.ApproximateFirstReceiveTimestamp;
}
