/**
 * Conformance: DynamoDB Local (the run's shared JVM) behaves as DynamoDB does where the pipeline's
 * correctness depends on it: conditional writes that fail as data, the batch limits and their
 * answer shapes, PartiQL UPDATE of a missing item, and the 400 KB item size. Each test cites the
 * page it comes from.
 */
import {
  BatchExecuteStatementCommand,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isConditionalCheckFailed } from '#platform/errors.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';

let stack: LocalStack;
let ddb: DynamoDBClient;
beforeAll(async () => {
  stack = await startLocalStack();
  ddb = new DynamoDBClient({});
});
afterAll(async () => {
  ddb?.destroy();
  await stack?.stop();
});

const key = (pk: string) => ({ pk: { S: pk }, sk: { S: 'conformance' } });
const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as Error & Record<string, unknown>,
  );

describe('conditional writes @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_PutItem.html', () => {
  it('a failed ConditionExpression is ConditionalCheckFailedException (400) and writes nothing', async () => {
    await ddb.send(new PutItemCommand({ TableName: stack.tableName, Item: { ...key('c1'), v: { N: '1' } } }));
    const error = await errorOf(
      ddb.send(
        new PutItemCommand({
          TableName: stack.tableName,
          Item: { ...key('c1'), v: { N: '2' } },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
    expect(error).toBeInstanceOf(ConditionalCheckFailedException);
    expect(isConditionalCheckFailed(error)).toBe(true);
    expect((error as unknown as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode).toBe(
      400,
    );
    // Without ReturnValuesOnConditionCheckFailure the error carries no item.
    expect(error?.Item).toBeUndefined();
    const stored = await ddb.send(new GetItemCommand({ TableName: stack.tableName, Key: key('c1') }));
    expect(stored.Item?.v).toEqual({ N: '1' });
  });

  // @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html#DDB-UpdateItem-request-ReturnValuesOnConditionCheckFailure
  it('ReturnValuesOnConditionCheckFailure ALL_OLD puts the item as it was on the error, in AttributeValue form', async () => {
    await ddb.send(
      new PutItemCommand({
        TableName: stack.tableName,
        Item: { ...key('c2'), owner: { S: 'run-a' }, n: { N: '7' } },
      }),
    );
    const error = await errorOf(
      ddb.send(
        new UpdateItemCommand({
          TableName: stack.tableName,
          Key: key('c2'),
          UpdateExpression: 'SET #o = :me',
          ConditionExpression: '#o = :me',
          ExpressionAttributeNames: { '#o': 'owner' },
          ExpressionAttributeValues: { ':me': { S: 'run-b' } },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    expect(isConditionalCheckFailed(error)).toBe(true);
    expect(error?.Item).toEqual({ ...key('c2'), owner: { S: 'run-a' }, n: { N: '7' } });
  });

  it('ALL_OLD on a condition failed by a missing item returns no Item', async () => {
    const error = await errorOf(
      ddb.send(
        new UpdateItemCommand({
          TableName: stack.tableName,
          Key: key('c3-missing'),
          UpdateExpression: 'SET n = :n',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':n': { N: '1' } },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    expect(isConditionalCheckFailed(error)).toBe(true);
    expect(error?.Item).toBeUndefined();
  });
});

describe('BatchWriteItem @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html', () => {
  const puts = (n: number, prefix: string) =>
    Array.from({ length: n }, (_, i) => ({ PutRequest: { Item: { ...key(`${prefix}-${i}`) } } }));

  it('refuses 26 requests in one call with ValidationException and writes none of them', async () => {
    const error = await errorOf(
      ddb.send(new BatchWriteItemCommand({ RequestItems: { [stack.tableName]: puts(26, 'b26') } })),
    );
    expect(error?.name).toBe('ValidationException');
    const written = await ddb.send(
      new BatchWriteItemCommand({ RequestItems: { [stack.tableName]: puts(1, 'b26') } }),
    );
    expect(written.UnprocessedItems).toEqual({});
  });

  it('C22 answers 25 requests with UnprocessedItems keyed by table (empty when all were written)', async () => {
    const out = await ddb.send(
      new BatchWriteItemCommand({ RequestItems: { [stack.tableName]: puts(25, 'b25') } }),
    );
    // The pipeline reads `UnprocessedItems[table]`: the map is present and holds no entry when
    // every put was written (DynamoDB Local never throttles, so it is always empty here).
    expect(out.UnprocessedItems).toEqual({});
    expect(out.$metadata.httpStatusCode).toBe(200);
  });
});

describe('PartiQL BatchExecuteStatement @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchExecuteStatement.html', () => {
  const update = (pk: string) => ({
    Statement: `UPDATE "${stack.tableName}" SET "v" = ? WHERE pk = ? AND sk = ?`,
    Parameters: [{ N: '1' }, { S: pk }, { S: 'conformance' }],
  });

  // @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ql-reference.update.html
  it('answers an UPDATE of a missing item with the per-statement error ConditionalCheckFailed, and applies the others', async () => {
    await ddb.send(new PutItemCommand({ TableName: stack.tableName, Item: key('p-present') }));
    const out = await ddb.send(
      new BatchExecuteStatementCommand({ Statements: [update('p-missing'), update('p-present')] }),
    );
    expect(out.Responses?.map((r) => r.Error?.Code ?? 'ok')).toEqual(['ConditionalCheckFailed', 'ok']);
  });

  it('refuses 26 statements in one call with ValidationException', async () => {
    const statements = Array.from({ length: 26 }, (_, i) => update(`p-${i}`));
    const error = await errorOf(ddb.send(new BatchExecuteStatementCommand({ Statements: statements })));
    expect(error?.name).toBe('ValidationException');
  });
});

describe('item size @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html', () => {
  // Size = UTF-8 bytes of attribute names + values: pk, sk and `body` below.
  const LIMIT = 400 * 1024;
  const item = (pk: string, bodyBytes: number) => ({
    ...key(pk),
    body: { S: 'x'.repeat(bodyBytes) },
  });
  const overhead = (pk: string) =>
    'pk'.length + pk.length + 'sk'.length + 'conformance'.length + 'body'.length;

  // @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Constraints.html#limits-items
  it('accepts an item of exactly 400 KB and refuses one byte more with ValidationException', async () => {
    const pk = 's400';
    await ddb.send(new PutItemCommand({ TableName: stack.tableName, Item: item(pk, LIMIT - overhead(pk)) }));
    const error = await errorOf(
      ddb.send(new PutItemCommand({ TableName: stack.tableName, Item: item(pk, LIMIT - overhead(pk) + 1) })),
    );
    expect(error?.name).toBe('ValidationException');
    expect(String(error?.message)).toMatch(/size/i);
  });

  it('counts a string in UTF-8 bytes, not characters', async () => {
    const pk = 's400u';
    // 'é' is 2 bytes: half as many characters as the limit allows bytes, plus one, is over it.
    const chars = Math.floor((LIMIT - overhead(pk)) / 2) + 1;
    const error = await errorOf(
      ddb.send(
        new PutItemCommand({
          TableName: stack.tableName,
          Item: { ...key(pk), body: { S: 'é'.repeat(chars) } },
        }),
      ),
    );
    expect(error?.name).toBe('ValidationException');
  });
});
