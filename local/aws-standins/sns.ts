/**
 * Local SNS stand-in: topics, subscriptions and publishing on the wire protocol the SDK v3 client
 * (3.1164.0) speaks, awsQuery (`Action=Publish&...`, XML results).
 *
 * Operations: CreateTopic, Subscribe, SetSubscriptionAttributes (`RawMessageDelivery`,
 * `RedrivePolicy`), Publish, PublishBatch. A publish is delivered to every subscription of the
 * topic after the call returns: `sqs` (SendMessage to the local SQS server: the notification JSON,
 * or with raw delivery the message and its attributes as SQS attributes), `lambda` (the function's
 * local handler gets `{ Records: [{ EventSource: 'aws:sns', Sns }] }`) and `http`/`https` (the
 * endpoint's local handler gets the notification). A handler that throws fails the delivery;
 * after the retries (3 locally, a short delay apart) SNS sends the message to the subscription's
 * DLQ (`RedrivePolicy.deadLetterTargetArn`) as the real service does: the notification JSON (raw:
 * the message with its attributes as SQS message attributes) plus `RequestID`, `ErrorCode` and
 * `ErrorMessage`.
 *
 * Not SNS: no filter policies, signatures are `EXAMPLE`, no confirmation of HTTP subscriptions,
 * FIFO topics keep the group id but do not deduplicate.
 *
 * @see https://docs.aws.amazon.com/sns/latest/api/API_Publish.html
 * @see https://docs.aws.amazon.com/sns/latest/dg/sns-dead-letter-queues.html
 * @see https://docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html
 */
import { randomUUID } from 'node:crypto';
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import { type Deliveries, type LocalHandlers, stringAttribute } from './delivery.js';
import { awsQueryProtocol, requireString, type Standin, StandinError, startStandin } from './server.js';

/** A message attribute as a publish gives it. */
interface SnsAttribute {
  DataType: string;
  StringValue?: string;
  BinaryValue?: string;
}

/** One message published, as recorded. */
export interface Published {
  topicArn: string;
  messageId: string;
  message: string;
  subject?: string;
  attributes: Record<string, SnsAttribute>;
  groupId?: string;
  accessKeyId: string;
}

interface Subscription {
  arn: string;
  topicArn: string;
  protocol: string;
  endpoint: string;
  raw: boolean;
  dlqArn?: string;
}

/** The running stand-in. */
export interface SnsStandin extends Standin {
  /** Every message published, oldest first. */
  readonly published: Published[];
}

const RETRIES = 3;

/** Starts the SNS stand-in. */
export async function startSnsStandin(options: {
  region: string;
  accountId: string;
  handlers: LocalHandlers;
  deliveries: Deliveries;
}): Promise<SnsStandin> {
  const topics = new Map<string, { fifo: boolean }>();
  const subscriptions = new Map<string, Subscription>();
  const published: Published[] = [];

  const topicOf = (arn: string) => {
    if (!topics.has(arn)) throw new StandinError('NotFound', 'Topic does not exist', 404);
    return arn;
  };
  const sqsAttributes = (attributes: Record<string, SnsAttribute>): Record<string, MessageAttributeValue> =>
    Object.fromEntries(
      Object.entries(attributes).map(([name, a]) => [
        name,
        a.BinaryValue !== undefined
          ? { DataType: a.DataType, BinaryValue: Buffer.from(a.BinaryValue, 'base64') }
          : { DataType: a.DataType, StringValue: a.StringValue ?? '' },
      ]),
    );
  const notification = (p: Published) => ({
    Type: 'Notification',
    MessageId: p.messageId,
    TopicArn: p.topicArn,
    ...(p.subject !== undefined ? { Subject: p.subject } : {}),
    Message: p.message,
    Timestamp: new Date().toISOString(),
    SignatureVersion: '1',
    Signature: 'EXAMPLE',
    SigningCertURL: `https://sns.${options.region}.amazonaws.com/SimpleNotificationService-EXAMPLE.pem`,
    UnsubscribeURL: `https://sns.${options.region}.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=EXAMPLE`,
    ...(Object.keys(p.attributes).length > 0
      ? {
          MessageAttributes: Object.fromEntries(
            Object.entries(p.attributes).map(([n, a]) => [
              n,
              { Type: a.DataType, Value: a.StringValue ?? a.BinaryValue },
            ]),
          ),
        }
      : {}),
  });

  const deliver = (p: Published) => {
    for (const sub of subscriptions.values()) {
      if (sub.topicArn !== p.topicArn) continue;
      const body = sub.raw ? p.message : JSON.stringify(notification(p));
      const handler =
        sub.protocol === 'sqs'
          ? () =>
              options.deliveries.sendToQueue(sub.endpoint, {
                body,
                attributes: sub.raw ? sqsAttributes(p.attributes) : {},
                ...(p.groupId ? { groupId: p.groupId, deduplicationId: p.messageId } : {}),
              })
          : options.handlers.get(sub.endpoint);
      const event =
        sub.protocol === 'lambda'
          ? { Records: [{ EventSource: 'aws:sns', EventSubscriptionArn: sub.arn, Sns: notification(p) }] }
          : sub.raw
            ? { body, attributes: p.attributes }
            : notification(p);
      options.deliveries.deliver({
        target: sub.endpoint,
        event,
        handler,
        retries: RETRIES,
        dlqArn: sub.dlqArn,
        deadLetter: (error, requestId) => ({
          body,
          attributes: {
            ...(sub.raw ? sqsAttributes(p.attributes) : {}),
            RequestID: stringAttribute(requestId),
            ErrorCode: stringAttribute(
              (error as { code?: string }).code ??
                String((error as { statusCode?: number }).statusCode ?? 'ServiceUnavailable'),
            ),
            ErrorMessage: stringAttribute(error.message.slice(0, 1024)),
          },
          ...(p.groupId ? { groupId: p.groupId } : {}),
        }),
      });
    }
  };

  const publish = (input: Record<string, unknown>, accessKeyId: string, topicArn: string) => {
    const message = requireString(input, 'Message', 'InvalidParameter');
    const attributes = (input.MessageAttributes ?? {}) as Record<string, SnsAttribute>;
    if (Object.keys(attributes).length > 10)
      throw new StandinError(
        'InvalidParameter',
        'Number of message attributes [11] exceeds the allowed maximum [10].',
      );
    const size =
      Buffer.byteLength(message) +
      Object.entries(attributes).reduce(
        (n, [k, a]) =>
          n +
          Buffer.byteLength(k) +
          Buffer.byteLength(a.DataType) +
          Buffer.byteLength(a.StringValue ?? a.BinaryValue ?? ''),
        0,
      );
    if (size > 262_144) throw new StandinError('InvalidParameter', 'Invalid parameter: Message too long');
    const fifo = topics.get(topicArn)?.fifo ?? false;
    if (fifo && typeof input.MessageGroupId !== 'string')
      throw new StandinError(
        'InvalidParameter',
        'Invalid parameter: The MessageGroupId parameter is required for FIFO topics',
      );
    const p: Published = {
      topicArn,
      messageId: randomUUID(),
      message,
      attributes,
      accessKeyId,
      ...(typeof input.Subject === 'string' ? { subject: input.Subject } : {}),
      ...(typeof input.MessageGroupId === 'string' ? { groupId: input.MessageGroupId } : {}),
    };
    published.push(p);
    deliver(p);
    return p.messageId;
  };

  const setAttribute = (sub: Subscription, name: string, value: string) => {
    if (name === 'RawMessageDelivery') sub.raw = value === 'true';
    else if (name === 'RedrivePolicy') {
      const target = (JSON.parse(value) as { deadLetterTargetArn?: string }).deadLetterTargetArn;
      if (target) sub.dlqArn = target;
    } else throw new StandinError('InvalidParameter', `Invalid parameter: AttributeName ${name}`);
  };

  const standin = await startStandin({
    service: 'SNS',
    protocol: awsQueryProtocol({ xmlns: 'http://sns.amazonaws.com/doc/2010-03-31/' }),
    operations: {
      CreateTopic(input) {
        const name = requireString(input, 'Name', 'InvalidParameter');
        const attributes = (input.Attributes ?? {}) as Record<string, string>;
        const arn = `arn:aws:sns:${options.region}:${options.accountId}:${name}`;
        topics.set(arn, { fifo: attributes.FifoTopic === 'true' || name.endsWith('.fifo') });
        return { TopicArn: arn };
      },
      Subscribe(input) {
        const topicArn = topicOf(requireString(input, 'TopicArn', 'InvalidParameter'));
        const sub: Subscription = {
          arn: `${topicArn}:${randomUUID()}`,
          topicArn,
          protocol: requireString(input, 'Protocol', 'InvalidParameter'),
          endpoint: requireString(input, 'Endpoint', 'InvalidParameter'),
          raw: false,
        };
        for (const [name, value] of Object.entries((input.Attributes ?? {}) as Record<string, string>))
          setAttribute(sub, name, value);
        subscriptions.set(sub.arn, sub);
        return { SubscriptionArn: sub.arn };
      },
      SetSubscriptionAttributes(input) {
        const sub = subscriptions.get(requireString(input, 'SubscriptionArn', 'InvalidParameter'));
        if (!sub) throw new StandinError('NotFound', 'Subscription does not exist', 404);
        setAttribute(
          sub,
          requireString(input, 'AttributeName', 'InvalidParameter'),
          String(input.AttributeValue ?? ''),
        );
        return {};
      },
      Publish(input, ctx) {
        const topicArn = topicOf(requireString(input, 'TopicArn', 'InvalidParameter'));
        return { MessageId: publish(input, ctx.accessKeyId, topicArn) };
      },
      PublishBatch(input, ctx) {
        const topicArn = topicOf(requireString(input, 'TopicArn', 'InvalidParameter'));
        const entries = (input.PublishBatchRequestEntries ?? []) as Array<Record<string, unknown>>;
        if (entries.length === 0 || entries.length > 10)
          throw new StandinError(
            'TooManyEntriesInBatchRequest',
            'The batch request contains more entries than permissible.',
          );
        const Successful: unknown[] = [];
        const Failed: unknown[] = [];
        for (const entry of entries) {
          try {
            Successful.push({ Id: entry.Id, MessageId: publish(entry, ctx.accessKeyId, topicArn) });
          } catch (error) {
            if (!(error instanceof StandinError)) throw error;
            Failed.push({ Id: entry.Id, Code: error.code, Message: error.message, SenderFault: true });
          }
        }
        return { Successful, Failed };
      },
    },
  });
  return Object.assign(standin, { published });
}
