/**
 * Idempotency keys per message: the one derivation the dlq-redrive pipeline (triage, redrive,
 * verification) and every consumer using this package share, so a message that never went through
 * a DLQ and its later redriven copy get the same key.
 *
 * Order of precedence:
 * 1. the key the pipeline attached on an earlier redrive (`idempotency-key` message attribute, or
 *    the SNS message attribute of that name inside a non-raw SNS body: the pipeline republishes to
 *    SNS with it, and SNS mints a new MessageId);
 * 2. the producer's own id, when the caller names where it lives (`producerKey.attribute` or
 *    `producerKey.jsonPath`);
 * 3. the SNS MessageId, for non-raw SNS notifications (stable across redrives);
 * 4. an EventBridge event (the body of a rule target's DLQ message, or what a queue target
 *    receives): a SHA-256 over its `source`, `detail-type`, `time`, `resources` and `detail`, not its
 *    `id`, which every PutEvents mints anew (`eventContent`, an explicit key: a re-put copy that a
 *    consumer already processed is skipped);
 * 5. otherwise a SHA-256 over the source queue ARN, the raw body and the sorted message attributes,
 *    leaving out the attributes a Lambda async-invocation DLQ adds (`RequestID`, `ErrorCode`,
 *    `ErrorMessage`, new on every failed invocation) when the message carries them; a Lambda
 *    on-failure destination record hashes the function (unqualified) and its `requestPayload`.
 *
 * Never the SQS MessageId: a redrive (a sample send or a move task) gives the message a new one.
 * The attributes the pipeline adds on redrive (`redrive-count`, `redrive-id`, `idempotency-key`,
 * `redrive-edit-of`) are left out of the hash, so a redriven message hashes to the same key.
 *
 * This module is pure (no AWS calls) and is also published as the `./key` entry point.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html
 * @see https://docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html
 * @see https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html
 */
import { createHash } from 'node:crypto';

/** Message attributes the pipeline adds on redrive; never part of the hash. */
export const PIPELINE_ATTRIBUTES = [
  'redrive-count',
  'redrive-id',
  'idempotency-key',
  'redrive-edit-of',
] as const;

/**
 * The message attributes Lambda puts on a message it sends to a function's async-invocation DLQ.
 * @see https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html#invocation-dlq
 */
export const LAMBDA_DLQ_ATTRIBUTES = ['RequestID', 'ErrorCode', 'ErrorMessage'] as const;

/** Where a key came from. `eventContent`: an EventBridge event's content (explicit, like an id). */
export type KeySource = 'attribute' | 'jsonPath' | 'snsMessageId' | 'eventContent' | 'hash';

/** A derived key and where it came from. */
export interface DerivedKey {
  key: string;
  keySource: KeySource;
}

/**
 * Where the producer's own id lives: a message attribute (`{ attribute: 'order-id' }`) or a dotted
 * JSON path into the body (`{ jsonPath: '$.orderId' }`). Same shape as the pipeline's queue
 * registration `producerKey`.
 */
export type ProducerKey = { readonly attribute: string } | { readonly jsonPath: string };

/** A message attribute in stored form: binary values as base64. */
export interface StoredMessageAttribute {
  dataType: string;
  stringValue?: string | undefined;
  /** Base64 of the attribute's bytes, for `Binary` (and `Binary.*`) data types. */
  binaryValueBase64?: string | undefined;
}

/** Everything key derivation looks at. */
export interface KeyInput {
  /** The queue the message belongs to: DeadLetterQueueSourceArn in a DLQ, the consumed queue's ARN in a consumer. `'unknown'` when not known. */
  sourceArn: string;
  /** The raw body exactly as received. */
  body: string;
  /** Message attributes as stored (binary values as base64). */
  messageAttributes: Record<string, StoredMessageAttribute>;
  /** Where the producer's own id lives. */
  producerKey?: ProducerKey | undefined;
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
 *
 * An integer literal beyond 2^53 is returned as its digits, as written: `JSON.parse` would round
 * `1234567890123456789` and `1234567890123456790` to one double, and so to one key (Node.js 22
 * and later; older runtimes keep the rounded key). Every other number keeps `String(number)`, so
 * keys stored before still match.
 * @see https://developer.mozilla.org/en-US/docs/Web/JavaScript/Reference/Global_Objects/Number/MAX_SAFE_INTEGER
 */
export function readJsonPath(body: string, jsonPath: string): string | undefined {
  const segments = jsonPath
    .replace(/^\$\.?/, '')
    .split('.')
    .filter((s) => s !== '');
  let value: unknown;
  try {
    value = valueAt(JSON.parse(body), segments);
  } catch {
    return undefined;
  }
  if (typeof value === 'string' && value.length > 0) return value;
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  if (Number.isInteger(value) && !Number.isSafeInteger(value))
    return rawIntegerAt(body, segments) ?? String(value);
  return String(value);
}

function valueAt(root: unknown, segments: readonly string[]): unknown {
  let value = root;
  for (const segment of segments) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

/** What `JSON.parse` tells a reviver of a primitive value on Node.js 22 and later. */
type ReviverContext = { source?: string } | undefined;

/**
 * The digits of an integer literal at `segments`, as written (JSON.parse source text access,
 * Node.js 22 and later; undefined on older runtimes, which keep the rounded key).
 * @see https://github.com/tc39/proposal-json-parse-with-source
 */
function rawIntegerAt(body: string, segments: readonly string[]): string | undefined {
  const raw = valueAt(
    JSON.parse(body, (_key, value: unknown, context?: ReviverContext) =>
      typeof value === 'number' && context?.source !== undefined && /^-?\d+$/.test(context.source)
        ? context.source
        : value,
    ),
    segments,
  );
  return typeof raw === 'string' ? raw : undefined;
}

function attributeValue(attribute: StoredMessageAttribute | undefined): string | undefined {
  if (!attribute) return undefined;
  const value = attribute.stringValue ?? attribute.binaryValueBase64;
  return value !== undefined && value.length > 0 ? value : undefined;
}

/**
 * Longest key used as is, characters. Keys end up in DynamoDB key attributes (`KEY#<key>`), which
 * hold at most 2048 bytes: 256 characters are at most 1024 UTF-8 bytes.
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
 * @param input - body, attributes, source ARN and where the producer's id lives.
 * @returns the key and its source; the hash is lower-case hex SHA-256.
 * @example
 * deriveIdempotencyKey({ sourceArn, body: '{"orderId":"o-1"}', messageAttributes: {},
 *   producerKey: { jsonPath: '$.orderId' } }) // { key: 'o-1', keySource: 'jsonPath' }
 */
export function deriveIdempotencyKey(input: KeyInput): DerivedKey {
  const pipelineKey =
    attributeValue(input.messageAttributes['idempotency-key']) ??
    attributeValue(input.snsMessageAttributes?.['idempotency-key']);
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
  const parsed = parseJsonObject(input.body);
  const event = parsed && eventBridgeEventOf(parsed);
  if (event) return { key: `event:${sha256Hex(JSON.stringify(event))}`, keySource: 'eventContent' };
  const record = parsed && lambdaRecordOf(parsed);
  if (record)
    return {
      key: sha256Hex(JSON.stringify(['lambda', record.functionName, record.payload])),
      keySource: 'hash',
    };
  return {
    key: hashKey(input.sourceArn, input.body, withoutLambdaDlqAttributes(input.messageAttributes)),
    keySource: 'hash',
  };
}

/** A body that is a JSON object, parsed; undefined for anything else. */
export function parseJsonObject(body: string): Record<string, unknown> | undefined {
  if (!body.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The stable part of an EventBridge event (`version`, `id`, `detail-type`, `source`, `account`,
 * `time`, `region`, `resources`, `detail`): what a re-put copy keeps. Undefined when the object is
 * not an event.
 * @see https://docs.aws.amazon.com/eventbridge/latest/ref/overiew-event-structure.html
 */
export function eventBridgeEventOf(value: Record<string, unknown>): unknown[] | undefined {
  if (
    typeof value.id !== 'string' ||
    typeof value.source !== 'string' ||
    typeof value['detail-type'] !== 'string' ||
    typeof value.time !== 'string' ||
    typeof value.account !== 'string' ||
    !Array.isArray(value.resources) ||
    !('detail' in value)
  )
    return undefined;
  return [
    'eventbridge',
    value.source,
    value['detail-type'],
    value.time,
    value.resources,
    value.detail ?? null,
  ];
}

/**
 * A Lambda on-failure destination record (`requestContext.functionArn`, `requestPayload`): the
 * function without its version or alias, and the event it was invoked with.
 * @see https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html
 */
export function lambdaRecordOf(
  value: Record<string, unknown>,
): { functionName: string; payload: unknown } | undefined {
  const context = value.requestContext as Record<string, unknown> | undefined;
  if (typeof context !== 'object' || context === null || typeof context.functionArn !== 'string')
    return undefined;
  if (!('requestPayload' in value) || typeof context.condition !== 'string') return undefined;
  return { functionName: unqualifiedFunctionArn(context.functionArn), payload: value.requestPayload ?? null };
}

/** `arn:aws:lambda:<region>:<account>:function:<name>` without a `:<version or alias>` suffix. */
export function unqualifiedFunctionArn(arn: string): string {
  return arn.split(':').slice(0, 7).join(':');
}

/** The attributes without the ones a Lambda async DLQ adds, when all of its required ones are there. */
function withoutLambdaDlqAttributes(
  attributes: Record<string, StoredMessageAttribute>,
): Record<string, StoredMessageAttribute> {
  if (attributes.RequestID === undefined || attributes.ErrorCode === undefined) return attributes;
  const out: Record<string, StoredMessageAttribute> = {};
  for (const [name, value] of Object.entries(attributes))
    if (!(LAMBDA_DLQ_ATTRIBUTES as readonly string[]).includes(name)) setOwn(out, name, value);
  return out;
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
 * key hash.
 */
export function setOwn<T>(target: Record<string, T>, name: string, value: T): void {
  Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
}

/** A message attribute as the SQS API (AWS SDK v3 `MessageAttributeValue`) returns it. */
export interface SdkMessageAttribute {
  DataType?: string | undefined;
  StringValue?: string | undefined;
  BinaryValue?: Uint8Array | undefined;
}

/** Converts SDK message attributes to the stored form (binary as base64, DataType kept as is). */
export function toStoredAttributes(
  attributes: Record<string, SdkMessageAttribute> | undefined,
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

/** The non-raw SNS notification inside an SQS body, when the body is one. */
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

/** What key derivation reads from a message received with the SQS API (an SDK v3 `Message`). */
export interface ReceivedMessage {
  Body?: string | undefined;
  MessageAttributes?: Record<string, SdkMessageAttribute> | undefined;
  Attributes?: Partial<Record<string, string>> | undefined;
}

/**
 * The idempotency key of a message received with the SQS API (ReceiveMessage output).
 *
 * @param message - an SDK `Message`.
 * @param options.sourceArn - the queue it came from when it is not a DLQ message (a consumer's own
 *   queue ARN); defaults to the message's `DeadLetterQueueSourceArn`, else `'unknown'`.
 * @param options.producerKey - where the producer's own id lives.
 */
export function idempotencyKeyOfMessage(
  message: ReceivedMessage,
  options: { sourceArn?: string | undefined; producerKey?: ProducerKey | undefined } = {},
): DerivedKey {
  return deriveIdempotencyKey(
    keyInputOf(
      message.Body ?? '',
      toStoredAttributes(message.MessageAttributes),
      options.sourceArn ?? message.Attributes?.DeadLetterQueueSourceArn ?? 'unknown',
      options.producerKey,
    ),
  );
}

/** The {@link KeyInput} of a body and its attributes, with the SNS envelope unwrapped when there is one. */
export function keyInputOf(
  body: string,
  messageAttributes: Record<string, StoredMessageAttribute>,
  sourceArn: string,
  producerKey: ProducerKey | undefined,
): KeyInput {
  const input: KeyInput = { sourceArn, body, messageAttributes };
  if (producerKey) input.producerKey = producerKey;
  const sns = parseSnsNotification(body);
  if (sns) {
    input.snsMessageId = sns.messageId;
    input.snsMessageAttributes = sns.messageAttributes;
  }
  return input;
}
