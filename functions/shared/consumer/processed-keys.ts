/**
 * The pipeline's reader of processed keys: "was key K processed since T?", answered from the
 * records consumers write with `@dlq-redrive/consumer-idempotency` (`KEY#<key>` /
 * `PROCESSED#<consumer>[#<lineage>]` in the pipeline table; layout, lifetime and expiry owned by
 * the package). VerifySample and the health gate use it; the contract is in docs/contracts.md
 * ("Processed keys").
 *
 * Only COMPLETED records count, and a record whose `expiresAt` has passed is absent even while
 * DynamoDB's TTL has not deleted it yet. A key no consumer reports (a consumer that does not use
 * the package) is simply absent: "not known", never "not processed".
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html
 */
import {
  createProcessedKeysReader,
  type ProcessedKeysReader,
  type ProcessedRecord,
} from '@dlq-redrive/consumer-idempotency';
import { dynamoClient, type TableAccess } from '#platform/clients.js';

export type { ProcessedKeysReader, ProcessedRecord };

/**
 * The reader on the pipeline table.
 * @param table - the table (a function's `tableAccess(config)`).
 * @param options.now - the clock that decides expiry. @default () => new Date()
 */
export function createProcessedKeys(
  table: Pick<TableAccess, 'tableName'>,
  options: { now?: () => Date } = {},
): ProcessedKeysReader {
  return {
    // Built per call: the shared client is replaced when the endpoint variables change (local runs).
    processedSince: (keys, since, filter) =>
      createProcessedKeysReader({
        tableName: table.tableName,
        client: dynamoClient(),
        ...(options.now ? { now: options.now } : {}),
      }).processedSince(keys, since, filter),
  };
}
