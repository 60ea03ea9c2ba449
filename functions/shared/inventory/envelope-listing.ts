/**
 * The envelope listing of the workflow's readers (Preflight and its recheck, Park, Reconcile): every
 * envelope of a DLQ, with only the fields the reader decides on (a Query `ProjectionExpression`),
 * never the body unless asked. A 100,000-message incident's envelopes are about 130 MB as full
 * items (2.3 KB each as the SDK returns them, body, system attributes and index keys included);
 * Preflight passed its 300 s five times reading them on DynamoDB Local (docs/cost-model.md,
 * "The envelope listing at 100,000").
 *
 * Its own module, apart from envelope-store.ts: the recording mover bundles the store and has no
 * room for it (its bundle is within 100 B of the 500,000 B limit).
 *
 * A projection does not make DynamoDB read less: a Query page is up to 1 MB of items as stored,
 * before the projection and the filter, and read units are billed on that. It makes less come back
 * (bytes on the wire, parsing, unmarshalling, memory held), which is where the readers' time went.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ProjectionExpressions.html
 */
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { SHAPE_VERSION_ATTRIBUTE } from '#platform/record-shapes.js';
import { keys } from '#platform/table.js';
import { ENVELOPE_ENTITY, fromItem, type StoredEnvelope } from './envelope-items.js';

/** A field of a stored envelope a reader may ask for (`inlineBody` is the item's `body`). */
export type EnvelopeField = keyof StoredEnvelope;

/** The envelope listing with projections. */
export interface EnvelopeListing {
  /**
   * Every envelope of one DLQ (chunk items skipped), one Query page at a time, each with only
   * `fields` and its `messageId` and `dlqArn` (an absent optional field stays absent).
   *
   * @param fields - the envelope fields to return; `inlineBody` returns the inline body bytes.
   * @throws UnknownShapeVersionError when a newer release wrote an envelope.
   */
  listEnvelopes<F extends EnvelopeField>(
    dlqArn: string,
    fields: readonly F[],
  ): AsyncIterable<Pick<StoredEnvelope, F | 'messageId' | 'dlqArn'>>;
}

/**
 * What Park and Reconcile decide on (docs/contracts.md, "Envelope listings"): state
 * and reason, the park rules' inputs (classification, redrive count, source, origin, extended-client
 * pointer), and Reconcile's attribution (incident, late arrival, last seen, retention deadline).
 */
export const CANDIDATE_FIELDS = [
  'messageId',
  'idempotencyKey',
  'state',
  'stateReason',
  'classification',
  'redriveCount',
  'sourceArn',
  'origin',
  'payload',
  'payloadGoneAt',
  'incidentId',
  'lateArrival',
  'lastSeenAt',
  'retentionDeadline',
] as const satisfies readonly EnvelopeField[];

/** An envelope as Park and Reconcile read it: {@link CANDIDATE_FIELDS} only. */
export type EnvelopeCandidate = Pick<StoredEnvelope, (typeof CANDIDATE_FIELDS)[number]>;

/**
 * What Preflight decides on: {@link CANDIDATE_FIELDS} and what its checks read besides (receive
 * count for the receive budget; failure, attributes and SNS attributes for the selection; body size
 * and attributes for what the sample can copy). Not the body: a plan whose selection has body
 * conditions adds `inlineBody`.
 */
export const PREFLIGHT_FIELDS = [
  ...CANDIDATE_FIELDS,
  'receiveCount',
  'failure',
  'messageAttributes',
  'sns',
  'bodyBytes',
] as const satisfies readonly EnvelopeField[];

/**
 * Items one Query page may evaluate, at most (`Limit`), and the first page's: DynamoDB returns a
 * page at 1 MB of items read or at `Limit`, whichever comes first. DynamoDB Local reads every
 * item from the page's start to the end of the key range when no `Limit` is given (then cuts the
 * page at 1 MB), so a listing of N envelopes read about N^2 / (2 x page) items: 20,000 envelopes
 * took 261 s in 31 pages (21 s for a first-tenth page, 2 s for a last-tenth one), and with
 * `Limit: 1000` 14.8 s, every page alike (bench/envelope-listing). With a `Limit` it reads that
 * many, however big they are: after each page the limit follows what fitted in 1 MB
 * (`ScannedCount` when the page was cut by size), so a DLQ of 64 KB bodies does not read 1,000
 * items for the 15 that fit. On DynamoDB a page of ~1 KB envelopes is cut at 1 MB before 1,000, so
 * the limit costs no extra calls there.
 */
const MAX_PAGE_ITEMS = 1000;
const FIRST_PAGE_ITEMS = 250;

/** The `Limit` of the page after one that evaluated `scanned` items with `limit`. */
export function nextPageLimit(limit: number, scanned: number): number {
  return scanned < limit ? Math.max(10, scanned) : Math.min(MAX_PAGE_ITEMS, limit * 2);
}

/** The item attribute a field is stored under. */
const attributeOf = (field: EnvelopeField): string => (field === 'inlineBody' ? 'body' : field);

/**
 * The projection of `fields`, as placeholders (every name through `#p<n>`: some are reserved
 * words, such as `state`), with the item's shape version so that {@link fromItem} still refuses a
 * newer release's item.
 */
export function projectionOf(fields: readonly EnvelopeField[]): {
  ProjectionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
} {
  const names = [...new Set([...fields.map(attributeOf), SHAPE_VERSION_ATTRIBUTE, 'messageId', 'dlqArn'])];
  return {
    ProjectionExpression: names.map((_, i) => `#p${i}`).join(', '),
    ExpressionAttributeNames: Object.fromEntries(names.map((name, i) => [`#p${i}`, name])),
  };
}

/**
 * Creates the listing.
 *
 * @example
 * const listing = createEnvelopeListing();
 * for await (const e of listing.listEnvelopes(dlqArn, CANDIDATE_FIELDS)) if (e.state === 'IN_DLQ') n++;
 */
export function createEnvelopeListing(
  options: { client?: DynamoDBDocumentClient; tableName?: string } = {},
): EnvelopeListing {
  const client = () => options.client ?? documentClient();
  const table = options.tableName ?? pipelineConfig().tableName;
  return {
    listEnvelopes: <F extends EnvelopeField>(dlqArn: string, fields: readonly F[]) => ({
      async *[Symbol.asyncIterator]() {
        const projection = projectionOf(fields);
        let start: Record<string, unknown> | undefined;
        let limit = FIRST_PAGE_ITEMS;
        do {
          const out = await client().send(
            new QueryCommand({
              TableName: table,
              KeyConditionExpression: 'pk = :pk AND begins_with(sk, :msg)',
              FilterExpression: '#entity = :envelope',
              ProjectionExpression: projection.ProjectionExpression,
              ExpressionAttributeNames: { ...projection.ExpressionAttributeNames, '#entity': 'entity' },
              ExpressionAttributeValues: {
                ':pk': keys.dlq(dlqArn),
                ':msg': 'MSG#',
                ':envelope': ENVELOPE_ENTITY,
              },
              Limit: limit,
              ...(start ? { ExclusiveStartKey: start } : {}),
            }),
          );
          for (const item of out.Items ?? [])
            yield fromItem(item) as Pick<StoredEnvelope, F | 'messageId' | 'dlqArn'>;
          start = out.LastEvaluatedKey;
          limit = nextPageLimit(limit, out.ScannedCount ?? limit);
        } while (start);
      },
    }),
  };
}
