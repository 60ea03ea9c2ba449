import { execSync } from 'node:child_process';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoClient, sqsClient } from '#platform/clients.js';
import { TABLE } from '#platform/table.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';

function javaProcessesFor(port: string): number {
  const out = execSync('ps -eo args', { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes('DynamoDBLocal.jar') && line.includes(`-port ${port}`)).length;
}

describe('local stack', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
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
