/**
 * Shape versions of the records the pipeline keeps in its table, so a deployment can change a
 * record's shape without older or newer code misreading it (issue 7, safe upgrades).
 *
 * Every item a store writes carries `shapeVersion` (a positive integer) for its kind, from
 * {@link SHAPE_VERSIONS}. Every reader passes the item through {@link readShape}, which accepts the
 * versions this code knows (1 up to the current one) and refuses any other with
 * {@link UnknownShapeVersionError} (`Redrive.UnknownShapeVersion`) naming the record, the version
 * found and the versions known, instead of misreading it. An item without `shapeVersion` was
 * written before versions existed: it is version 1, the shape all of them have.
 *
 * Rules (docs/contracts.md "Record shape versions"): a change older readers would misread (a
 * field renamed, retyped or given another meaning) bumps the kind's version, and the readers of the
 * new code handle every older version; an additive change that older code can ignore (a new
 * optional field) does not. Updates in place keep an item's version (they change only fields that
 * version has); the release that bumps a version says how items written before it are read.
 */
import { REGISTRATION_SHAPE_VERSION } from '@dlq-redrive/contract';
import { UnknownShapeVersionError } from './errors.js';

/** The shape version this code writes, per kind of record (key layout in table.ts). */
export const SHAPE_VERSIONS = {
  /** `DLQ#<dlqArn>` / `MSG#<messageId>` */
  envelope: 1,
  /** `DLQ#<dlqArn>` / `MSG#<messageId>#CHUNK#<n>` */
  'body-chunk': 1,
  /** `DLQ#<dlqArn>` / `CURSOR` */
  'inventory-cursor': 1,
  /** `DLQ#<dlqArn>` / `INVENTORY` */
  'inventory-lease': 1,
  /** `DLQ#<dlqArn>` / `INVENTORY#<inventoryId>` (an inventory session spanning invocations) */
  'inventory-session': 1,
  /** `DLQ#<dlqArn>` / `HOLD#<inventoryId>#<seq>` (receipt handles of held messages) */
  'hold-page': 1,
  /** `DLQ#<dlqArn>` / `CONFIG` (also written by the MonitoredDlq construct) */
  registration: REGISTRATION_SHAPE_VERSION,
  /** `DLQ#<dlqArn>` / `WORKFLOW` */
  'workflow-lease': 1,
  /** `DLQ#<dlqArn>` / `MOVETASK` */
  'move-task-record': 1,
  /** `DLQ#<dlqArn>` / `OPEN_INCIDENT` */
  'open-incident': 1,
  /**
   * `DLQ#<dlqArn>` / `LEDGER#<messageId>`. Version 2: the entry moved from `KEY#<idempotencyKey>` /
   * `REDRIVE` (version 1, which also lacked `incidentId` and `takenOverFrom`) to one entry per DLQ
   * message with owner and lease; redrive-ledger.ts reads both (a version-1 entry is carried to
   * the new key when its message is next taken). Version 3: `envelopeMessageId` (un-park: the
   * entry, keyed by the parked copy, settles another envelope; a version-2 reader would settle
   * Park's entry's envelope as PARKED). Only entries that carry it are written at 3, the others
   * still at 2 ({@link LEDGER_ENTRY_WITHOUT_ENVELOPE_ID}), so a version-2 reader refuses exactly
   * the entries it would misread.
   */
  'ledger-entry': 3,
  /** `INCIDENT#<incidentId>` / `INCIDENT` */
  incident: 1,
  /** `INCIDENT#<incidentId>` / `AUDIT#<entryId>` */
  'audit-entry': 1,
  /** `INCIDENT#<incidentId>` / `CANCEL#<executionName>` */
  'cancel-request': 1,
  /** `INCIDENT#<incidentId>` / `SLACK#THREAD` */
  'slack-thread': 1,
  /** `INCIDENT#<incidentId>` / `SLACK#PROGRESS#<executionName>` */
  'slack-progress': 1,
  /** `ALARM#<dedupeKey>` / `TRANSITION` */
  'alarm-transition': 1,
  /** `ALARM#<alarmArn>` / `LATEST` */
  'alarm-latest': 1,
  /** `APPROVAL#<approvalId>` / `APPROVAL` */
  approval: 1,
} as const;

/**
 * The version of a ledger entry without `envelopeMessageId`: its shape is version 2's, which the
 * release before version 3 reads (redrive-ledger.ts writes it for every entry but un-park's).
 */
export const LEDGER_ENTRY_WITHOUT_ENVELOPE_ID = 2;

/** A kind of record the pipeline writes. */
export type RecordKind = keyof typeof SHAPE_VERSIONS;

/** The attribute that holds an item's shape version. */
export const SHAPE_VERSION_ATTRIBUTE = 'shapeVersion';

/** `{ shapeVersion }` of the current shape of `kind`, spread into every item written. */
export function shapeOf(kind: RecordKind): { shapeVersion: number } {
  return { shapeVersion: SHAPE_VERSIONS[kind] };
}

/**
 * The item's attributes without `shapeVersion`, once its version is one this code reads
 * (absent = 1).
 *
 * @param record - names the record in the error, e.g. `envelope m-1 in arn:aws:sqs:...`.
 * @throws UnknownShapeVersionError for any other version.
 */
export function readShape<T extends Record<string, unknown>>(
  kind: RecordKind,
  item: T,
  record: string,
): Omit<T, typeof SHAPE_VERSION_ATTRIBUTE> {
  const { [SHAPE_VERSION_ATTRIBUTE]: version, ...rest } = item;
  if (version === undefined) return rest;
  if (
    typeof version !== 'number' ||
    !Number.isInteger(version) ||
    version < 1 ||
    version > SHAPE_VERSIONS[kind]
  )
    throw new UnknownShapeVersionError(kind, record, version, SHAPE_VERSIONS[kind]);
  return rest;
}

/**
 * A stored record's own fields: the item through {@link readShape} (version checked,
 * `shapeVersion` dropped), then without the table's attributes (`pk`, `sk`, the index keys
 * `gsi1pk`/`gsi1sk` and the item family `entity`; functions/shared/platform/table.ts). The record's
 * fields are not validated: `T` is what its writer put.
 *
 * @param record - names the record in the error, e.g. `move task record of arn:aws:sqs:...`.
 * @throws UnknownShapeVersionError when a newer release wrote the item.
 */
export function recordFields<T>(kind: RecordKind, item: Record<string, unknown>, record: string): T {
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, entity: _e, ...fields } = readShape(kind, item, record);
  return fields as unknown as T;
}
