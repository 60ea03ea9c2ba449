/**
 * What Lambda's SQS event source mapping hands a function: an SDK `Message` (ReceiveMessage output)
 * turned into the `SQSRecord` of an `SQSEvent`. Used by the demo consumer and by the consumer
 * package's tests, which run handlers the way Lambda would.
 *
 * @see https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html
 */
import type { Message } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';

/**
 * The record Lambda would pass for `message`, received from the queue `queueArn` with
 * `AttributeNames` / `MessageSystemAttributeNames` = `['All']` and `MessageAttributeNames` = `['All']`.
 */
export function sqsRecordOf(message: Message, queueArn: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  const system: SQSRecord['attributes'] = {
    ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
    SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
    SenderId: attributes.SenderId ?? 'local',
    ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
  };
  for (const name of ['MessageGroupId', 'MessageDeduplicationId', 'SequenceNumber'] as const) {
    const value = attributes[name];
    if (value !== undefined) system[name] = value;
  }
  return {
    messageId: message.MessageId as string,
    receiptHandle: message.ReceiptHandle as string,
    body: message.Body ?? '',
    attributes: system,
    messageAttributes: Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([name, a]) => [
        name,
        {
          dataType: a.DataType as string,
          ...(a.StringValue !== undefined ? { stringValue: a.StringValue } : {}),
          ...(a.BinaryValue !== undefined
            ? { binaryValue: Buffer.from(a.BinaryValue).toString('base64') }
            : {}),
          stringListValues: [],
          binaryListValues: [],
        },
      ]),
    ),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: queueArn.split(':')[3] ?? process.env.AWS_REGION ?? 'us-east-1',
  };
}
