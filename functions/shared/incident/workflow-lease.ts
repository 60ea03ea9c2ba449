/**
 * The per-DLQ workflow lease: at most one redrive workflow works on a DLQ at a time.
 *
 * Item `DLQ#<dlqArn>` / `WORKFLOW` ({@link WorkflowLease}). Preflight acquires it with a conditional
 * put once every check has passed (not in dry-run mode); Notify and RecordFailure release it with a
 * conditional delete at the end of every run. The holder is the pair (incident id, execution name):
 * a retried Preflight of the same execution re-acquires (and extends) its own lease, any other
 * execution is refused until the holder releases it or the lease expires.
 *
 * Expiry (`expiresAt`, the table's TTL attribute, epoch seconds) is generous: the longest a run can
 * legitimately take after Preflight, {@link leaseSeconds} = approval timeout (1 h) + verification
 * window + the 36-hour move task limit + 12 h margin. An expired lease is taken over by the next
 * Preflight even before TTL deletes it (TTL deletion may lag by days), so a run that died without
 * reaching Notify (execution aborted or timed out) blocks its DLQ for at most that long.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { isConditionalCheckFailed } from '#platform/errors.js';
import { readShape, shapeOf } from '#platform/record-shapes.js';
import { keys } from '#platform/table.js';

/** `RequestApproval` TimeoutSeconds in statemachines/redrive.asl.json, seconds. */
export const APPROVAL_TIMEOUT_SECONDS = 3600;
/** The longest a move task runs before SQS fails it, seconds (36 hours). */
export const MOVE_TASK_LIMIT_SECONDS = 36 * 3600;
/** Safety margin on top of the longest run, seconds (12 hours). */
export const LEASE_MARGIN_SECONDS = 12 * 3600;

/**
 * How long a lease lasts, seconds: approval timeout + verification window + 36 h + 12 h margin.
 * @param verifyWindowSeconds - the sample verification window Preflight computed, seconds.
 */
export function leaseSeconds(verifyWindowSeconds: number): number {
  return (
    APPROVAL_TIMEOUT_SECONDS +
    Math.max(0, verifyWindowSeconds) +
    MOVE_TASK_LIMIT_SECONDS +
    LEASE_MARGIN_SECONDS
  );
}

/** Who holds (or wants) the lease. */
export interface LeaseHolder {
  incidentId: string;
  /** `$$.Execution.Name`; the incident id when the caller has no execution name (direct invocation). */
  executionName: string;
}

/** `DLQ#<dlqArn>` / `WORKFLOW`. */
export interface WorkflowLease extends LeaseHolder {
  dlqArn: string;
  /** ISO-8601. */
  acquiredAt: string;
  /** Epoch seconds (TTL attribute). */
  expiresAt: number;
}

/** Result of {@link WorkflowLeaseStore.acquire}. */
export type AcquireResult =
  | { acquired: true; lease: WorkflowLease }
  | { acquired: false; heldBy: WorkflowLease };

/** Port used by Preflight and Notify. */
export interface WorkflowLeaseStore {
  /**
   * Takes the lease when it is free, expired, or already held by `holder` (re-acquire extends it).
   * @param nowMs - epoch milliseconds.
   * @param ttlSeconds - lease length, seconds ({@link leaseSeconds}).
   * @throws the SDK error on anything but a failed condition (throttling is retried by the workflow).
   */
  acquire(dlqArn: string, holder: LeaseHolder, nowMs: number, ttlSeconds: number): Promise<AcquireResult>;
  /**
   * Deletes the lease only if `holder` still holds it. Idempotent; never deletes another run's lease.
   * @returns true when this call deleted it.
   */
  release(dlqArn: string, holder: LeaseHolder): Promise<boolean>;
  /** The current lease item, expired or not, or undefined. */
  get(dlqArn: string): Promise<WorkflowLease | undefined>;
}

/** The lease's refusal sentence, naming the holder. */
export function leaseRefusal(lease: LeaseHolder): string {
  return `another redrive of this DLQ is in progress (incident ${lease.incidentId}, execution ${lease.executionName})`;
}

const leaseKey = (dlqArn: string) => ({ pk: keys.dlq(dlqArn), sk: keys.workflowLease });

/** @throws UnknownShapeVersionError when a newer release wrote the lease. */
function toLease(stored: Record<string, unknown>): WorkflowLease {
  const item = readShape('workflow-lease', stored, `workflow lease of ${String(stored.dlqArn)}`);
  return {
    dlqArn: String(item.dlqArn),
    incidentId: String(item.incidentId),
    executionName: String(item.executionName),
    acquiredAt: String(item.acquiredAt),
    expiresAt: Number(item.expiresAt),
  };
}

/** The DynamoDB-backed lease store (table from `TABLE_NAME`). */
export function createWorkflowLeaseStore(
  options: { client?: DynamoDBDocumentClient; tableName?: string } = {},
): WorkflowLeaseStore {
  const client = options.client ?? documentClient();
  const table = options.tableName ?? pipelineConfig().tableName;
  const store: WorkflowLeaseStore = {
    async acquire(dlqArn, holder, nowMs, ttlSeconds) {
      const nowSeconds = Math.floor(nowMs / 1000);
      const lease: WorkflowLease = {
        dlqArn,
        incidentId: holder.incidentId,
        executionName: holder.executionName,
        acquiredAt: new Date(nowMs).toISOString(),
        expiresAt: nowSeconds + ttlSeconds,
      };
      try {
        await client.send(
          new PutCommand({
            TableName: table,
            Item: { ...leaseKey(dlqArn), entity: 'workflowLease', ...shapeOf('workflow-lease'), ...lease },
            ConditionExpression:
              'attribute_not_exists(pk) OR (incidentId = :i AND executionName = :e) OR expiresAt <= :now',
            ExpressionAttributeValues: {
              ':i': holder.incidentId,
              ':e': holder.executionName,
              ':now': nowSeconds,
            },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { acquired: true, lease };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        // ReturnValuesOnConditionCheckFailure comes back in the low-level (AttributeValue) form.
        const item = (error as { Item?: Record<string, AttributeValue> }).Item;
        const held = item ? toLease(unmarshall(item)) : await store.get(dlqArn);
        // Released between the put and the read: try once more.
        if (!held) return store.acquire(dlqArn, holder, nowMs, ttlSeconds);
        return { acquired: false, heldBy: held };
      }
    },
    async release(dlqArn, holder) {
      try {
        await client.send(
          new DeleteCommand({
            TableName: table,
            Key: leaseKey(dlqArn),
            ConditionExpression: 'incidentId = :i AND executionName = :e',
            ExpressionAttributeValues: { ':i': holder.incidentId, ':e': holder.executionName },
          }),
        );
        return true;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return false;
        throw error;
      }
    },
    async get(dlqArn) {
      const out = await client.send(
        new GetCommand({ TableName: table, Key: leaseKey(dlqArn), ConsistentRead: true }),
      );
      return out.Item ? toLease(out.Item) : undefined;
    },
  };
  return store;
}
