/**
 * The incident's audit trail: who asked, approved, rejected or cancelled a redrive, when, with
 * which plan, and how each run ended. One item per event under the incident's partition,
 * `INCIDENT#<incidentId>` / `AUDIT#<entryId>`, with no TTL: it lives as long as the incident
 * (the approval record, which also names the approver, expires a few minutes after the approval
 * window; Step Functions history and Slack are not the pipeline's record).
 *
 * Writes are idempotent: each writer derives `entryId` from what it records (the approval id, the
 * execution name), and the put is conditional on the item not existing, so a retried Lambda, a
 * second delivery of a Slack click or a second `dlq cancel` records nothing twice, and the first
 * entry wins.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 */
import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { isConditionalCheckFailed } from '#platform/errors.js';
import { recordFields, shapeOf } from '#platform/record-shapes.js';
import { keys } from '#platform/table.js';

/** What an audit entry records. */
export const AUDIT_KINDS = [
  'approval-requested',
  'approved',
  'rejected',
  'cancel-requested',
  'run-started',
  'run-ended',
  'messages-edited',
] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];

/** Where the action came from. */
export type AuditVia = 'slack' | 'cli' | 'console' | 'workflow' | 'local';

/** The plan fields an audit entry keeps (what was approved). */
export interface AuditPlan {
  /**
   * The plan's mode (`redrive`, `sample-only`, `dry-run`); an un-park run reads `unpark` (a dry
   * run of one `dry-run, unpark`): it moves the parking queue's messages, not the DLQ's.
   */
  mode: string;
  sampleSize: number;
  /** Messages per second, ascending. */
  rampRates: number[];
  /** Seconds per ramp step. */
  dwellSeconds: number;
  destinationArn: string | null;
  discardPoison: boolean;
  requestedBy: string;
}

/** One event in an incident's life. Times are epoch milliseconds. */
export interface AuditEntry {
  incidentId: string;
  /** Unique within the incident and derived from the event (idempotency), e.g. `run#<name>#ended`. */
  entryId: string;
  kind: AuditKind;
  at: number;
  /** Who acted: a Slack username, the CLI user, `triage`; null when nobody did (the workflow). */
  by: string | null;
  via: AuditVia;
  executionName?: string | null;
  approvalId?: string | null;
  plan?: AuditPlan | null;
  /** The run's outcome (`completed`, `halted`, `cancelled`...), for `run-ended`. */
  outcome?: string | null;
  /** One sentence, as the notification said it. */
  text?: string | null;
  /** Counts of the run (`redriven`, `parked`, `missing`...), for `run-ended`. */
  counts?: Record<string, number> | null;
  /** The run's approval as the workflow saw it (`$.approval`), for `run-ended`. */
  approval?: { decision: string; by: string | null; reason: string | null } | null;
  /** The edit applied, for `messages-edited` (edit and resubmit). */
  transform?: {
    mergePatch?: Record<string, unknown> | undefined;
    setAttributes?: ReadonlyArray<{ name: string; value: string; dataType?: string | undefined }> | undefined;
    removeAttributes?: readonly string[] | undefined;
    reason: string;
  } | null;
  /**
   * For `messages-edited`: each edited message's envelope (its DLQ MessageId, whose envelope keeps
   * the original bytes), the SHA-256 of the original body and of what was sent, and where.
   */
  edits?: Array<{ messageId: string; originalSha256: string; editedSha256: string; target: string }> | null;
}

/** The audit trail port. */
export interface AuditTrail {
  /**
   * Records an entry unless one with the same `entryId` exists (the first one wins).
   * @returns recorded: false when the entry was already there.
   */
  record(entry: AuditEntry): Promise<{ recorded: boolean }>;
  /** Every entry of the incident, oldest first. */
  list(incidentId: string): Promise<AuditEntry[]>;
}

/** Sort-key prefix of audit entries. */
export const AUDIT_SK_PREFIX = 'AUDIT#';

/**
 * The plan fields of `$.plan` (ValidateInput's output: the rates, sample size and dwell the run
 * follows, the registration's defaults and `maxRate` applied) an audit entry keeps.
 */
export function auditPlanOf(plan: { readonly [field: string]: unknown }): AuditPlan {
  const mode = String(plan.mode ?? 'redrive');
  return {
    mode: plan.unpark === true ? (mode === 'redrive' ? 'unpark' : `${mode}, unpark`) : mode,
    sampleSize: Number(plan.sampleSize ?? 0),
    rampRates: Array.isArray(plan.rampRates) ? plan.rampRates.map(Number) : [],
    dwellSeconds: Number(plan.dwellSeconds ?? 0),
    destinationArn: typeof plan.destinationArn === 'string' ? plan.destinationArn : null,
    discardPoison: plan.discardPoison === true,
    requestedBy: typeof plan.requestedBy === 'string' ? plan.requestedBy : 'unknown',
  };
}

/**
 * Creates the DynamoDB audit trail.
 * @param options.tableName - @default the configured TABLE_NAME
 */
export function createAuditTrail(
  options: { client?: DynamoDBDocumentClient; tableName?: string } = {},
): AuditTrail {
  const client = () => options.client ?? documentClient();
  const table = options.tableName ?? pipelineConfig().tableName;
  return {
    async record(entry) {
      try {
        await client().send(
          new PutCommand({
            TableName: table,
            Item: {
              pk: keys.incident(entry.incidentId),
              sk: `${AUDIT_SK_PREFIX}${entry.entryId}`,
              entity: 'audit',
              ...shapeOf('audit-entry'),
              ...entry,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return { recorded: true };
      } catch (error) {
        if (isConditionalCheckFailed(error)) return { recorded: false };
        throw error;
      }
    },
    async list(incidentId) {
      const entries: AuditEntry[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const out = await client().send(
          new QueryCommand({
            TableName: table,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :audit)',
            ExpressionAttributeValues: { ':pk': keys.incident(incidentId), ':audit': AUDIT_SK_PREFIX },
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        );
        for (const item of out.Items ?? []) {
          const record = `audit entry ${String(item.sk)} of incident ${incidentId}`;
          entries.push(recordFields<AuditEntry>('audit-entry', item, record));
        }
        start = out.LastEvaluatedKey;
      } while (start);
      return entries.sort((a, b) => a.at - b.at || a.entryId.localeCompare(b.entryId));
    },
  };
}
