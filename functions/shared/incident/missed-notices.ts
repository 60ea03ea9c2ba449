/**
 * Notices that went to the log instead of Slack (Slack rate-limited or unreachable within
 * the invocation's deadline), kept on the incident item (`INCIDENT#<id>` / `INCIDENT`,
 * attribute `slackMissedNotices`) so the next message posted to the incident's thread carries
 * them: an SRE following the thread learns what they missed without reading the logs.
 *
 * At most {@link MAX_MISSED_NOTICES} are kept (the rest are only in the log); `take` removes and
 * returns them in one conditional UpdateItem, so two notifiers never both repeat them.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, type TableAccess } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { isConditionalCheckFailed } from '#platform/errors.js';
import { keys } from '#platform/table.js';

/** Most missed notices kept on one incident. */
export const MAX_MISSED_NOTICES = 10;

/** One notice that did not reach Slack. `at`: epoch milliseconds. */
export interface MissedNotice {
  kind: string;
  text: string;
  at: number;
}

/** The missed-notice port of the Slack notifier. */
export interface MissedNotices {
  /** Keeps a notice on the incident; a missing incident or a full list keeps nothing (no error). */
  keep(incidentId: string, notice: MissedNotice): Promise<void>;
  /** Removes and returns the incident's kept notices, oldest first ([] when none). */
  take(incidentId: string): Promise<MissedNotice[]>;
}

/** The store on the pipeline table. @param table - @default the configured table */
export function createMissedNotices(table: Partial<TableAccess> = {}): MissedNotices {
  const client = () => table.client ?? documentClient();
  const tableName = () => table.tableName ?? pipelineConfig().tableName;
  const Key = (incidentId: string) => ({ pk: keys.incident(incidentId), sk: keys.incidentSk });
  return {
    async keep(incidentId, notice) {
      try {
        await client().send(
          new UpdateCommand({
            TableName: tableName(),
            Key: Key(incidentId),
            ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#m) OR size(#m) < :max)',
            UpdateExpression: 'SET #m = list_append(if_not_exists(#m, :empty), :one)',
            ExpressionAttributeNames: { '#m': 'slackMissedNotices' },
            ExpressionAttributeValues: { ':max': MAX_MISSED_NOTICES, ':empty': [], ':one': [notice] },
          }),
        );
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },
    async take(incidentId) {
      try {
        const out = await client().send(
          new UpdateCommand({
            TableName: tableName(),
            Key: Key(incidentId),
            ConditionExpression: 'attribute_exists(#m)',
            UpdateExpression: 'REMOVE #m',
            ExpressionAttributeNames: { '#m': 'slackMissedNotices' },
            ReturnValues: 'UPDATED_OLD',
          }),
        );
        return (out.Attributes?.slackMissedNotices as MissedNotice[] | undefined) ?? [];
      } catch (error) {
        if (isConditionalCheckFailed(error)) return [];
        throw error;
      }
    },
  };
}
