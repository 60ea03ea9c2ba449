/**
 * How an envelope is laid out in the pipeline table (platform/table.ts): the envelope item
 * `DLQ#<dlqArn>` / `MSG#<messageId>` (with the `byIdempotencyKey` index keys and, for a small body,
 * the body bytes), its body chunk items `MSG#<messageId>#CHUNK#<n>`, the PartiQL statement that
 * updates a seen envelope's observation fields, and the way back from an item to a
 * {@link StoredEnvelope}. Pure: no DynamoDB calls.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html (400 KB items)
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ql-reference.update.html
 */
import { type Item, itemBytes, type Statement } from '#platform/dynamo-batches.js';
import { readShape, shapeOf } from '#platform/record-shapes.js';
import { keys, TABLE } from '#platform/table.js';
import { BODY_CHUNK_BYTES, cutText, type EnvelopeWrite } from './envelope.js';
import type { Envelope, StoredMessageAttribute } from './model.js';

/** An envelope as read back; `inlineBody` holds the body bytes when they are stored inline. */
export interface StoredEnvelope extends Envelope {
  inlineBody?: Uint8Array;
  /** Set when attribute values were cut to keep the item under 400 KB (see `shrinkAttributes`). */
  attributesTruncated?: { originalItemBytes: number; keptCharsPerValue: number };
}

/** `entity` of an envelope item. */
export const ENVELOPE_ENTITY = 'envelope';
/** `entity` of a body chunk item. */
const CHUNK_ENTITY = 'chunk';

/** Envelope items above this size get their large attribute values cut (DynamoDB's cap is 400 KB). */
const MAX_ENVELOPE_ITEM_BYTES = 380_000;
/** Attribute values longer than this are cut when an envelope item is too large. */
const KEPT_ATTRIBUTE_CHARS = 1024;

/**
 * How long an envelope (and its body chunks) outlives its message's retention deadline, seconds:
 * 14 days. After the deadline SQS has deleted the message from the DLQ anyway; the envelope (with
 * its raw payload) stays for the post-incident review and exports, and covers a message parked
 * just before its deadline (the parking queue's own retention, at most 14 days, restarts on the
 * send). Then DynamoDB's TTL deletes it: payloads are not kept longer than they are needed.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html
 */
export const ENVELOPE_TTL_GRACE_SECONDS = 14 * 86_400;

/** The TTL (`expiresAt`, epoch seconds) of an envelope's items: its retention deadline plus the grace. */
export function envelopeExpiresAt(envelope: Pick<Envelope, 'retentionDeadline'>): number {
  return Math.ceil(envelope.retentionDeadline / 1000) + ENVELOPE_TTL_GRACE_SECONDS;
}

/** The key of an envelope item. */
export function envelopeKey(dlqArn: string, messageId: string): { pk: string; sk: string } {
  return { pk: keys.dlq(dlqArn), sk: keys.message(messageId) };
}

/** The envelope item of a write (attribute values cut when it would pass 400 KB). */
export function envelopeItem(w: EnvelopeWrite): Item {
  const e = w.envelope;
  const item: Item = {
    ...e,
    ...envelopeKey(e.dlqArn, e.messageId),
    [TABLE.keyIndex.partitionKey]: keys.idempotencyKey(e.idempotencyKey),
    [TABLE.keyIndex.sortKey]: `${keys.dlq(e.dlqArn)}#${keys.message(e.messageId)}`,
    entity: ENVELOPE_ENTITY,
    [TABLE.ttlAttribute]: envelopeExpiresAt(e),
    ...shapeOf('envelope'),
  };
  if (!e.bodyChunked) item.body = w.body;
  if (itemBytes(item) > MAX_ENVELOPE_ITEM_BYTES) return shrinkAttributes(item);
  return item;
}

/** The body chunk items of a write (none when the body is inline). */
export function chunkItems(w: EnvelopeWrite): Item[] {
  const e = w.envelope;
  const items: Item[] = [];
  for (let i = 0; i < e.bodyChunks; i++) {
    items.push({
      pk: keys.dlq(e.dlqArn),
      sk: keys.chunk(e.messageId, i),
      entity: CHUNK_ENTITY,
      ...shapeOf('body-chunk'),
      messageId: e.messageId,
      index: i,
      [TABLE.ttlAttribute]: envelopeExpiresAt(e),
      data: w.body.subarray(i * BODY_CHUNK_BYTES, (i + 1) * BODY_CHUNK_BYTES),
    });
  }
  return items;
}

/** An envelope seen again and what to write of it: `setIncident` when the stored item has no incident. */
export interface EnvelopeTouch {
  write: EnvelopeWrite;
  setIncident: boolean;
}

/**
 * The PartiQL UPDATE of a seen envelope's observation fields only (`lastSeenAt`, `receiveCount`,
 * `systemAttributes`, `inventoryId` / `inventoryStep`, and `incidentId` when asked). PartiQL's UPDATE changes an
 * existing item only (else ConditionalCheckFailed), so it never creates a half envelope.
 */
export function touchStatement(table: string, u: EnvelopeTouch): Statement {
  const e = u.write.envelope;
  const sets: Array<[string, unknown]> = [
    ['lastSeenAt', e.lastSeenAt],
    ['receiveCount', e.receiveCount],
    ['systemAttributes', e.systemAttributes],
  ];
  if (e.inventoryId !== undefined) sets.push(['inventoryId', e.inventoryId]);
  if (e.inventoryStep !== undefined) sets.push(['inventoryStep', e.inventoryStep]);
  if (u.setIncident && e.incidentId !== undefined) sets.push(['incidentId', e.incidentId]);
  const key = envelopeKey(e.dlqArn, e.messageId);
  return {
    Statement: `UPDATE "${table}" ${sets.map(([name]) => `SET "${name}" = ?`).join(' ')} WHERE pk = ? AND sk = ?`,
    Parameters: [...sets.map(([, value]) => value), key.pk, key.sk],
  };
}

/** How an error names an envelope item. */
export const envelopeRecord = (item: Item) => `envelope ${String(item.messageId)} in ${String(item.dlqArn)}`;

/**
 * The {@link StoredEnvelope} of an envelope item (keys and bookkeeping attributes dropped).
 * @throws UnknownShapeVersionError when a newer release wrote it.
 */
export function fromItem(item: Item): StoredEnvelope {
  const {
    pk: _pk,
    sk: _sk,
    gsi1pk: _g1,
    gsi1sk: _g2,
    entity: _e,
    body,
    stateChangedAt: _s,
    expiresAt: _ttl,
    ...rest
  } = readShape('envelope', item, envelopeRecord(item)) as Item & { body?: Uint8Array };
  const envelope = rest as unknown as StoredEnvelope;
  if (body !== undefined) envelope.inlineBody = body;
  return envelope;
}

/**
 * SQS allows up to 1 MiB of body *plus* message attributes, so attributes alone can push an envelope
 * item past 400 KB. Rather than fail the whole batch (and every other message with it), such an
 * envelope keeps every attribute name and DataType, cuts values to 1 KiB, and says so in
 * `attributesTruncated` (with the original size). The body is unaffected (chunked), and the
 * message itself, with its full attributes, is still in the DLQ.
 */
function shrinkAttributes(item: Item): Item {
  const before = itemBytes(item);
  const cut = (attrs: Record<string, StoredMessageAttribute> | undefined) =>
    Object.fromEntries(
      Object.entries(attrs ?? {}).map(([name, a]) => [
        name,
        {
          dataType: a.dataType,
          ...(a.stringValue !== undefined
            ? { stringValue: cutText(a.stringValue, KEPT_ATTRIBUTE_CHARS) }
            : {}),
          ...(a.binaryValueBase64 !== undefined
            ? { binaryValueBase64: a.binaryValueBase64.slice(0, KEPT_ATTRIBUTE_CHARS) }
            : {}),
        },
      ]),
    );
  const shrunk: Item = {
    ...item,
    messageAttributes: cut(item.messageAttributes as Record<string, StoredMessageAttribute>),
  };
  const sns = item.sns as Envelope['sns'];
  if (sns) shrunk.sns = { ...sns, messageAttributes: cut(sns.messageAttributes) };
  shrunk.attributesTruncated = { originalItemBytes: before, keptCharsPerValue: KEPT_ATTRIBUTE_CHARS };
  return shrunk;
}
