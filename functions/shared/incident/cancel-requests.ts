/**
 * Cancel requests: a person (a Slack Cancel click, `dlq cancel`) asks a running redrive to stop.
 * The request is recorded on the run, `INCIDENT#<incidentId>` / `CANCEL#<executionName>`, and the
 * ramp's next health gate (the MoveTask function, every action) reads it: it cancels the move task
 * the run owns and ends the ramp with `decision: 'cancelled'`, so the workflow reconciles and ends
 * `Cancelled` (docs/redrive-workflow.md). The first request wins (a conditional put): a double
 * click or a second `dlq cancel` records nothing new and is told who asked first.
 *
 * The item has no TTL: it is small and stays with the incident, like its audit trail.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CancelMessageMoveTask.html
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, type TableAccess } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { isConditionalCheckFailed } from '#platform/errors.js';
import { recordFields, shapeOf } from '#platform/record-shapes.js';
import { keys } from '#platform/table.js';
import type { AuditVia } from './audit-trail.js';

/** A request to cancel one run. `at` is epoch milliseconds. */
export interface CancelRequest {
  incidentId: string;
  executionName: string;
  by: string;
  via: AuditVia;
  at: number;
  reason: string | null;
}

/** The cancel-request port. */
export interface CancelRequests {
  /**
   * Records the request unless one exists for the run.
   * @returns `recorded: false` with the first request when the run already had one.
   */
  request(
    request: CancelRequest,
  ): Promise<{ recorded: true } | { recorded: false; existing: CancelRequest | null }>;
  /** The run's request, or null. Consistent read: a gate right after a click sees it. */
  get(incidentId: string, executionName: string): Promise<CancelRequest | null>;
}

/** Creates the DynamoDB cancel-request store. @param table - @default the configured table */
export function createCancelRequests(table: Partial<TableAccess> = {}): CancelRequests {
  const client = () => table.client ?? documentClient();
  const tableName = () => table.tableName ?? pipelineConfig().tableName;
  const key = (incidentId: string, executionName: string) => ({
    pk: keys.incident(incidentId),
    sk: keys.cancelRequest(executionName),
  });
  const get = async (incidentId: string, executionName: string) => {
    const out = await client().send(
      new GetCommand({ TableName: tableName(), Key: key(incidentId, executionName), ConsistentRead: true }),
    );
    if (!out.Item) return null;
    const record = `cancel request of ${executionName} (incident ${incidentId})`;
    return recordFields<CancelRequest>('cancel-request', out.Item, record);
  };
  return {
    async request(request) {
      try {
        await client().send(
          new PutCommand({
            TableName: tableName(),
            Item: {
              ...key(request.incidentId, request.executionName),
              entity: 'cancel-request',
              ...shapeOf('cancel-request'),
              ...request,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return { recorded: true };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        return { recorded: false, existing: await get(request.incidentId, request.executionName) };
      }
    },
    get,
  };
}
