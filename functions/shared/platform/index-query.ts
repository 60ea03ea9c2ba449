/**
 * Reads one partition of the table's `byIdempotencyKey` index, every page. The index is
 * overloaded: besides idempotency keys (`KEY#...`) and redrive runs (`RUN#...`) it holds the
 * listing partitions `INCIDENTS` and `REGISTRATIONS`, so a listing costs a few reads however many
 * envelopes the table holds.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-gsi-overloading.html
 */
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE } from './table.js';

/**
 * Every item of the index partition `partition` (or the first `limit`), in sort-key order.
 * @param options.descending - newest first when the sort key starts with a time. @default false
 */
export async function queryIndexPartition(
  client: DynamoDBDocumentClient,
  tableName: string,
  partition: string,
  options: { descending?: boolean; limit?: number } = {},
): Promise<Record<string, unknown>[]> {
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await client.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: TABLE.keyIndex.name,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': TABLE.keyIndex.partitionKey },
        ExpressionAttributeValues: { ':pk': partition },
        ScanIndexForward: !options.descending,
        ...(Number.isFinite(limit) ? { Limit: Math.min(1000, limit - items.length) } : {}),
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start && items.length < limit);
  return items.slice(0, limit);
}
