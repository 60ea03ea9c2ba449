import { execSync } from 'node:child_process';
import { DescribeTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoClient, sqsClient } from '#platform/clients.js';
import { TABLE } from '#platform/table.js';
import { type LocalStack, SHARED_DYNAMODB_ENV, startLocalStack } from '../../local/stack.js';

function javaProcessesFor(port: string): number {
  // The JVM itself, not the watchdog shell that runs it (whose arguments name the jar too).
  const out = execSync('ps -eo comm,args', { encoding: 'utf8' });
  return out
    .split('\n')
    .filter(
      (line) =>
        line.startsWith('java ') && line.includes('DynamoDBLocal.jar') && line.includes(`-port ${port}`),
    ).length;
}

describe('local stack', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    // A JVM of its own (not the test run's shared DynamoDB Local), so stop() can be checked.
    stack = await startLocalStack({ dynamoEndpoint: null });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('creates the pipeline table with the idempotency-key index and points SDK clients at it', async () => {
    const table = await dynamoClient().send(new DescribeTableCommand({ TableName: stack.tableName }));
    expect(table.Table?.GlobalSecondaryIndexes?.map((i) => i.IndexName)).toEqual([TABLE.keyIndex.name]);
    expect(process.env.AWS_ENDPOINT_URL_DYNAMODB).toBe(stack.dynamoEndpoint);
  });

  it('serves SQS with ARNs in the configured account', async () => {
    const { QueueUrl } = await sqsClient().send(new CreateQueueCommand({ QueueName: 'smoke-dlq' }));
    const attrs = await sqsClient().send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    expect(attrs.Attributes?.QueueArn).toBe(`arn:aws:sqs:us-east-1:${stack.accountId}:smoke-dlq`);
  });

  it('leaves no Java process behind after stop', async () => {
    const port = new URL(stack.dynamoEndpoint).port;
    expect(javaProcessesFor(port)).toBe(1);
    await stack.stop();
    expect(javaProcessesFor(port)).toBe(0);
  });
});

describe('local stack on a shared DynamoDB Local (the test run starts one JVM)', () => {
  it('gives each stack a table of its own, keeps the JVM on stop and deletes only its table', async () => {
    const shared = process.env[SHARED_DYNAMODB_ENV];
    expect(shared).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const a = await startLocalStack({ applyEnv: false });
    const b = await startLocalStack({ applyEnv: false });
    try {
      expect(a.dynamoEndpoint).toBe(shared);
      expect(a.tableName).not.toBe(b.tableName);
      expect(b.tableName.startsWith(a.tableName)).toBe(true);
      const client = new DynamoDBClient({
        region: 'us-east-1',
        endpoint: shared as string,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      });
      await a.stop();
      const tables = (await client.send(new ListTablesCommand({}))).TableNames ?? [];
      expect(tables).toContain(b.tableName);
      expect(tables).not.toContain(a.tableName);
      expect(javaProcessesFor(new URL(shared as string).port)).toBe(1);
      client.destroy();
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
