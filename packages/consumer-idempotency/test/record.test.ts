import { describe, expect, it } from 'vitest';
import {
  consumerIdempotency,
  fifoGroupOf,
  InvalidBatchResponseError,
  InvalidOptionsError,
  InvalidSqsEventError,
  recordKey,
  resolveRecordLifetime,
  type SqsRecord,
} from '../src/index.js';
import { hashKey } from '../src/key.js';
import { assertSqsEvent, failedIdsOf } from '../src/record.js';

const QUEUE = 'arn:aws:sqs:us-east-1:123456789012:orders';
const record = (overrides: Partial<SqsRecord> = {}): SqsRecord => ({
  messageId: 'm-1',
  body: '{"sku":"x-1"}',
  eventSource: 'aws:sqs',
  eventSourceARN: QUEUE,
  messageAttributes: {},
  ...overrides,
});
const pipelineCopy = (key: string, redriveId?: string) =>
  record({
    messageId: 'm-copy',
    messageAttributes: {
      'idempotency-key': { dataType: 'String', stringValue: key },
      'redrive-count': { dataType: 'Number', stringValue: '1' },
      ...(redriveId ? { 'redrive-id': { dataType: 'String', stringValue: redriveId } } : {}),
    },
  });

describe('recordKey: which records are one message', () => {
  it('limits a content-hash key to the record’s own MessageId', () => {
    expect(recordKey(record())).toEqual({
      key: hashKey(QUEUE, '{"sku":"x-1"}', {}),
      keySource: 'hash',
      lineage: 'MSG#m-1',
    });
  });

  it('names the message by the producer id alone, whatever its MessageId', () => {
    const key = recordKey(record({ body: '{"orderId":"o-1"}' }), { jsonPath: '$.orderId' });
    expect(key).toEqual({ key: 'o-1', keySource: 'jsonPath', lineage: null });
  });

  it('limits a pipeline key that is the copy’s own content hash to the run that sent it', () => {
    const hash = hashKey(QUEUE, '{"sku":"x-1"}', {});
    expect(recordKey(pipelineCopy(hash, 'inc-7'))).toEqual({
      key: hash,
      keySource: 'hash',
      lineage: 'RUN#inc-7',
    });
    // Without a run id the copy is only itself.
    expect(recordKey(pipelineCopy(hash)).lineage).toBe('MSG#m-copy');
  });

  it('takes a pipeline key that is not the content hash as explicit (the registration knew a producer id)', () => {
    expect(recordKey(pipelineCopy('o-77', 'inc-7'))).toEqual({
      key: 'o-77',
      keySource: 'attribute',
      lineage: null,
    });
  });

  it('hashes the queue ARN, so the same body on two queues is two messages', () => {
    const other = recordKey(record({ eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:returns' }));
    expect(other.key).not.toBe(recordKey(record()).key);
  });
});

describe('fifoGroupOf', () => {
  it('returns the message group on a FIFO queue only: a standard queue’s MessageGroupId (fair queues) orders nothing', () => {
    const attributes = { MessageGroupId: 'customer-42' };
    expect(fifoGroupOf(record({ eventSourceARN: `${QUEUE}.fifo`, attributes }))).toBe('customer-42');
    expect(fifoGroupOf(record({ attributes }))).toBeUndefined();
  });
});

describe('assertSqsEvent', () => {
  it.each([
    [null, 'event'],
    [{ Records: {} }, 'Records'],
    [{ Records: [record({ messageId: '' })] }, 'Records[0].messageId'],
    [{ Records: [record(), record({ eventSource: 'aws:sns' })] }, 'Records[1].eventSource'],
    [{ Records: [record({ eventSourceARN: 'orders' })] }, 'Records[0].eventSourceARN'],
    [
      {
        Records: [
          record({
            messageAttributes: { tenant: { dataType: 'String', stringValue: 7 as unknown as string } },
          }),
        ],
      },
      'Records[0].messageAttributes["tenant"].stringValue',
    ],
  ])('names the offending field of a malformed event (%#)', (event, field) => {
    expect(() => assertSqsEvent(event)).toThrow(InvalidSqsEventError);
    try {
      assertSqsEvent(event);
    } catch (error) {
      expect((error as InvalidSqsEventError).field).toBe(field);
    }
  });
});

describe('failedIdsOf: the only response accepted is the partial batch response', () => {
  const given = new Set(['m-1', 'm-2']);
  it('returns the identifiers of a well-formed response', () => {
    expect([...failedIdsOf({ batchItemFailures: [{ itemIdentifier: 'm-2' }] }, given)]).toEqual(['m-2']);
    expect(failedIdsOf({ batchItemFailures: [] }, given).size).toBe(0);
  });

  it.each([
    [undefined, ''],
    [null, ''],
    [[], ''],
    [{}, 'batchItemFailures'],
    [{ batchItemFailures: [], ok: true }, 'ok'],
    [{ batchItemFailures: [{ itemIdentifier: 'm-9' }] }, 'batchItemFailures[0].itemIdentifier'],
    [{ batchItemFailures: [{ itemIdentifier: 'm-1', reason: 'x' }] }, 'batchItemFailures[0].reason'],
    [{ batchItemFailures: ['m-1'] }, 'batchItemFailures[0]'],
  ])('refuses %j, naming %s', (response, field) => {
    try {
      failedIdsOf(response, given);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidBatchResponseError);
      expect((error as InvalidBatchResponseError).field).toBe(field);
    }
  });
});

describe('options checked at construction', () => {
  it('defaults the record lifetime to 14 days of DLQ retention plus a 3-day redrive window', () => {
    expect(resolveRecordLifetime({})).toEqual({
      lifetime: {
        dlqRetentionSeconds: 1_209_600,
        redriveWindowSeconds: 259_200,
        recordTtlSeconds: 1_468_800,
      },
      problems: [],
    });
  });

  it('refuses a record lifetime shorter than DLQ retention plus the redrive window, saying both', () => {
    const { problems } = resolveRecordLifetime({
      dlqRetentionSeconds: 345_600,
      redriveWindowSeconds: 86_400,
      recordTtlSeconds: 345_600,
    });
    expect(problems).toEqual([
      'recordTtlSeconds (345600) must be at least dlqRetentionSeconds (345600) + redriveWindowSeconds (86400) = 432000: a redriven copy could arrive after its record expired and be processed again',
    ]);
  });

  it('lists every unusable option in one error', () => {
    try {
      consumerIdempotency({ consumer: 'orders#1', dlqRetentionSeconds: 30, claimSeconds: 0 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidOptionsError);
      expect((error as InvalidOptionsError).problems.map((p) => p.split(' ')[0])).toEqual([
        'consumer',
        'tableName',
        'claimSeconds',
        'dlqRetentionSeconds',
      ]);
    }
  });
});
