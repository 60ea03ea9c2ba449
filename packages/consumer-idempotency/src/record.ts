/**
 * SQS records as Lambda delivers them: the event and response shapes this package accepts, and
 * what identifies a record's message (its key, and the lineage a content-hash key is limited to).
 *
 * ## When two records are one message
 *
 * - **Explicit keys** (the pipeline's `idempotency-key` attribute, the producer's id found through
 *   `producerKey`, or the SNS MessageId of a non-raw SNS notification): two records with the same
 *   key are the same message, in one batch or across batches. The producer (or the pipeline) says so.
 * - **Content-hash keys** (none of the above: SHA-256 over the consumed queue's ARN, the body and
 *   the sorted attributes): equal bodies do not prove equal messages, so the hash only joins
 *   deliveries of one lineage:
 *   - the same SQS MessageId (a redelivery after a visibility timeout, a duplicate delivery of a
 *     standard queue): lineage `MSG#<messageId>`;
 *   - copies the pipeline sent in one redrive run (they carry its `idempotency-key` = this hash and
 *     `redrive-id`; the pipeline sends at most one DLQ message per key per run, and a resend after a
 *     crash carries the same run): lineage `RUN#<redriveId>`.
 *   Two records with the same hash and different lineages (two messages that happen to have the
 *   same body) are two messages: both are processed.
 *
 * What this costs: a hash-keyed message that was processed but not deleted, dead-lettered and then
 * moved back by a move task (new MessageId, no attribute added) is processed again. Give your
 * messages a producer id (`producerKey`) to make that copy a duplicate too.
 *
 * @see https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html
 * @see https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html#services-sqs-batchfailurereporting
 */
import { InvalidBatchResponseError, InvalidSqsEventError } from './errors.js';
import {
  type DerivedKey,
  deriveIdempotencyKey,
  keyInputOf,
  type ProducerKey,
  type StoredMessageAttribute,
  setOwn,
} from './key.js';

/** A message attribute in a Lambda SQS record (binary values base64). */
export interface SqsRecordMessageAttribute {
  dataType: string;
  stringValue?: string | undefined;
  binaryValue?: string | undefined;
  stringListValues?: string[] | undefined;
  binaryListValues?: string[] | undefined;
}

/**
 * What this package reads from a Lambda SQS record (a subset of `SQSRecord` from
 * `@types/aws-lambda`, so those records fit).
 */
export interface SqsRecord {
  messageId: string;
  body: string;
  eventSource: string;
  eventSourceARN: string;
  attributes?: { MessageGroupId?: string | undefined } | undefined;
  messageAttributes?: Record<string, SqsRecordMessageAttribute> | undefined;
}

/** A Lambda SQS event. */
export interface SqsEvent {
  Records: SqsRecord[];
}

/** The partial batch response (ReportBatchItemFailures), exactly. */
export interface SqsBatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}

/** The key of a record and how far it dedupes (see the module comment). */
export interface RecordKey extends DerivedKey {
  /**
   * `null` for an explicit key: every message with this key is one message. Otherwise the lineage
   * a content-hash key is limited to: `MSG#<messageId>` or `RUN#<redriveId>`.
   */
  lineage: string | null;
}

function storedAttributes(record: SqsRecord): Record<string, StoredMessageAttribute> {
  const out: Record<string, StoredMessageAttribute> = {};
  for (const [name, a] of Object.entries(record.messageAttributes ?? {})) {
    const stored: StoredMessageAttribute = { dataType: a.dataType };
    if (a.stringValue !== undefined) stored.stringValue = a.stringValue;
    if (a.binaryValue !== undefined) stored.binaryValueBase64 = a.binaryValue;
    setOwn(out, name, stored);
  }
  return out;
}

function derive(
  record: SqsRecord,
  attributes: Record<string, StoredMessageAttribute>,
  producerKey: ProducerKey | undefined,
): DerivedKey {
  return deriveIdempotencyKey(keyInputOf(record.body, attributes, record.eventSourceARN, producerKey));
}

/**
 * The idempotency key of a Lambda SQS record: the same key the pipeline gives the message's DLQ
 * envelope (the consumed queue's ARN is the source ARN), and how far it dedupes.
 *
 * @param producerKey - where the producer's own id lives; use the same as the queue's registration
 *   in the pipeline.
 */
export function recordKey(record: SqsRecord, producerKey?: ProducerKey): RecordKey {
  const attributes = storedAttributes(record);
  const derived = derive(record, attributes, producerKey);
  if (derived.keySource === 'hash') return { ...derived, lineage: `MSG#${record.messageId}` };
  if (attributes['idempotency-key'] !== undefined) {
    // The pipeline attached this key. When it is this record's own content hash, the pipeline had
    // nothing better either: the key is still a content hash, limited to the run that sent it.
    const own: Record<string, StoredMessageAttribute> = {};
    for (const [name, value] of Object.entries(attributes))
      if (name !== 'idempotency-key') setOwn(own, name, value);
    const content = derive(record, own, producerKey);
    if (content.keySource === 'hash' && content.key === derived.key) {
      const run = attributes['redrive-id']?.stringValue;
      return { key: derived.key, keySource: 'hash', lineage: run ? `RUN#${run}` : `MSG#${record.messageId}` };
    }
  }
  return { ...derived, lineage: null };
}

/**
 * The FIFO message group of a record, or `undefined` on a standard queue. FIFO is decided by the
 * queue (a FIFO queue's name ends in `.fifo`), not by the attribute: standard queues accept a
 * MessageGroupId too (fair queues) without ordering anything.
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues.html
 */
export function fifoGroupOf(record: SqsRecord): string | undefined {
  if (!record.eventSourceARN.endsWith('.fifo')) return undefined;
  return record.attributes?.MessageGroupId ?? '';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks that `event` is an SQS event with the fields this package reads.
 * @throws InvalidSqsEventError naming the first offending field.
 */
export function assertSqsEvent(event: unknown): asserts event is SqsEvent {
  if (!isPlainObject(event)) throw new InvalidSqsEventError('event', 'expected an object');
  if (!Array.isArray(event.Records)) throw new InvalidSqsEventError('Records', 'expected an array');
  event.Records.forEach((record: unknown, i: number) => {
    const at = `Records[${i}]`;
    if (!isPlainObject(record)) throw new InvalidSqsEventError(at, 'expected an object');
    if (typeof record.messageId !== 'string' || record.messageId === '')
      throw new InvalidSqsEventError(`${at}.messageId`, 'expected a non-empty string');
    if (typeof record.body !== 'string') throw new InvalidSqsEventError(`${at}.body`, 'expected a string');
    if (record.eventSource !== 'aws:sqs')
      throw new InvalidSqsEventError(
        `${at}.eventSource`,
        `expected 'aws:sqs' (got ${JSON.stringify(record.eventSource)})`,
      );
    if (typeof record.eventSourceARN !== 'string' || !record.eventSourceARN.startsWith('arn:'))
      throw new InvalidSqsEventError(`${at}.eventSourceARN`, 'expected the queue ARN');
    if (record.attributes !== undefined && !isPlainObject(record.attributes))
      throw new InvalidSqsEventError(`${at}.attributes`, 'expected an object');
    if (record.messageAttributes === undefined) return;
    if (!isPlainObject(record.messageAttributes))
      throw new InvalidSqsEventError(`${at}.messageAttributes`, 'expected an object');
    for (const [name, a] of Object.entries(record.messageAttributes)) {
      const field = `${at}.messageAttributes[${JSON.stringify(name)}]`;
      if (!isPlainObject(a) || typeof a.dataType !== 'string')
        throw new InvalidSqsEventError(field, 'expected { dataType, stringValue | binaryValue }');
      for (const value of ['stringValue', 'binaryValue'] as const)
        if (a[value] !== undefined && a[value] !== null && typeof a[value] !== 'string')
          throw new InvalidSqsEventError(`${field}.${value}`, 'expected a string');
    }
  });
}

/**
 * Checks a handler's response: exactly `{ batchItemFailures: [{ itemIdentifier }] }`, every
 * identifier the messageId of a record the handler was given. Lambda itself reads a missing or
 * empty response as "everything succeeded"; this package does not, because a handler that forgot
 * to return would have every record recorded as processed.
 *
 * @param given - messageIds of the records passed to the handler.
 * @returns the messageIds the handler reports as failed.
 * @throws InvalidBatchResponseError naming the offending field.
 */
export function failedIdsOf(response: unknown, given: ReadonlySet<string>): Set<string> {
  if (!isPlainObject(response))
    throw new InvalidBatchResponseError(
      '',
      `expected { batchItemFailures: [...] } (got ${response === null ? 'null' : Array.isArray(response) ? 'an array' : typeof response})`,
    );
  const extra = Object.keys(response).filter((k) => k !== 'batchItemFailures');
  if (extra.length > 0)
    throw new InvalidBatchResponseError(extra.join(', '), 'unexpected field (only batchItemFailures)');
  const failures = response.batchItemFailures;
  if (!Array.isArray(failures)) throw new InvalidBatchResponseError('batchItemFailures', 'expected an array');
  const failed = new Set<string>();
  failures.forEach((failure: unknown, i: number) => {
    const at = `batchItemFailures[${i}]`;
    if (!isPlainObject(failure)) throw new InvalidBatchResponseError(at, 'expected { itemIdentifier }');
    const extraKeys = Object.keys(failure).filter((k) => k !== 'itemIdentifier');
    if (extraKeys.length > 0)
      throw new InvalidBatchResponseError(`${at}.${extraKeys[0]}`, 'unexpected field (only itemIdentifier)');
    const id = failure.itemIdentifier;
    if (typeof id !== 'string' || id === '')
      throw new InvalidBatchResponseError(`${at}.itemIdentifier`, 'expected a non-empty messageId');
    if (!given.has(id))
      throw new InvalidBatchResponseError(
        `${at}.itemIdentifier`,
        `${JSON.stringify(id)} is not the messageId of a record the handler was given`,
      );
    failed.add(id);
  });
  return failed;
}
