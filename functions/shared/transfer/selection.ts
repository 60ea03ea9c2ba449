/**
 * Which envelopes a recording-mover run moves (docs/contracts.md, "The recording mover"): the
 * plan's `selection` (every given criterion must hold; within a list any entry may match) over the
 * envelope and its payload, and whether the message may be redriven at all.
 *
 * The **payload** is what the origin's consumer gets: the body, a non-raw SNS body's `Message`, a
 * Lambda on-failure record's `requestPayload`. Body conditions and merge patches look at it.
 *
 * @see https://docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html
 * @see https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html
 */
import { lambdaRecordOf, parseJsonObject, parseSnsNotification } from '#inventory/idempotency-key.js';
import type { Classification, Envelope } from '#inventory/model.js';
import { payloadGoneReason } from '#inventory/payload-pointer.js';

/**
 * What a selection can ask (the output of `Selection` in incident/execution-input.ts, which
 * validates it; transfer sits below incident, so the shape is restated here).
 */
export interface Selection {
  causes?: readonly string[] | undefined;
  classifications?: readonly Classification[] | undefined;
  attributes?: ReadonlyArray<{ name: string; equals: string }> | undefined;
  body?: ReadonlyArray<{ jsonPath: string; equals: string | number | boolean | null }> | undefined;
  messageIds?: readonly string[] | undefined;
}

/** What selection decisions read of a plan (`ExecutionPlan` in incident/execution-input.ts). */
export interface SelectionPlan {
  selection?: Selection | null | undefined;
  unpark?: boolean | undefined;
  maxRedrives: number;
}

/**
 * Classifications a run without `selection.classifications` or `selection.causes` moves: what a
 * move-task run redrives too (Park takes out only `poison` and `permanent`; `systemic` is a
 * dependency that failed every message, redriven once it is fixed).
 */
export const REDRIVABLE: readonly Classification[] = ['transient', 'unknown', 'systemic'];

/** A message's payload: its text and, when the text is JSON, the parsed value. */
export interface Payload {
  text: string;
  /** Where the payload sits: the body itself, an SNS notification's `Message`, a Lambda record's `requestPayload`. */
  from: 'body' | 'sns-message' | 'lambda-request';
  json: unknown;
  isJson: boolean;
}

function parse(text: string): { json: unknown; isJson: boolean } {
  try {
    return { json: JSON.parse(text) as unknown, isJson: true };
  } catch {
    return { json: undefined, isJson: false };
  }
}

/** The payload of a body (see the module comment). */
export function payloadOf(body: string): Payload {
  const sns = parseSnsNotification(body);
  if (sns) {
    const message = (JSON.parse(body) as { Message: string }).Message;
    return { text: message, from: 'sns-message', ...parse(message) };
  }
  const object = parseJsonObject(body);
  const record = object && lambdaRecordOf(object);
  if (record)
    return {
      text: JSON.stringify(record.payload),
      from: 'lambda-request',
      json: record.payload,
      isJson: true,
    };
  return { text: body, from: 'body', ...parse(body) };
}

/** The value at a dotted JSON path (`$.a.b`, `$.items.0.sku`), or undefined. */
export function valueAt(value: unknown, jsonPath: string): unknown {
  let node = value;
  for (const segment of jsonPath.replace(/^\$\.?/, '').split('.')) {
    if (segment === '') continue;
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}

/** True when the envelope belongs to the cause group `cause` names (a fingerprint or an error class). */
export function inCause(envelope: Pick<Envelope, 'failure'>, cause: string): boolean {
  return envelope.failure.fingerprint === cause || (envelope.failure.errorClass ?? '<none>') === cause;
}

/** What {@link selects} needs of an envelope. */
export type SelectableEnvelope = Pick<
  Envelope,
  'messageId' | 'classification' | 'failure' | 'messageAttributes' | 'sns' | 'redriveCount'
>;

/** True when the selection needs the payload (body conditions), so the caller must read the body. */
export function needsPayload(selection: Selection | null | undefined): boolean {
  return (selection?.body?.length ?? 0) > 0;
}

/**
 * Whether the plan's selection takes this envelope.
 * @param payload - required when {@link needsPayload}; ignored otherwise.
 */
export function matchesSelection(
  envelope: SelectableEnvelope,
  selection: Selection | null | undefined,
  payload: Payload | undefined,
): boolean {
  if (!selection) return true;
  if (selection.messageIds && !selection.messageIds.includes(envelope.messageId)) return false;
  if (selection.causes && !selection.causes.some((c) => inCause(envelope, c))) return false;
  if (selection.classifications && !selection.classifications.includes(envelope.classification)) return false;
  for (const condition of selection.attributes ?? []) {
    const value =
      envelope.messageAttributes[condition.name]?.stringValue ??
      envelope.sns?.messageAttributes[condition.name]?.stringValue;
    if (value !== condition.equals) return false;
  }
  for (const condition of selection.body ?? []) {
    if (!payload?.isJson) return false;
    if (valueAt(payload.json, condition.jsonPath) !== condition.equals) return false;
  }
  return true;
}

/**
 * Why the run does not move this envelope although it may match (null: it may move): over
 * `maxRedrives`, an extended-client payload found gone, or a classification the run did not name (only `transient` and `unknown`
 * move unless the selection names causes or classifications, or the run un-parks).
 */
export function notRedrivable(
  envelope: Pick<Envelope, 'classification' | 'redriveCount' | 'payload' | 'payloadGoneAt'>,
  plan: SelectionPlan,
): string | null {
  if (plan.unpark) return null;
  // An extended-client pointer whose S3 object was gone at Preflight's check is not sent on.
  if (envelope.payload && envelope.payloadGoneAt) return payloadGoneReason(envelope.payload);
  if (envelope.redriveCount >= plan.maxRedrives)
    return `redriven ${envelope.redriveCount} times (maxRedrives ${plan.maxRedrives})`;
  const named = plan.selection?.classifications !== undefined || plan.selection?.causes !== undefined;
  if (!named && !REDRIVABLE.includes(envelope.classification))
    return `classified ${envelope.classification}: name it in selection.causes or selection.classifications to move it`;
  return null;
}
