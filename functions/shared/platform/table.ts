/**
 * The single DynamoDB table's shape: one source of truth for the CDK stack and local runs (local/stack.ts).
 *
 * Item families (pk / sk):
 * - `DLQ#<dlqArn>` / `MSG#<messageId>`: an envelope (one message seen in a DLQ).
 *   `gsi1pk = KEY#<idempotencyKey>`, `gsi1sk = DLQ#<dlqArn>#MSG#<messageId>`, so re-inflow of a
 *   redriven message (new MessageId, same key) is found by key.
 * - `DLQ#<dlqArn>` / `MSG#<messageId>#CHUNK#<n>`: body chunks of envelopes whose body would push
 *   the item past DynamoDB's 400 KB limit.
 * - `DLQ#<dlqArn>` / `CONFIG`: the queue's registration ({@link QueueRegistration}).
 * - `DLQ#<dlqArn>` / `CURSOR`: progress of a partial inventory.
 * - `DLQ#<dlqArn>` / `INVENTORY#<inventoryId>`: an inventory that spans invocations (its plan,
 *   counts, running summary; functions/shared/inventory/inventory-session.ts).
 * - `DLQ#<dlqArn>` / `HOLD#<inventoryId>#<seq>`: receipt handles of the messages that inventory
 *   holds invisible, in pages, until it releases them.
 * - `DLQ#<dlqArn>` / `WORKFLOW`: the workflow lease (`incidentId`, `executionName`, `acquiredAt`,
 *   `expiresAt`): at most one redrive workflow per DLQ. Taken by Preflight, released by Notify /
 *   RecordFailure, expires after the longest run (see functions/shared/incident/workflow-lease.ts).
 * - `DLQ#<dlqArn>` / `MOVETASK`: who started the DLQ's move task (intent before the call, handle
 *   after; functions/shared/transfer/move-task-record.ts).
 * - `DLQ#<dlqArn>` / `OPEN_INCIDENT`: the DLQ's incident that is not settled yet (`incidentId`),
 *   continued by a console start that names none (functions/shared/incident/open-incident.ts).
 * - `DLQ#<dlqArn>` / `LEDGER#<messageId>`: the redrive ledger entry of one DLQ message taken out by
 *   hand (sample, park, discard): IN_PROGRESS, then SENT, then deleted; owner run and lease
 *   (functions/shared/transfer/redrive-ledger.ts). Finished entries expire after 15 days (TTL).
 * - `KEY#<idempotencyKey>` / `PROCESSED#<consumer>`: written by the consumer-side middleware.
 * - `INCIDENT#<incidentId>` / `INCIDENT`: the incident and its summary. `gsi1pk = INCIDENTS`,
 *   `gsi1sk = <createdAt ISO-8601>#<incidentId>`, so incidents are listed newest first by one
 *   Query of the index (`dlq incidents`), never by a Scan of the envelopes.
 * - `INCIDENT#<incidentId>` / `AUDIT#<entryId>`: the incident's audit trail (who approved,
 *   rejected or cancelled, with which plan, how each run ended); no TTL.
 * - `INCIDENT#<incidentId>` / `CANCEL#<executionName>`: a cancel request for one run, read by the
 *   ramp's next health gate.
 * - `INCIDENT#<incidentId>` / `SLACK#PROGRESS#<executionName>`: the run's ramp progress message in
 *   Slack (channel, ts, approvers, steps; move-task/slack-progress.ts); TTL 30 days.
 * - `ALARM#<dedupeKey>` / `TRANSITION`: the record that an alarm transition was handled.
 * - `ALARM#<alarmArn>` / `LATEST`: the incident ids opened by the alarm's latest transition to
 *   ALARM (`dedupeKey`, `stateTimestamp`, `incidentIds`), so its later ALARM -> OK transition can
 *   annotate those incidents. A dedupe key is `<alarmArn>@<timestamp>`, so the pk of this
 *   item never equals a transition's pk, and the sort keys differ anyway.
 * - `APPROVAL#<approvalId>` / `APPROVAL`: a pending approval with its task token (server-side only).
 *
 * Every item carries `shapeVersion` for its kind (record-shapes.ts; absent = 1).
 *
 * `expiresAt` (epoch seconds) is the TTL attribute. Retention deadlines are stored as
 * `retentionDeadline`; an envelope and its chunks expire `ENVELOPE_TTL_GRACE_SECONDS` (14 days)
 * after it (inventory/envelope-items.ts), so raw payloads are not kept longer than needed.
 * Incidents, their audit trails and cancel requests have no TTL.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html (400 KB item limit)
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html
 */
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

export const TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  keyIndex: { name: 'byIdempotencyKey', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  ttlAttribute: 'expiresAt',
} as const;

/** Default table name when `TABLE_NAME` is not set (local runs). */
export const DEFAULT_TABLE_NAME = 'dlq-redrive';

/** Key prefixes of the item families described above. */
export const keys = {
  dlq: (dlqArn: string) => `DLQ#${dlqArn}`,
  message: (messageId: string) => `MSG#${messageId}`,
  chunk: (messageId: string, index: number) => `MSG#${messageId}#CHUNK#${String(index).padStart(4, '0')}`,
  config: 'CONFIG',
  cursor: 'CURSOR',
  inventorySession: (inventoryId: string) => `INVENTORY#${inventoryId}`,
  holdPagePrefix: (inventoryId: string) => `HOLD#${inventoryId}#`,
  holdPage: (inventoryId: string, seq: number) => `HOLD#${inventoryId}#${String(seq).padStart(6, '0')}`,
  workflowLease: 'WORKFLOW',
  moveTask: 'MOVETASK',
  openIncident: 'OPEN_INCIDENT',
  idempotencyKey: (key: string) => `KEY#${key}`,
  ledgerPrefix: 'LEDGER#',
  ledger: (messageId: string) => `LEDGER#${messageId}`,
  /** Sort key of a version-1 ledger entry (`KEY#<idempotencyKey>` / `REDRIVE`), read only to carry it over. */
  legacyLedger: 'REDRIVE',
  processed: (consumer: string) => `PROCESSED#${consumer}`,
  incident: (incidentId: string) => `INCIDENT#${incidentId}`,
  incidentSk: 'INCIDENT',
  /** `gsi1pk` of every incident item: the listing partition of the index. */
  incidentListing: 'INCIDENTS',
  cancelRequest: (executionName: string) => `CANCEL#${executionName}`,
  slackProgress: (executionName: string) => `SLACK#PROGRESS#${executionName}`,
  alarm: (dedupeKey: string) => `ALARM#${dedupeKey}`,
  transitionSk: 'TRANSITION',
  alarmLatestSk: 'LATEST',
  approval: (approvalId: string) => `APPROVAL#${approvalId}`,
  approvalSk: 'APPROVAL',
} as const;

/**
 * The CreateTable input for the pipeline table (on-demand billing).
 * The CDK stack builds the same keys and index from {@link TABLE}.
 */
export function tableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: TABLE.partitionKey, AttributeType: 'S' },
      { AttributeName: TABLE.sortKey, AttributeType: 'S' },
      { AttributeName: TABLE.keyIndex.partitionKey, AttributeType: 'S' },
      { AttributeName: TABLE.keyIndex.sortKey, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: TABLE.keyIndex.name,
        KeySchema: [
          { AttributeName: TABLE.keyIndex.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE.keyIndex.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ],
  };
}
