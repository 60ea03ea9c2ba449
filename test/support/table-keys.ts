/**
 * Every item key in the pipeline table, sorted: tests compare it before and after a call to prove
 * the call wrote nothing. Scans follow `LastEvaluatedKey`: one Scan page stops at 1 MB, which a
 * table holding chunked ~1 MiB bodies passes, so a single-page count under-reports.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html#Scan.Pagination
 */
import { paginateScan } from '@aws-sdk/client-dynamodb';
import { dynamoClient } from '#platform/clients.js';
import { DEFAULT_TABLE_NAME } from '#platform/table.js';

/** `pk|sk` of every item, sorted. */
export async function tableKeys(tableName = process.env.TABLE_NAME ?? DEFAULT_TABLE_NAME): Promise<string[]> {
  const keys: string[] = [];
  for await (const page of paginateScan(
    { client: dynamoClient() },
    { TableName: tableName, ProjectionExpression: 'pk, sk' },
  )) {
    for (const item of page.Items ?? []) keys.push(`${item.pk?.S}|${item.sk?.S}`);
  }
  return keys.sort();
}
