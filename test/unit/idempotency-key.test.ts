import { describe, expect, it } from 'vitest';
import {
  deriveIdempotencyKey,
  idempotencyKeyOfMessage,
  type KeyInput,
  readJsonPath,
} from '#inventory/idempotency-key.js';

const SOURCE = 'arn:aws:sqs:us-east-1:111122223333:orders-queue';
const MESSAGE_ID = '11111111-0000-4000-8000-000000000001';

describe('idempotency key derivation', () => {
  it('uses the producer id from the message attribute the registration names', () => {
    const key = deriveIdempotencyKey({
      sourceArn: SOURCE,
      body: '{"orderId":"o-1"}',
      messageAttributes: { 'producer-id': { dataType: 'String', stringValue: 'evt-42' } },
      producerKey: { attribute: 'producer-id' },
    });
    expect(key).toEqual({ key: 'evt-42', keySource: 'attribute' });
  });

  it('uses the producer id at the JSON path the registration names', () => {
    const key = deriveIdempotencyKey({
      sourceArn: SOURCE,
      body: '{"meta":{"eventId":"evt-7"},"orderId":"o-1"}',
      messageAttributes: {},
      producerKey: { jsonPath: '$.meta.eventId' },
    });
    expect(key).toEqual({ key: 'evt-7', keySource: 'jsonPath' });
  });

  it('keys producer integers beyond 2^53 by their digits, so neighbouring ids stay apart', () => {
    const keyOf = (body: string) =>
      deriveIdempotencyKey({
        sourceArn: SOURCE,
        body,
        messageAttributes: {},
        producerKey: { jsonPath: '$.orderId' },
      });
    expect(keyOf('{"orderId":1234567890123456789}')).toEqual({
      key: '1234567890123456789',
      keySource: 'jsonPath',
    });
    expect(keyOf('{"orderId":1234567890123456790}').key).toBe('1234567890123456790');
    expect(keyOf('{"orderId":-9007199254740993}').key).toBe('-9007199254740993');
    expect(readJsonPath('{"a":{"orderId":18446744073709551615}}', '$.a.orderId')).toBe(
      '18446744073709551615',
    );
  });

  it('keeps the keys of every other number as before (safe integers, decimals, exponents)', () => {
    expect(readJsonPath('{"orderId":42}', '$.orderId')).toBe('42');
    expect(readJsonPath('{"orderId":9007199254740991}', '$.orderId')).toBe('9007199254740991');
    expect(readJsonPath('{"orderId":1.50}', '$.orderId')).toBe('1.5');
    expect(readJsonPath('{"orderId":1e21}', '$.orderId')).toBe('1e+21');
    expect(readJsonPath('{"orderId":12345678901234567.5}', '$.orderId')).toBe('12345678901234568');
    expect(readJsonPath('{"orderId":1e400}', '$.orderId')).toBeUndefined();
  });

  it('C12 uses the SNS MessageId for a non-raw SNS notification body', () => {
    const body = JSON.stringify({
      Type: 'Notification',
      MessageId: '9a1c7e55-0000-4000-8000-000000000001',
      TopicArn: 'arn:aws:sns:us-east-1:111122223333:order-events',
      Message: '{"orderId":"o-8"}',
    });
    expect(idempotencyKeyOfMessage({ Body: body, Attributes: { DeadLetterQueueSourceArn: SOURCE } })).toEqual(
      {
        key: '9a1c7e55-0000-4000-8000-000000000001',
        keySource: 'snsMessageId',
      },
    );
  });

  it('hashes source ARN, body and attributes identically whatever the attribute order', () => {
    const a: KeyInput = {
      sourceArn: SOURCE,
      body: 'payload',
      messageAttributes: {
        tenant: { dataType: 'String', stringValue: 'acme' },
        sig: { dataType: 'Binary', binaryValueBase64: '3q2+7w==' },
      },
    };
    const b: KeyInput = {
      ...a,
      messageAttributes: {
        sig: { dataType: 'Binary', binaryValueBase64: '3q2+7w==' },
        tenant: { dataType: 'String', stringValue: 'acme' },
      },
    };
    const ka = deriveIdempotencyKey(a);
    expect(ka.keySource).toBe('hash');
    expect(ka.key).toMatch(/^[0-9a-f]{64}$/);
    expect(deriveIdempotencyKey(b).key).toBe(ka.key);
    expect(deriveIdempotencyKey({ ...a, body: 'payload!' }).key).not.toBe(ka.key);
    expect(deriveIdempotencyKey({ ...a, sourceArn: `${SOURCE}-2` }).key).not.toBe(ka.key);
  });

  it('never uses the SQS MessageId: the same message with a new MessageId after a redrive keeps its key', () => {
    const first = idempotencyKeyOfMessage({ Body: 'x', Attributes: { DeadLetterQueueSourceArn: SOURCE } });
    const redriven = idempotencyKeyOfMessage({
      Body: 'x',
      Attributes: { DeadLetterQueueSourceArn: SOURCE },
      MessageAttributes: {
        'redrive-count': { DataType: 'Number', StringValue: '1' },
        'redrive-id': { DataType: 'String', StringValue: 'run-1' },
      },
    });
    expect(redriven).toEqual(first);
    expect(first.key).not.toContain(MESSAGE_ID);
  });

  it('prefers the idempotency-key attribute a previous redrive attached', () => {
    const key = idempotencyKeyOfMessage({
      Body: 'x',
      MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: 'k-from-redrive' } },
    });
    expect(key).toEqual({ key: 'k-from-redrive', keySource: 'attribute' });
  });

  it('falls back to the hash when the named producer attribute is missing', () => {
    const key = deriveIdempotencyKey({
      sourceArn: SOURCE,
      body: '{}',
      messageAttributes: {},
      producerKey: { attribute: 'producer-id' },
    });
    expect(key.keySource).toBe('hash');
  });

  it('an attribute named __proto__ (valid in SQS, kept by the SDK as an own key) is part of the key: messages differing only there get different keys', () => {
    const message = (value: string) => ({
      Body: '{"orderId":"o-1"}',
      Attributes: { DeadLetterQueueSourceArn: SOURCE },
      MessageAttributes: JSON.parse(
        `{"__proto__":{"DataType":"String","StringValue":"${value}"},"tenant":{"DataType":"String","StringValue":"acme"}}`,
      ),
    });
    const a = idempotencyKeyOfMessage(message('A'));
    const b = idempotencyKeyOfMessage(message('B'));
    const without = idempotencyKeyOfMessage({
      Body: '{"orderId":"o-1"}',
      Attributes: { DeadLetterQueueSourceArn: SOURCE },
      MessageAttributes: { tenant: { DataType: 'String', StringValue: 'acme' } },
    });
    expect(a.keySource).toBe('hash');
    expect(a.key).not.toBe(b.key);
    expect(a.key).not.toBe(without.key);
  });

  it('keeps the key of a Lambda async-invocation DLQ message when it dead-letters again with a new RequestID', () => {
    const failed = (requestId: string, message: string) =>
      idempotencyKeyOfMessage({
        Body: '{"orderId":"o-3"}',
        MessageAttributes: {
          RequestID: { DataType: 'String', StringValue: requestId },
          ErrorCode: { DataType: 'Number', StringValue: '200' },
          ErrorMessage: { DataType: 'String', StringValue: message },
          tenant: { DataType: 'String', StringValue: 'acme' },
        },
      });
    const first = failed('1f8b6b0e-aaaa-4000-8000-000000000001', 'timeout calling inventory');
    expect(failed('1f8b6b0e-bbbb-4000-8000-000000000002', 'inventory unavailable')).toEqual(first);
    // Without Lambda's attributes the tenant still counts: another tenant is another message.
    const other = idempotencyKeyOfMessage({
      Body: '{"orderId":"o-3"}',
      MessageAttributes: {
        RequestID: { DataType: 'String', StringValue: 'x' },
        ErrorCode: { DataType: 'Number', StringValue: '200' },
        tenant: { DataType: 'String', StringValue: 'globex' },
      },
    });
    expect(other.key).not.toBe(first.key);
  });

  it('keeps an ErrorCode attribute of a message that is not from a Lambda DLQ in the hash', () => {
    const withCode = (code: string) =>
      idempotencyKeyOfMessage({
        Body: 'x',
        MessageAttributes: { ErrorCode: { DataType: 'String', StringValue: code } },
      }).key;
    expect(withCode('A')).not.toBe(withCode('B'));
  });

  it('keys a Lambda on-failure record by the unqualified function and its request payload, not the request id', () => {
    const record = (requestId: string, version: string) =>
      idempotencyKeyOfMessage({
        Body: JSON.stringify({
          version: '1.0',
          timestamp: '2026-01-02T08:00:00.000Z',
          requestContext: {
            requestId,
            functionArn: `arn:aws:lambda:us-east-1:111122223333:function:ship-order:${version}`,
            condition: 'RetriesExhausted',
            approximateInvokeCount: 3,
          },
          requestPayload: { orderId: 'o-4' },
          responseContext: { statusCode: 200, executedVersion: version, functionError: 'Unhandled' },
          responsePayload: { errorType: 'Error', errorMessage: 'boom' },
        }),
      });
    const first = record('r-1', '$LATEST');
    expect(record('r-2', '7')).toEqual(first);
    expect(first.keySource).toBe('hash');
  });

  it('prefers the pipeline key inside a non-raw SNS body over the new SNS MessageId of a republished copy', () => {
    const body = JSON.stringify({
      Type: 'Notification',
      MessageId: 'new-sns-id',
      TopicArn: 'arn:aws:sns:us-east-1:111122223333:order-events',
      Message: '{"orderId":"o-8"}',
      MessageAttributes: { 'idempotency-key': { Type: 'String', Value: 'original-sns-id' } },
    });
    expect(idempotencyKeyOfMessage({ Body: body })).toEqual({
      key: 'original-sns-id',
      keySource: 'attribute',
    });
  });
});
