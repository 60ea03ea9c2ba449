/** Reads processed-key items straight from the table, to assert what the middleware wrote. */
import { type AttributeValue, DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';

let client: DynamoDBClient | undefined;

/** Every item under `KEY#<key>` whose sort key starts with `PROCESSED#`, as plain strings/numbers. */
export async function itemsOfKey(tableName: string, key: string): Promise<Record<string, string>[]> {
  client ??= new DynamoDBClient({});
  const out = await client.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': { S: `KEY#${key}` }, ':p': { S: 'PROCESSED#' } },
      ConsistentRead: true,
    }),
  );
  return (out.Items ?? []).map((item: Record<string, AttributeValue>) =>
    Object.fromEntries(Object.entries(item).map(([name, v]) => [name, v.S ?? v.N ?? JSON.stringify(v)])),
  );
}

/** Forgets the cached client (after the local stack changed the endpoint variables). */
export function resetTableClient(): void {
  client = undefined;
}
