/**
 * Where a DLQ message came from, and why it failed, decided from evidence: the queue
 * registration's `origin`, SQS's `DeadLetterQueueSourceArn`, the attributes AWS services put on
 * what they dead-letter, and the message's shape. This decides where the recording mover sends a
 * message back (its target) and gives triage the real failure reason of DLQs that no SQS consumer
 * feeds, instead of "no source queue, poison".
 *
 * | origin        | how it reaches the DLQ            | evidence                                                              | failure reason                                        |
 * | ------------- | --------------------------------- | --------------------------------------------------------------------- | ----------------------------------------------------- |
 * | `sqs`         | the source queue's redrive policy | `DeadLetterQueueSourceArn`                                            | the consumer's attributes (`error-class`, ...)        |
 * | `sns`         | a subscription's redrive policy   | a non-raw body's `TopicArn`; registration `origin.topicArn` (raw)     | `ErrorCode`, `ErrorMessage` (with `RequestID`)        |
 * | `eventbridge` | a rule target's DLQ               | `RULE_ARN`, `TARGET_ARN` (bus from the rule ARN, or the registration) | `ERROR_CODE`, `ERROR_MESSAGE`, `EXHAUSTED_RETRY_CONDITION` |
 * | `lambda`      | an async-invocation DLQ           | `RequestID` + `ErrorCode` (function from the registration)           | `ErrorCode`, `ErrorMessage` (its `errorType`)         |
 * | `lambda`      | an on-failure destination record  | `requestContext.functionArn`, `condition`, `requestPayload`           | `responsePayload.errorType/errorMessage`, `condition` |
 *
 * @see https://docs.aws.amazon.com/sns/latest/dg/sns-dead-letter-queues.html
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html
 * @see https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html
 *
 * SNS and Lambda both put `RequestID`, `ErrorCode` and `ErrorMessage` on what they dead-letter; a
 * raw-delivery SNS message looks like a Lambda one, so the registration tells them apart (without
 * it, such a message is taken for Lambda's, with no function to send it to).
 */
import { lambdaRecordOf, parseJsonObject, parseSnsNotification } from './idempotency-key.js';
import type { MessageOrigin, MessageOriginRegistration, OriginVia, StoredMessageAttribute } from './model.js';

/** What origin detection reads from a received message. */
export interface OriginEvidence {
  body: string;
  messageAttributes: Record<string, StoredMessageAttribute>;
  /** `DeadLetterQueueSourceArn`, when SQS reported one. */
  sourceArn: string | undefined;
}

const text = (attributes: Record<string, StoredMessageAttribute>, name: string) => {
  const value = attributes[name]?.stringValue;
  return value !== undefined && value !== '' ? value : undefined;
};

/**
 * The event bus of an EventBridge rule ARN: `rule/<name>` is on the default bus,
 * `rule/<bus>/<name>` on a custom one.
 * @see https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazoneventbridge.html#amazoneventbridge-resources-for-iam-policies
 */
export function eventBusOfRule(ruleArn: string): string | null {
  const match = /^arn:(aws[a-z-]*):events:([^:]+):(\d{12}):rule\/(.+)$/.exec(ruleArn);
  if (!match) return null;
  const [, partition, region, account, path = ''] = match;
  const parts = path.split('/');
  const bus = parts.length > 1 ? parts.slice(0, -1).join('/') : 'default';
  return `arn:${partition}:events:${region}:${account}:event-bus/${bus}`;
}

function registeredArn(origin: MessageOriginRegistration): string {
  if (origin.kind === 'sns') return origin.topicArn;
  if (origin.kind === 'eventbridge') return origin.eventBusArn;
  return origin.functionArn;
}

/**
 * Decides a DLQ message's origin. The message's own evidence wins over the registration where it
 * names a resource (a rule ARN, a function ARN, a topic ARN); the registration fills what the
 * message cannot say (the function of an async-invocation DLQ, the topic of a raw delivery).
 *
 * @returns null when nothing says where the message came from (sent straight to the DLQ).
 */
export function originOf(
  evidence: OriginEvidence,
  registered: MessageOriginRegistration | undefined,
): MessageOrigin | null {
  if (evidence.sourceArn) return { kind: 'sqs', arn: evidence.sourceArn, via: 'redrive-policy' };
  const attrs = evidence.messageAttributes;
  const ruleArn = text(attrs, 'RULE_ARN');
  if (ruleArn) {
    const origin: MessageOrigin = {
      kind: 'eventbridge',
      arn: registered?.kind === 'eventbridge' ? registered.eventBusArn : eventBusOfRule(ruleArn),
      via: 'rule-target-dlq',
      ruleArn,
    };
    const targetArn = text(attrs, 'TARGET_ARN');
    if (targetArn) origin.targetArn = targetArn;
    return origin;
  }
  const parsed = parseJsonObject(evidence.body);
  const record = parsed && lambdaRecordOf(parsed);
  if (record) return { kind: 'lambda', arn: record.functionName, via: 'on-failure-destination' };
  const sns = parseSnsNotification(evidence.body);
  if (sns) return { kind: 'sns', arn: sns.topicArn, via: 'subscription-dlq' };
  if (attrs.RequestID !== undefined && attrs.ErrorCode !== undefined && registered?.kind !== 'sns')
    return {
      kind: 'lambda',
      arn: registered?.kind === 'lambda' ? registered.functionArn : null,
      via: 'async-dlq',
    };
  if (registered) {
    const via: OriginVia =
      registered.kind === 'sns'
        ? 'subscription-dlq'
        : registered.kind === 'lambda'
          ? 'async-dlq'
          : 'rule-target-dlq';
    return { kind: registered.kind, arn: registeredArn(registered), via };
  }
  return null;
}

/** A failure reason an AWS service attached to what it dead-lettered. */
export interface OriginFailure {
  errorClass?: string;
  errorMessage?: string;
}

/**
 * The failure reason the origin's service attached (when the consumer's own attributes give none).
 */
export function originFailure(evidence: OriginEvidence, origin: MessageOrigin | null): OriginFailure {
  if (!origin || origin.kind === 'sqs') return {};
  const attrs = evidence.messageAttributes;
  if (origin.kind === 'eventbridge') {
    const out: OriginFailure = {};
    const code = text(attrs, 'ERROR_CODE');
    const message = text(attrs, 'ERROR_MESSAGE');
    const exhausted = text(attrs, 'EXHAUSTED_RETRY_CONDITION');
    if (code) out.errorClass = code;
    const parts = [message, exhausted ? `retries exhausted: ${exhausted}` : undefined].filter(Boolean);
    if (parts.length > 0) out.errorMessage = parts.join('; ');
    return out;
  }
  if (origin.kind === 'lambda' && origin.via === 'on-failure-destination') {
    const record = parseJsonObject(evidence.body) ?? {};
    const context = (record.requestContext ?? {}) as Record<string, unknown>;
    const response = (record.responsePayload ?? {}) as Record<string, unknown>;
    const condition = typeof context.condition === 'string' ? context.condition : undefined;
    const errorType = typeof response.errorType === 'string' ? response.errorType : undefined;
    const errorMessage = typeof response.errorMessage === 'string' ? response.errorMessage : undefined;
    const out: OriginFailure = {};
    const errorClass = errorType ?? condition;
    if (errorClass) out.errorClass = errorClass;
    const parts = [errorMessage, condition ? `condition ${condition}` : undefined].filter(Boolean);
    if (parts.length > 0) out.errorMessage = parts.join('; ');
    return out;
  }
  const code = text(attrs, 'ErrorCode');
  const message = text(attrs, 'ErrorMessage');
  const out: OriginFailure = {};
  if (origin.kind === 'lambda') {
    // A function error's message embeds the function's own result: `... Result: {"errorType":"X",...}`.
    const errorType = message ? /"errorType"\s*:\s*"([^"]{1,256})"/.exec(message)?.[1] : undefined;
    if (errorType) out.errorClass = errorType;
    else if (code) out.errorClass = `Lambda.ErrorCode.${code}`;
  } else if (code) {
    out.errorClass = /^\d+$/.test(code) ? `SNS.ErrorCode.${code}` : code;
  }
  if (message) out.errorMessage = message;
  else if (origin.kind === 'sns' && !code)
    out.errorMessage = 'SNS could not deliver the message to the subscription endpoint (no reason attached)';
  return out;
}
