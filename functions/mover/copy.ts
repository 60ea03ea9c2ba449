/**
 * The copy the recording mover sends for one DLQ message, shaped for its target, edited when the
 * run has a transform, and checked against the target's limits before anything is recorded.
 *
 * | target      | what is sent                                                                 | idempotency key on the copy              |
 * | ----------- | ---------------------------------------------------------------------------- | ---------------------------------------- |
 * | SQS queue   | the body and attributes unchanged (an SNS envelope stays as it is)            | `idempotency-key` message attribute      |
 * | SNS topic   | the payload (a non-raw body's `Message`, else the body) and its attributes   | `idempotency-key` message attribute      |
 * | event bus   | the event (source, detail-type, detail, resources, time) with `PutEvents`    | none possible: the event's content is its key |
 * | function    | the payload (the body, or an on-failure record's `requestPayload`), `Event`  | none possible: the payload is its key    |
 *
 * Every copy that can carry attributes gets `redrive-count` (incremented), `redrive-id` and
 * `idempotency-key`, and an edited copy `redrive-edit-of` = `<DLQ MessageId> sha256:<original body
 * sha256>`. The attributes Lambda, SNS and EventBridge put on what they dead-letter (`RequestID`,
 * `ErrorCode`, `RULE_ARN`, ...) are the failure's, not the message's: they are not sent on.
 *
 * Limits checked (SQS counts the body and every attribute's name, type and value): the SQS
 * destination's `MaximumMessageSize`, 256 KiB for SNS, 1 MiB for an EventBridge entry and a Lambda
 * async payload, 10 message attributes. A FIFO copy keeps its MessageGroupId and gets a
 * MessageDeduplicationId derived from the key.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html
 * @see https://docs.aws.amazon.com/sns/latest/api/API_Publish.html
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html
 * @see https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html
 * @see https://www.rfc-editor.org/rfc/rfc7396
 */
import type { Message, MessageAttributeValue } from '@aws-sdk/client-sqs';
import { apply as applyMergePatch } from 'json-merge-patch';
import {
  LAMBDA_DLQ_ATTRIBUTES,
  PIPELINE_ATTRIBUTES,
  parseSnsNotification,
  sha256Hex,
} from '#inventory/idempotency-key.js';
import type { Envelope } from '#inventory/model.js';
import { fifoDeduplicationId, MAX_MESSAGE_ATTRIBUTES, outgoingCopy } from '#transfer/message-transfer.js';
import { payloadOf } from '#transfer/selection.js';

/**
 * An edit of the copies (the output of `Transform` in incident/execution-input.ts, which validates
 * it: a JSON merge patch, attribute changes, the reason; restated here below the incident layer).
 */
export interface Transform {
  mergePatch?: Record<string, unknown> | undefined;
  setAttributes?: ReadonlyArray<{ name: string; value: string; dataType?: string | undefined }> | undefined;
  removeAttributes?: readonly string[] | undefined;
  reason: string;
}

/** SNS's largest message (body and attributes), bytes. */
export const SNS_MAX_MESSAGE_BYTES = 262_144;
/** EventBridge's largest PutEvents entry, bytes. */
export const EVENTBRIDGE_MAX_ENTRY_BYTES = 1_048_576;
/** Lambda's largest asynchronous invocation payload, bytes. */
export const LAMBDA_MAX_ASYNC_PAYLOAD_BYTES = 1_048_576;

/** The attributes AWS services put on what they dead-letter: the failure's, not the message's. */
export const SERVICE_FAILURE_ATTRIBUTES: readonly string[] = [
  ...LAMBDA_DLQ_ATTRIBUTES,
  'RULE_ARN',
  'TARGET_ARN',
  'ERROR_CODE',
  'ERROR_MESSAGE',
  'EXHAUSTED_RETRY_CONDITION',
  'RETRY_ATTEMPTS',
];

/** Where one message goes. */
export type MoverTarget =
  | { kind: 'sqs'; arn: string; url: string; fifo: boolean; maxMessageBytes: number }
  | { kind: 'sns'; arn: string; fifo: boolean }
  | { kind: 'eventbridge'; arn: string }
  | { kind: 'lambda'; arn: string };

/** A copy, shaped for its target's send call. */
export type Copy =
  | {
      kind: 'sqs';
      body: string;
      attributes: Record<string, MessageAttributeValue>;
      groupId?: string;
      deduplicationId?: string;
    }
  | {
      kind: 'sns';
      message: string;
      subject?: string;
      attributes: Record<string, MessageAttributeValue>;
      groupId?: string;
      deduplicationId?: string;
    }
  | {
      kind: 'eventbridge';
      source: string;
      detailType: string;
      detail: string;
      resources: string[];
      time: Date;
      eventBusName: string;
    }
  | { kind: 'lambda'; payload: string };

/** Why a message cannot be sent as asked. Every one leaves the message where it is. */
export type CopyProblem = 'no-room' | 'too-large' | 'not-json' | 'cannot-edit' | 'aws-source';

/** The copy, or why there is none. `edited`: the transform changed it. */
export type CopyResult =
  | { ok: true; copy: Copy; bytes: number; edited: boolean; editedSha256: string | null }
  | { ok: false; problem: CopyProblem; detail: string };

/** What {@link buildCopy} needs. */
export interface CopyRequest {
  /** The message as received (body, message attributes, system attributes). */
  message: Pick<Message, 'Body' | 'MessageAttributes' | 'Attributes' | 'MessageId'>;
  envelope: Pick<Envelope, 'origin' | 'messageId' | 'bodySha256'>;
  target: MoverTarget;
  key: string;
  redriveId: string;
  transform: Transform | null | undefined;
}

const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');

/** SQS's and SNS's size of attributes: every name, data type and value. */
export function attributesBytes(attributes: Record<string, MessageAttributeValue>): number {
  let n = 0;
  for (const [name, a] of Object.entries(attributes))
    n +=
      utf8(name) +
      utf8(a.DataType ?? '') +
      (a.StringValue !== undefined ? utf8(a.StringValue) : (a.BinaryValue?.byteLength ?? 0));
  return n;
}

function fail(problem: CopyProblem, detail: string): CopyResult {
  return { ok: false, problem, detail };
}

/** The edit's attribute changes on a copy's attributes (pipeline attributes are never touched). */
function editAttributes(attributes: Record<string, MessageAttributeValue>, transform: Transform): boolean {
  let changed = false;
  for (const name of transform.removeAttributes ?? []) {
    if (name in attributes) {
      delete attributes[name];
      changed = true;
    }
  }
  for (const a of transform.setAttributes ?? []) {
    attributes[a.name] = { DataType: a.dataType ?? 'String', StringValue: a.value };
    changed = true;
  }
  return changed;
}

/** The payload with the merge patch applied, or the problem. */
function patchPayload(
  text: string,
  transform: Transform | null | undefined,
): { ok: true; text: string; changed: boolean } | { ok: false; result: CopyResult } {
  if (!transform?.mergePatch) return { ok: true, text, changed: false };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {
      ok: false,
      result: fail('not-json', 'a merge patch needs a JSON payload, and this one is not JSON'),
    };
  }
  const patched = JSON.stringify(applyMergePatch(value, structuredClone(transform.mergePatch)));
  return { ok: true, text: patched, changed: patched !== text };
}

/** The pipeline's attributes on a copy (`redrive-count` one more than the message's own). */
function pipelineAttributes(
  previousCount: MessageAttributeValue | undefined,
  key: string,
  redriveId: string,
): Record<string, MessageAttributeValue> {
  const previous = Number(previousCount?.StringValue ?? 0);
  const count = Number.isFinite(previous) && previous >= 0 ? Math.trunc(previous) + 1 : 1;
  return {
    'redrive-count': { DataType: 'Number', StringValue: String(count) },
    'redrive-id': { DataType: 'String', StringValue: redriveId },
    'idempotency-key': { DataType: 'String', StringValue: key },
  };
}

/** SNS notification attributes (`{ Type, Value }`) as message attributes. */
function fromSnsAttributes(body: string): Record<string, MessageAttributeValue> {
  const sns = parseSnsNotification(body);
  const out: Record<string, MessageAttributeValue> = {};
  for (const [name, a] of Object.entries(sns?.messageAttributes ?? {}))
    out[name] =
      a.binaryValueBase64 !== undefined
        ? { DataType: a.dataType, BinaryValue: Buffer.from(a.binaryValueBase64, 'base64') }
        : { DataType: a.dataType, StringValue: a.stringValue ?? '' };
  return out;
}

/** Attributes without the ones named (copies of the values). */
function without(
  attributes: Record<string, MessageAttributeValue>,
  names: readonly string[],
): Record<string, MessageAttributeValue> {
  const out: Record<string, MessageAttributeValue> = {};
  for (const [name, a] of Object.entries(attributes)) if (!names.includes(name)) out[name] = { ...a };
  return out;
}

const withoutPipeline = (attributes: Record<string, MessageAttributeValue>) =>
  without(attributes, PIPELINE_ATTRIBUTES);

/** The message's own attributes: without the pipeline's and, for a non-SQS origin, the failure's. */
function ownAttributes(
  message: CopyRequest['message'],
  nonSqsOrigin: boolean,
): Record<string, MessageAttributeValue> {
  return without(message.MessageAttributes ?? {}, [
    ...PIPELINE_ATTRIBUTES,
    ...(nonSqsOrigin ? SERVICE_FAILURE_ATTRIBUTES : []),
  ]);
}

const editLink = (envelope: CopyRequest['envelope']) => ({
  DataType: 'String',
  StringValue: `${envelope.messageId} sha256:${envelope.bodySha256}`,
});

/**
 * Builds the copy of one message for its target (see the module comment). Pure.
 * @returns the copy and its size in bytes as the target counts it, or why it cannot be sent.
 */
export function buildCopy(req: CopyRequest): CopyResult {
  const { message, envelope, target, transform } = req;
  const body = message.Body ?? '';
  const nonSqsOrigin = envelope.origin !== undefined && envelope.origin.kind !== 'sqs';
  const editsAttributes =
    (transform?.setAttributes?.length ?? 0) + (transform?.removeAttributes?.length ?? 0) > 0;

  if (target.kind === 'sqs') {
    let text = body;
    if (transform?.mergePatch) {
      if (parseSnsNotification(body))
        return fail(
          'cannot-edit',
          'a non-raw SNS notification cannot be edited: its Signature covers the Message',
        );
      const patched = patchPayload(body, transform);
      if (!patched.ok) return patched.result;
      text = patched.text;
    }
    const base = outgoingCopy(
      { ...message, Body: text, MessageAttributes: ownAttributes(message, nonSqsOrigin) },
      { key: req.key, redriveId: req.redriveId, fifo: target.fifo, addPipelineAttributes: true },
    );
    if (!base)
      return fail(
        'no-room',
        `SQS allows ${MAX_MESSAGE_ATTRIBUTES} message attributes; the pipeline needs 3 of them`,
      );
    const attributesChanged = transform ? editAttributes(base.attributes, transform) : false;
    const edited = text !== body || attributesChanged;
    if (edited) base.attributes['redrive-edit-of'] = editLink(envelope);
    if (Object.keys(base.attributes).length > MAX_MESSAGE_ATTRIBUTES)
      return fail(
        'no-room',
        `the copy would carry ${Object.keys(base.attributes).length} message attributes; SQS allows ${MAX_MESSAGE_ATTRIBUTES}`,
      );
    const bytes = utf8(base.body) + attributesBytes(base.attributes);
    if (bytes > target.maxMessageBytes)
      return fail(
        'too-large',
        `${bytes} bytes with attributes, over ${target.arn.split(':').pop()}'s MaximumMessageSize of ${target.maxMessageBytes}`,
      );
    const copy: Copy = { kind: 'sqs', body: base.body, attributes: base.attributes };
    if (base.groupId !== undefined) copy.groupId = base.groupId;
    if (base.deduplicationId !== undefined) copy.deduplicationId = base.deduplicationId;
    return { ok: true, copy, bytes, edited, editedSha256: edited ? sha256Hex(base.body) : null };
  }

  if (target.kind === 'sns') {
    const payload = payloadOf(body);
    const nonRaw = payload.from === 'sns-message';
    const patched = patchPayload(payload.text, transform);
    if (!patched.ok) return patched.result;
    const source = nonRaw ? fromSnsAttributes(body) : { ...(message.MessageAttributes ?? {}) };
    const previousCount = source['redrive-count'];
    const attributes = nonRaw ? withoutPipeline(source) : ownAttributes(message, true);
    const attributesChanged = transform ? editAttributes(attributes, transform) : false;
    const edited = patched.changed || attributesChanged;
    const all: Record<string, MessageAttributeValue> = {
      ...attributes,
      ...pipelineAttributes(previousCount, req.key, req.redriveId),
      ...(edited ? { 'redrive-edit-of': editLink(envelope) } : {}),
    };
    if (Object.keys(all).length > MAX_MESSAGE_ATTRIBUTES)
      return fail(
        'no-room',
        `the copy would carry ${Object.keys(all).length} message attributes; SNS allows ${MAX_MESSAGE_ATTRIBUTES}`,
      );
    const bytes = utf8(patched.text) + attributesBytes(all);
    if (bytes > SNS_MAX_MESSAGE_BYTES)
      return fail('too-large', `${bytes} bytes with attributes, over SNS's ${SNS_MAX_MESSAGE_BYTES}`);
    const copy: Copy = { kind: 'sns', message: patched.text, attributes: all };
    const subject = nonRaw ? (JSON.parse(body) as { Subject?: unknown }).Subject : undefined;
    if (typeof subject === 'string' && subject !== '') copy.subject = subject;
    if (target.fifo) {
      copy.groupId = message.Attributes?.MessageGroupId ?? 'redrive';
      copy.deduplicationId = fifoDeduplicationId(req.key);
    }
    return { ok: true, copy, bytes, edited, editedSha256: edited ? sha256Hex(patched.text) : null };
  }

  if (editsAttributes)
    return fail(
      'cannot-edit',
      `${target.kind === 'eventbridge' ? 'an event' : 'a Lambda invocation'} carries no message attributes to set or remove`,
    );

  if (target.kind === 'eventbridge') {
    const patched = patchPayload(body, transform);
    if (!patched.ok) return patched.result;
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(patched.text) as Record<string, unknown>;
    } catch {
      return fail('not-json', 'the message is not an EventBridge event (not JSON)');
    }
    const source = typeof event.source === 'string' ? event.source : '';
    if (source.startsWith('aws.'))
      return fail(
        'aws-source',
        `events from ${source} cannot be put again (PutEvents refuses aws.* sources); redrive them to the target instead`,
      );
    const copy: Copy = {
      kind: 'eventbridge',
      source,
      detailType: String(event['detail-type'] ?? ''),
      detail: JSON.stringify(event.detail ?? {}),
      resources: Array.isArray(event.resources) ? event.resources.map(String) : [],
      time:
        typeof event.time === 'string' && !Number.isNaN(Date.parse(event.time))
          ? new Date(event.time)
          : new Date(),
      eventBusName: target.arn,
    };
    // EventBridge's entry size: 14 bytes for Time, then Source, DetailType, Detail and each resource.
    const bytes =
      14 +
      utf8(copy.source) +
      utf8(copy.detailType) +
      utf8(copy.detail) +
      copy.resources.reduce((n, r) => n + utf8(r), 0);
    if (bytes > EVENTBRIDGE_MAX_ENTRY_BYTES)
      return fail('too-large', `${bytes} bytes, over EventBridge's ${EVENTBRIDGE_MAX_ENTRY_BYTES} per entry`);
    return {
      ok: true,
      copy,
      bytes,
      edited: patched.changed,
      editedSha256: patched.changed ? sha256Hex(patched.text) : null,
    };
  }

  const payload = payloadOf(body);
  const patched = patchPayload(payload.from === 'lambda-request' ? payload.text : body, transform);
  if (!patched.ok) return patched.result;
  const bytes = utf8(patched.text);
  if (bytes > LAMBDA_MAX_ASYNC_PAYLOAD_BYTES)
    return fail(
      'too-large',
      `${bytes} bytes, over Lambda's ${LAMBDA_MAX_ASYNC_PAYLOAD_BYTES} for an asynchronous invocation`,
    );
  return {
    ok: true,
    copy: { kind: 'lambda', payload: patched.text },
    bytes,
    edited: patched.changed,
    editedSha256: patched.changed ? sha256Hex(patched.text) : null,
  };
}
