/**
 * Patching an existing incident item (one conditional UpdateItem), apart from the rest of the
 * incident store so a function that only writes results (Preflight's status) does not bundle
 * the store's reads and transitions.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html
 */
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { isConditionalCheckFailed, RecordNotFoundError } from '#platform/errors.js';
import { keys } from '#platform/table.js';

/**
 * Sets each defined field of `patch` (and `updatedAt`, ISO 8601, now unless given) on the
 * incident item.
 * @throws RecordNotFoundError when the incident has no item.
 */
export type UpdateIncident = (incidentId: string, patch: Record<string, unknown>) => Promise<void>;

/** The incident patcher on the pipeline table (or `options.tableName`). */
export function createIncidentUpdater(
  options: { client?: DynamoDBDocumentClient; tableName?: string } = {},
): UpdateIncident {
  return async (incidentId, patch) => {
    const client = options.client ?? documentClient();
    const table = options.tableName ?? pipelineConfig().tableName;
    const fields = Object.entries({
      ...patch,
      updatedAt: patch.updatedAt ?? new Date().toISOString(),
    }).filter(([, v]) => v !== undefined);
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const sets = fields.map(([k, v], i) => {
      names[`#f${i}`] = k;
      values[`:v${i}`] = v;
      return `#f${i} = :v${i}`;
    });
    try {
      await client.send(
        new UpdateCommand({
          TableName: table,
          Key: { pk: keys.incident(incidentId), sk: keys.incidentSk },
          ConditionExpression: 'attribute_exists(pk)',
          UpdateExpression: `SET ${sets.join(', ')}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) throw new RecordNotFoundError(`incident ${incidentId}`, error);
      throw error;
    }
  };
}
