/**
 * The incident store (docs/contracts.md "Stores") and the alarm-transition records that make triage
 * idempotent.
 *
 * - `INCIDENT#<incidentId>` / `INCIDENT`: one incident per DLQ per alarm transition. The id is
 *   deterministic ({@link incidentIdOf}), and {@link IncidentStore.putIncident} is a conditional put,
 *   so a duplicate delivery opens nothing new.
 * - `ALARM#<dedupeKey>` / `TRANSITION`: the transition's handling status. A run claims it with a
 *   conditional write and a lease; only a `HANDLED` transition makes later deliveries duplicates.
 * - `ALARM#<alarmArn>` / `LATEST`: the incidents of the alarm's latest transition to ALARM
 *   ({@link LatestAlarmIncidents}), read when the alarm goes back to OK.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { sha256Hex } from '#inventory/idempotency-key.js';
import type { IncidentSummary } from '#inventory/model.js';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { isConditionalCheckFailed } from '#platform/errors.js';
import { queryIndexPartition } from '#platform/index-query.js';
import { type RecordKind, recordFields, shapeOf } from '#platform/record-shapes.js';
import { keys, TABLE } from '#platform/table.js';
import { createIncidentUpdater } from './incident-update.js';

/**
 * Where an incident stands (docs/contracts.md): triage writes `OPEN` / `PARTIAL` (inventoried,
 * whole or partial) and then `WORKFLOW_STARTED`; the end of a run writes `CLOSED` (every message
 * settled), `STOPPED` (ended by a person or a guard with messages left: a new run may be started)
 * or `FAILED` (the run failed, timed out or was aborted before Notify recorded its end); see
 * `statusAfterRun` in notifier.ts.
 */
export type IncidentStatus = 'OPEN' | 'PARTIAL' | 'WORKFLOW_STARTED' | 'CLOSED' | 'STOPPED' | 'FAILED';

/** An incident: one DLQ's inventory after one alarm transition. */
export interface Incident {
  incidentId: string;
  dlqArn: string;
  dlqUrl: string;
  alarmArn: string;
  alarmName: string;
  /** Dedupe key of the alarm transition (alarm ARN + state timestamp). */
  dedupeKey: string;
  stateTimestamp: string;
  /** Source queue ARNs (ListDeadLetterSourceQueues and DeadLetterQueueSourceArn). */
  sourceArns: string[];
  status: IncidentStatus;
  summary: IncidentSummary;
  executionArn?: string;
  /** ISO-8601. */
  createdAt: string;
  updatedAt: string;
}

/** Sort key of a DLQ's inventory lease, beside its `CONFIG` and `CURSOR` items. */
export const INVENTORY_SK = 'INVENTORY';

/** Handling status of an alarm transition. */
export type TransitionStatus = 'IN_PROGRESS' | 'PARTIAL' | 'HANDLED' | 'FAILED';

/** `ALARM#<dedupeKey>` / `TRANSITION`. */
export interface TransitionRecord {
  dedupeKey: string;
  alarmArn: string;
  status: TransitionStatus;
  /** Epoch ms after which an IN_PROGRESS claim may be taken over (the claimant died). */
  leaseExpiresAt: number;
  /**
   * The Lambda request id of the run holding the claim. Lambda keeps the request id across the
   * retries of an async invocation, so a retry of a run that crashed (OOM, a throw before it could
   * mark the transition FAILED) takes its own claim back instead of being taken for a duplicate.
   */
  owner?: string;
  incidentIds: string[];
  outcome?: string;
  updatedAt: string;
}

/**
 * `ALARM#<alarmArn>` / `LATEST`: the incident ids the alarm's latest ALARM transition opened.
 * Written by triage after it opened them; read on ALARM -> OK to annotate them.
 */
export interface LatestAlarmIncidents {
  alarmArn: string;
  /** Dedupe key of the ALARM transition that opened the incidents. */
  dedupeKey: string;
  /** The ALARM transition's state timestamp, as the event gives it (ISO-8601). */
  stateTimestamp: string;
  incidentIds: string[];
  /** ISO-8601. */
  updatedAt: string;
  /** Dedupe key of the ALARM -> OK transition that announced these incidents' alarm cleared. */
  clearedBy?: string;
}

/** The incident store's operations. */
export interface IncidentStore {
  getIncident(incidentId: string): Promise<Incident | undefined>;
  /**
   * Incidents newest first (by `createdAt`), from the `byIdempotencyKey` index's `INCIDENTS`
   * partition: one Query per page, whatever the number of envelopes in the table.
   * @param options.limit - most incidents returned. @default 50
   */
  listIncidents(options?: { limit?: number }): Promise<Incident[]>;
  /** Creates the incident unless it exists. @returns created: false when it already existed. */
  putIncident(incident: Incident): Promise<{ created: boolean }>;
  /** Sets the given fields (and `updatedAt`). @throws RecordNotFoundError when the incident does not exist. */
  updateIncident(incidentId: string, patch: Partial<Omit<Incident, 'incidentId'>>): Promise<void>;
  getTransition(dedupeKey: string): Promise<TransitionRecord | undefined>;
  /**
   * Claims a transition for this run: succeeds when it is new, FAILED, PARTIAL, or IN_PROGRESS with
   * an expired lease, or IN_PROGRESS claimed by the same `owner` (a Lambda retry of the same request).
   * @returns the existing record when the claim is refused.
   * @see https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html
   */
  claimTransition(
    claim: { dedupeKey: string; alarmArn: string; leaseExpiresAt: number; owner?: string },
    now: number,
  ): Promise<{ claimed: true } | { claimed: false; existing: TransitionRecord | undefined }>;
  /**
   * Takes the DLQ's inventory lease (`DLQ#<dlqArn>` / `INVENTORY`): one triage inventory of a DLQ
   * at a time. Two alarms of one DLQ (depth and oldest-age) firing together would otherwise each
   * hold half of the messages and each open an incident with half the count. Succeeds when no
   * lease is held, the holder's lease has expired, or `owner` already holds it (a retry).
   * @returns the holder when refused.
   */
  claimInventory(
    claim: { dlqArn: string; owner: string; leaseExpiresAt: number },
    now: number,
  ): Promise<{ claimed: true } | { claimed: false; holder: string | undefined }>;
  /** Ends `owner`'s inventory lease (a no-op when another run holds it). */
  releaseInventory(dlqArn: string, owner: string): Promise<void>;
  /**
   * Points `ALARM#<alarmArn>` / `LATEST` at the incidents of an ALARM transition. Conditional: a
   * pointer of a later transition (greater `stateTimestamp`) is never replaced by an earlier one
   * (a late duplicate delivery); the same transition rewriting it is a no-op in effect.
   * @returns written: false when a later transition's pointer is already stored.
   */
  putLatestAlarmIncidents(latest: LatestAlarmIncidents): Promise<{ written: boolean }>;
  /** The alarm's latest incidents pointer, or undefined when the alarm never opened an incident. */
  getLatestAlarmIncidents(alarmArn: string): Promise<LatestAlarmIncidents | undefined>;
  /**
   * Claims the announcement of an ALARM -> OK transition on the pointer (conditional update of
   * `clearedBy`), so a duplicate delivery of the OK transition announces nothing.
   * @returns false when this (or a later) clear was already claimed, or the pointer is gone.
   */
  claimAlarmCleared(alarmArn: string, clearDedupeKey: string): Promise<boolean>;
  /** Gives a claim of {@link claimAlarmCleared} back (its notification failed), so a retry announces. */
  releaseAlarmCleared(alarmArn: string, clearDedupeKey: string): Promise<void>;
  /** Records the end of a run (HANDLED, PARTIAL or FAILED). */
  finishTransition(
    dedupeKey: string,
    status: Exclude<TransitionStatus, 'IN_PROGRESS'>,
    details: { incidentIds: string[]; outcome: string },
  ): Promise<void>;
}

/**
 * The incident id of one DLQ's inventory after one alarm transition: `inc-` + the first 24 hex of
 * SHA-256(alarmArn, stateTimestamp, dlqArn). Deterministic, so duplicates map to the same incident.
 */
export function incidentIdOf(alarmArn: string, stateTimestamp: string, dlqArn: string): string {
  return `inc-${sha256Hex(JSON.stringify([alarmArn, stateTimestamp, dlqArn])).slice(0, 24)}`;
}

/** Creates the incident store. */
export function createIncidentStore(
  options: { client?: DynamoDBDocumentClient; tableName?: string } = {},
): IncidentStore {
  const client = () => options.client ?? documentClient();
  const table = options.tableName ?? pipelineConfig().tableName;
  const incidentKey = (id: string) => ({ pk: keys.incident(id), sk: keys.incidentSk });
  const update = createIncidentUpdater(options);
  const transitionKey = (k: string) => ({ pk: keys.alarm(k), sk: keys.transitionSk });
  const inventoryKey = (dlqArn: string) => ({ pk: keys.dlq(dlqArn), sk: INVENTORY_SK });
  const latestKey = (alarmArn: string) => ({ pk: keys.alarm(alarmArn), sk: keys.alarmLatestSk });
  /** The record's own fields, once its shape version is one this code reads. */
  const strip = <T>(kind: RecordKind, item: Record<string, unknown>): T => {
    return recordFields<T>(kind, item, `${kind} ${String(item.pk)} / ${String(item.sk)}`);
  };

  return {
    async getIncident(incidentId) {
      const out = await client().send(new GetCommand({ TableName: table, Key: incidentKey(incidentId) }));
      return out.Item ? strip<Incident>('incident', out.Item) : undefined;
    },
    async listIncidents(opts = {}) {
      const items = await queryIndexPartition(client(), table, keys.incidentListing, {
        descending: true,
        limit: opts.limit ?? 50,
      });
      return items.map((item) => strip<Incident>('incident', item));
    },
    async putIncident(incident) {
      try {
        await client().send(
          new PutCommand({
            TableName: table,
            Item: {
              ...incidentKey(incident.incidentId),
              entity: 'incident',
              ...shapeOf('incident'),
              [TABLE.keyIndex.partitionKey]: keys.incidentListing,
              [TABLE.keyIndex.sortKey]: `${incident.createdAt}#${incident.incidentId}`,
              ...incident,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return { created: true };
      } catch (error) {
        if (isConditionalCheckFailed(error)) return { created: false };
        throw error;
      }
    },
    updateIncident: (incidentId, patch) => update(incidentId, patch),
    async getTransition(dedupeKey) {
      const out = await client().send(
        new GetCommand({ TableName: table, Key: transitionKey(dedupeKey), ConsistentRead: true }),
      );
      return out.Item ? strip<TransitionRecord>('alarm-transition', out.Item) : undefined;
    },
    async claimTransition(claim, now) {
      const record: TransitionRecord = {
        dedupeKey: claim.dedupeKey,
        alarmArn: claim.alarmArn,
        status: 'IN_PROGRESS',
        leaseExpiresAt: claim.leaseExpiresAt,
        incidentIds: [],
        updatedAt: new Date(now).toISOString(),
        ...(claim.owner ? { owner: claim.owner } : {}),
      };
      const sameOwner = claim.owner ? ' OR (#s = :progress AND #o = :owner)' : '';
      try {
        await client().send(
          new PutCommand({
            TableName: table,
            Item: {
              ...transitionKey(claim.dedupeKey),
              entity: 'transition',
              ...shapeOf('alarm-transition'),
              ...record,
            },
            ConditionExpression: `attribute_not_exists(pk) OR #s IN (:failed, :partial) OR (#s = :progress AND leaseExpiresAt < :now)${sameOwner}`,
            ExpressionAttributeNames: { '#s': 'status', ...(claim.owner ? { '#o': 'owner' } : {}) },
            ExpressionAttributeValues: {
              ':failed': 'FAILED',
              ':partial': 'PARTIAL',
              ':progress': 'IN_PROGRESS',
              ':now': now,
              ...(claim.owner ? { ':owner': claim.owner } : {}),
            },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { claimed: true };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        // ReturnValuesOnConditionCheckFailure comes back in the low-level (AttributeValue) form.
        const item = (error as { Item?: Record<string, AttributeValue> }).Item;
        return {
          claimed: false,
          existing: item
            ? strip<TransitionRecord>('alarm-transition', unmarshall(item))
            : await this.getTransition(claim.dedupeKey),
        };
      }
    },
    async claimInventory(claim, now) {
      try {
        await client().send(
          new PutCommand({
            TableName: table,
            Item: {
              ...inventoryKey(claim.dlqArn),
              entity: 'inventory-lease',
              ...shapeOf('inventory-lease'),
              owner: claim.owner,
              leaseExpiresAt: claim.leaseExpiresAt,
              updatedAt: new Date(now).toISOString(),
            },
            ConditionExpression: 'attribute_not_exists(pk) OR leaseExpiresAt < :now OR #o = :owner',
            ExpressionAttributeNames: { '#o': 'owner' },
            ExpressionAttributeValues: { ':now': now, ':owner': claim.owner },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { claimed: true };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        const item = (error as { Item?: Record<string, AttributeValue> }).Item;
        const holder = item
          ? strip<{ owner?: string }>('inventory-lease', unmarshall(item)).owner
          : undefined;
        return { claimed: false, holder };
      }
    },
    async releaseInventory(dlqArn, owner) {
      try {
        await client().send(
          new UpdateCommand({
            TableName: table,
            Key: inventoryKey(dlqArn),
            UpdateExpression: 'SET leaseExpiresAt = :zero',
            ConditionExpression: '#o = :owner',
            ExpressionAttributeNames: { '#o': 'owner' },
            ExpressionAttributeValues: { ':zero': 0, ':owner': owner },
          }),
        );
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },
    async putLatestAlarmIncidents(latest) {
      try {
        await client().send(
          new PutCommand({
            TableName: table,
            Item: {
              ...latestKey(latest.alarmArn),
              entity: 'alarm-latest',
              ...shapeOf('alarm-latest'),
              ...latest,
            },
            // ISO-8601 timestamps of one alarm share a format, so string order is time order. The
            // same transition written again (a retry) keeps a clear already announced for it.
            ConditionExpression:
              'attribute_not_exists(pk) OR stateTimestamp < :ts OR (stateTimestamp = :ts AND attribute_not_exists(clearedBy))',
            ExpressionAttributeValues: { ':ts': latest.stateTimestamp },
          }),
        );
        return { written: true };
      } catch (error) {
        if (isConditionalCheckFailed(error)) return { written: false };
        throw error;
      }
    },
    async getLatestAlarmIncidents(alarmArn) {
      const out = await client().send(
        new GetCommand({ TableName: table, Key: latestKey(alarmArn), ConsistentRead: true }),
      );
      return out.Item ? strip<LatestAlarmIncidents>('alarm-latest', out.Item) : undefined;
    },
    async claimAlarmCleared(alarmArn, clearDedupeKey) {
      try {
        await client().send(
          new UpdateCommand({
            TableName: table,
            Key: latestKey(alarmArn),
            UpdateExpression: 'SET clearedBy = :k',
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(clearedBy)',
            ExpressionAttributeValues: { ':k': clearDedupeKey },
          }),
        );
        return true;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return false;
        throw error;
      }
    },
    async releaseAlarmCleared(alarmArn, clearDedupeKey) {
      try {
        await client().send(
          new UpdateCommand({
            TableName: table,
            Key: latestKey(alarmArn),
            UpdateExpression: 'REMOVE clearedBy',
            ConditionExpression: 'clearedBy = :k',
            ExpressionAttributeValues: { ':k': clearDedupeKey },
          }),
        );
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },
    async finishTransition(dedupeKey, status, details) {
      await client().send(
        new UpdateCommand({
          TableName: table,
          Key: transitionKey(dedupeKey),
          UpdateExpression: 'SET #s = :s, incidentIds = :ids, outcome = :o, updatedAt = :now',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: {
            ':s': status,
            ':ids': details.incidentIds,
            ':o': details.outcome,
            ':now': new Date().toISOString(),
          },
        }),
      );
    },
  };
}
