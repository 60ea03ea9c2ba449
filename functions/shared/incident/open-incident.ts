/**
 * The DLQ's open incident (`DLQ#<dlqArn>` / `OPEN_INCIDENT`): the incident whose messages are not
 * all settled yet. Preflight records it when a run takes the DLQ's workflow lease; Reconcile clears
 * it once nothing of the incident is left in the DLQ (nothing in flight, nothing missing).
 *
 * A console start that names no incident continues the open one (ValidateInput reads it), so a
 * restart after a failed run is another run of the same incident: it takes over the earlier run's
 * unfinished ledger entries and its report covers every run (docs/console.md).
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 */
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { asTransient, isConditionalCheckFailed } from '#platform/errors.js';
import { readShape, shapeOf } from '#platform/record-shapes.js';
import { keys } from '#platform/table.js';

/** The open incident of a DLQ. */
export interface OpenIncident {
  dlqArn: string;
  incidentId: string;
  /** ISO-8601. */
  updatedAt: string;
}

/** The open-incident port. */
export interface OpenIncidents {
  get(dlqArn: string): Promise<OpenIncident | undefined>;
  /** Records `incidentId` as the DLQ's open incident (the latest run's incident wins). */
  open(dlqArn: string, incidentId: string, nowMs: number): Promise<void>;
  /** Clears the pointer if it still names `incidentId`. */
  close(dlqArn: string, incidentId: string): Promise<void>;
}

/**
 * Creates the open-incident store.
 * @param options.client - @default the shared document client
 * @param options.tableName - @default process.env.TABLE_NAME ?? 'dlq-redrive'
 */
export function createOpenIncidents(
  options: { client?: DynamoDBDocumentClient; tableName?: string } = {},
): OpenIncidents {
  const client = () => options.client ?? documentClient();
  const table = () => options.tableName ?? pipelineConfig().tableName;
  const key = (dlqArn: string) => ({ pk: keys.dlq(dlqArn), sk: keys.openIncident });
  return {
    async get(dlqArn) {
      try {
        const out = await client().send(
          new GetCommand({ TableName: table(), Key: key(dlqArn), ConsistentRead: true }),
        );
        if (!out.Item) return undefined;
        const item = readShape('open-incident', out.Item, `open incident of ${dlqArn}`);
        if (typeof item.incidentId !== 'string') return undefined;
        return { dlqArn, incidentId: item.incidentId, updatedAt: String(item.updatedAt ?? '') };
      } catch (error) {
        throw asTransient('dynamodb:GetItem (open incident)', error);
      }
    },
    async open(dlqArn, incidentId, nowMs) {
      try {
        await client().send(
          new PutCommand({
            TableName: table(),
            Item: {
              ...key(dlqArn),
              ...shapeOf('open-incident'),
              dlqArn,
              incidentId,
              updatedAt: new Date(nowMs).toISOString(),
            },
          }),
        );
      } catch (error) {
        throw asTransient('dynamodb:PutItem (open incident)', error);
      }
    },
    async close(dlqArn, incidentId) {
      try {
        await client().send(
          new DeleteCommand({
            TableName: table(),
            Key: key(dlqArn),
            ConditionExpression: 'incidentId = :inc',
            ExpressionAttributeValues: { ':inc': incidentId },
          }),
        );
      } catch (error) {
        if (isConditionalCheckFailed(error)) return;
        throw asTransient('dynamodb:DeleteItem (open incident)', error);
      }
    },
  };
}
