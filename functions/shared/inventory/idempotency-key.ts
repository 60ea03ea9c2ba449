/**
 * Idempotency keys per message (DESIGN.md "Idempotency keys per message").
 *
 * Order of precedence:
 * 1. the key the pipeline itself attached on an earlier redrive (`idempotency-key` attribute);
 * 2. the producer's own id, when the queue registration names where it lives
 *    (`producerKey.attribute` or `producerKey.jsonPath`);
 * 3. the SNS MessageId, for non-raw SNS notifications (stable across redrives, case C12);
 * 4. otherwise a SHA-256 over the source queue ARN, the raw body and the sorted message attributes.
 *
 * Never the SQS MessageId: a redrive (sample send or move task) gives the message a new one.
 * The attributes the pipeline adds on redrive (`redrive-count`, `redrive-id`, `idempotency-key`)
 * are left out of the hash, so a redriven message hashes to the same key.
 *
 * The consumer-side middleware and the redrive reuse {@link idempotencyKeyOfMessage} so every part
 * derives the same key from a received message.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html
 */
import { createHash } from 'node:crypto';
import type { Message, MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { QueueRegistration, StoredMessageAttribute } from './model.js';

/** Message attributes the pipeline adds on redrive; never part of the hash. */
export const PIPELINE_ATTRIBUTES = ['redrive-count', 'redrive-id', 'idempotency-key'] as const;

/** Where the key came from (same union as `Envelope.keySource`). */
export type KeySource = 'attribute' | 'jsonPath' | 'snsMessageId' | 'hash';

/** A derived key and where it came from. */
export interface DerivedKey {
  key: string;
  keySource: KeySource;
}

/** Everything key derivation looks at. */
export interface KeyInput {
  /** The queue the message belongs to: DeadLetterQueueSourceArn in a DLQ, the consumed queue's ARN in a consumer. `'unknown'` when not known. */
  sourceArn: string;
  /** The raw body exactly as received. */
  body: string;
  /** Message attributes as stored (binary values as base64). */
  messageAttributes: Record<string, StoredMessageAttribute>;
  /** Where the producer's own id lives, from the queue registration. */
  producerKey?: QueueRegistration['producerKey'];
  /** The SNS MessageId when the body is a non-raw SNS notification. */
  snsMessageId?: string;
  /** SNS message attributes (inside a non-raw body); searched for `producerKey.attribute` too. */
  snsMessageAttributes?: Record<string, StoredMessageAttribute>;
}

/** SHA-256 of a string's UTF-8 bytes (or of bytes), lower-case hex. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Reads a dotted JSON path (`$.a.b`) from a JSON body. Returns the value as a string when it is a
 * non-empty string or a finite number, else undefined (also for bodies that are not JSON).
 */
export function readJsonPath(body: string, jsonPath: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  for (const segment of jsonPath.replace(/^\$\.?/, '').split('.')) {
    if (segment === '') continue;
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  if (typeof value === 'string' && value.length > 0) return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

function attributeValue(attribute: StoredMessageAttribute | undefined): string | undefined {
  if (!attribute) return undefined;
  const value = attribute.stringValue ?? attribute.binaryValueBase64;
  return value !== undefined && value.length > 0 ? value : undefined;
}

/**
 * Longest key used as is, characters. Keys end up in DynamoDB key attributes (`KEY#<key>` and the
 * `byIdempotencyKey` index), which hold at most 2048 bytes: 256 characters are at most 1024 UTF-8
 * bytes.
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-partition-sort-keys
 */
export const MAX_KEY_CHARS = 256;

/** A found key, or `sha256:<hex>` of it when it is longer than {@link MAX_KEY_CHARS}. */
function boundedKey(value: string): string {
  return value.length > MAX_KEY_CHARS ? `sha256:${sha256Hex(value)}` : value;
}

/**
 * Derives the idempotency key of one message.
 *
 * @param input - body, attributes, source ARN and the registration's `producerKey`.
 * @returns the key and its source; the hash is lower-case hex SHA-256.
 * @example
 * deriveIdempotencyKey({ sourceArn, body: '{"orderId":"o-1"}', messageAttributes: {},
 *   producerKey: { jsonPath: '$.orderId' } }) // { key: 'o-1', keySource: 'jsonPath' }
 */
export function deriveIdempotencyKey(input: KeyInput): DerivedKey {
  const pipelineKey = attributeValue(input.messageAttributes['idempotency-key']);
  if (pipelineKey) return { key: boundedKey(pipelineKey), keySource: 'attribute' };
  const producerKey = input.producerKey;
  if (producerKey && 'attribute' in producerKey) {
    const value =
      attributeValue(input.messageAttributes[producerKey.attribute]) ??
      attributeValue(input.snsMessageAttributes?.[producerKey.attribute]);
    if (value) return { key: boundedKey(value), keySource: 'attribute' };
  }
  if (producerKey && 'jsonPath' in producerKey) {
    const value = readJsonPath(input.body, producerKey.jsonPath);
    if (value) return { key: boundedKey(value), keySource: 'jsonPath' };
  }
  if (input.snsMessageId) return { key: boundedKey(input.snsMessageId), keySource: 'snsMessageId' };
  return { key: hashKey(input.sourceArn, input.body, input.messageAttributes), keySource: 'hash' };
}

/**
 * SHA-256 over source ARN, raw body and the message attributes sorted by name (pipeline
 * attributes excluded). The canonical form is a JSON array, so no separator can be forged.
 */
export function hashKey(
  sourceArn: string,
  body: string,
  messageAttributes: Record<string, StoredMessageAttribute>,
): string {
  const skip = new Set<string>(PIPELINE_ATTRIBUTES);
  const attributes = Object.keys(messageAttributes)
    .filter((name) => !skip.has(name))
    .sort()
    .map((name) => {
      const a = messageAttributes[name] as StoredMessageAttribute;
      return [name, a.dataType, a.stringValue ?? null, a.binaryValueBase64 ?? null];
    });
  return sha256Hex(JSON.stringify([sourceArn, body, attributes]));
}

/**
 * Sets an own, enumerable property. SQS allows a message attribute named `__proto__`; a plain
 * assignment would change the object's prototype instead and the attribute would vanish from the
 * envelope and the key hash.
 */
export function setOwn<T>(target: Record<string, T>, name: string, value: T): void {
  Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
}

/** Converts SDK message attributes to the stored form (binary as base64, DataType kept as is). */
export function toStoredAttributes(
  attributes: Record<string, MessageAttributeValue> | undefined,
): Record<string, StoredMessageAttribute> {
  const out: Record<string, StoredMessageAttribute> = {};
  for (const [name, value] of Object.entries(attributes ?? {})) {
    const stored: StoredMessageAttribute = { dataType: value.DataType ?? 'String' };
    if (value.StringValue !== undefined) stored.stringValue = value.StringValue;
    if (value.BinaryValue !== undefined)
      stored.binaryValueBase64 = Buffer.from(value.BinaryValue).toString('base64');
    setOwn(out, name, stored);
  }
  return out;
}

/** The non-raw SNS notification inside an SQS body, when the body is one (case C12). */
export interface SnsNotification {
  topicArn: string;
  messageId: string;
  messageAttributes: Record<string, StoredMessageAttribute>;
}

/**
 * Recognises a non-raw SNS-to-SQS body: a JSON object with `Type: "Notification"`, `MessageId`,
 * `TopicArn` and a string `Message`. SNS attributes (`{ Type, Value }`) become stored attributes;
 * `Binary` values are already base64 in the SNS JSON.
 *
 * @see https://docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html
 */
export function parseSnsNotification(body: string): SnsNotification | undefined {
  if (!body.startsWith('{') || !body.includes('"Notification"')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const n = parsed as Record<string, unknown>;
  if (
    n.Type !== 'Notification' ||
    typeof n.MessageId !== 'string' ||
    typeof n.TopicArn !== 'string' ||
    typeof n.Message !== 'string'
  )
    return undefined;
  const messageAttributes: Record<string, StoredMessageAttribute> = {};
  const raw = (n.MessageAttributes ?? {}) as Record<string, { Type?: unknown; Value?: unknown }>;
  for (const [name, a] of Object.entries(raw)) {
    const dataType = typeof a?.Type === 'string' ? a.Type : 'String';
    const value = typeof a?.Value === 'string' ? a.Value : JSON.stringify(a?.Value ?? null);
    setOwn(
      messageAttributes,
      name,
      dataType.startsWith('Binary')
        ? { dataType, binaryValueBase64: value }
        : { dataType, stringValue: value },
    );
  }
  return { topicArn: n.TopicArn, messageId: n.MessageId, messageAttributes };
}

/**
 * The idempotency key of a received SQS message, for the consumer-side middleware and the redrive.
 *
 * @param message - an SDK `Message` (ReceiveMessage output).
 * @param options.sourceArn - the queue it came from when it is not a DLQ message (a consumer's own
 *   queue ARN); defaults to the message's `DeadLetterQueueSourceArn`, else `'unknown'`.
 * @param options.producerKey - the registration's `producerKey`.
 */
export function idempotencyKeyOfMessage(
  message: Pick<Message, 'Body' | 'MessageAttributes' | 'Attributes'>,
  options: { sourceArn?: string; producerKey?: QueueRegistration['producerKey'] } = {},
): DerivedKey {
  const body = message.Body ?? '';
  const sns = parseSnsNotification(body);
  const input: KeyInput = {
    sourceArn: options.sourceArn ?? message.Attributes?.DeadLetterQueueSourceArn ?? 'unknown',
    body,
    messageAttributes: toStoredAttributes(message.MessageAttributes),
  };
  if (options.producerKey) input.producerKey = options.producerKey;
  if (sns) {
    input.snsMessageId = sns.messageId;
    input.snsMessageAttributes = sns.messageAttributes;
  }
  return deriveIdempotencyKey(input);
}
