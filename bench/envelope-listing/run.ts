/**
 * The envelope listing of a big incident, measured on DynamoDB Local: what Preflight (and the
 * recheck, Park, Reconcile) pays to read every envelope of a DLQ, and how Preflight's own work
 * compares with it.
 *
 * Writes N envelopes of the `--dlq-depth` demo incident straight to a fresh table
 * (test/support/envelope-seed.ts: the real envelope builder and store), then times:
 * - the listing's Query pages (full items, as `listEnvelopes` read them before issue 10's
 *   projection), ms per page, first tenth against last tenth of the pages (does a page cost more
 *   the deeper its ExclusiveStartKey is?);
 * - the same Query with each reader's ProjectionExpression (`ENVELOPE_FIELDS` of envelope-store);
 * - `Select: COUNT`;
 * - `listEnvelopes` itself (items turned into envelopes), full and projected;
 * - Preflight's core on the real store, and on the same envelopes from memory (its own work
 *   without DynamoDB), with fake SQS ports that answer at once.
 *
 * Usage: `tsx bench/envelope-listing/run.ts [N]` (default 100000). Prints a table and a JSON line.
 * Numbers are this machine's (2 shared cores); the ratios are the result.
 */
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import {
  CANDIDATE_FIELDS,
  createEnvelopeListing,
  nextPageLimit,
  PREFLIGHT_FIELDS,
} from '#inventory/envelope-listing.js';
import { createEnvelopeStore, type EnvelopeStore, type StoredEnvelope } from '#inventory/envelope-store.js';
import { documentClient, dynamoClient, resetClients } from '#platform/clients.js';
import { keys, tableDefinition } from '#platform/table.js';
import { type PreflightDeps, preflight } from '../../functions/preflight/preflight.js';
import { startDynamoLocal } from '../../local/stack.js';
import {
  bigIncidentQueues,
  bigIncidentWrites,
  putBigIncidentEnvelopes,
} from '../../test/support/envelope-seed.js';
import { planFor } from '../../test/support/redrive-fixtures.js';

const N = Number(process.argv[2] ?? 100_000);
const TABLE = 'bench-listing';
const DLQ = 'arn:aws:sqs:us-east-1:123456789012:orders-dlq';
const SOURCE = 'arn:aws:sqs:us-east-1:123456789012:orders';
const DLQ_URL = 'http://sqs.local/123456789012/orders-dlq';

/** Preflight's ports: SQS answered from memory, the envelopes from `envelopes`. */
function preflightDeps(envelopes: PreflightDeps['envelopes']): PreflightDeps {
  return {
    queues: bigIncidentQueues({ dlqArn: DLQ, sourceArn: SOURCE }, N),
    moveTasks: { list: async () => [] },
    envelopes,
    now: Date.now,
  };
}

interface PagedRun {
  label: string;
  /** False when the variant was stopped at the cap (`items` of the DLQ's read). */
  complete: boolean;
  pages: number;
  items: number;
  ms: number;
  msPerPage: number;
  /** Mean ms of a page in the first and the last tenth of the pages. */
  firstTenthMs: number;
  lastTenthMs: number;
  /** Bytes of the items returned (JSON of the unmarshalled items), MB. */
  mb: number;
}

/** Stop a variant after this long, milliseconds (the listing without a Limit at 100,000 takes hours). */
const CAP_MS = Number(process.env.BENCH_CAP_MS ?? 180_000);

async function pagedQuery(
  label: string,
  extra: Partial<QueryCommandInput>,
  adaptiveLimit = false,
): Promise<PagedRun> {
  const client = documentClient();
  let limit = 250;
  const times: number[] = [];
  let items = 0;
  let bytes = 0;
  let start: Record<string, unknown> | undefined;
  const t0 = performance.now();
  do {
    const p0 = performance.now();
    const out = await client.send(
      new QueryCommand({
        TableName: TABLE,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :msg)',
        FilterExpression: 'entity = :envelope',
        ExpressionAttributeValues: { ':pk': keys.dlq(DLQ), ':msg': 'MSG#', ':envelope': 'envelope' },
        ...extra,
        ...(adaptiveLimit ? { Limit: limit } : {}),
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    times.push(performance.now() - p0);
    if (adaptiveLimit) limit = nextPageLimit(limit, out.ScannedCount ?? limit);
    items += extra.Select === 'COUNT' ? (out.Count ?? 0) : (out.Items?.length ?? 0);
    for (const item of out.Items ?? []) bytes += JSON.stringify(item).length;
    start = out.LastEvaluatedKey;
    if (times.length % 20 === 0)
      console.error(
        `${label}: page ${times.length}, ${items} items, ${(performance.now() - t0).toFixed(0)} ms`,
      );
  } while (start && performance.now() - t0 < CAP_MS);
  const ms = performance.now() - t0;
  if (start) label = `${label} (stopped at ${CAP_MS / 1000} s)`;
  const tenth = Math.max(1, Math.floor(times.length / 10));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return {
    label,
    complete: !start,
    pages: times.length,
    items,
    ms,
    msPerPage: ms / times.length,
    firstTenthMs: mean(times.slice(0, tenth)),
    lastTenthMs: mean(times.slice(-tenth)),
    mb: bytes / 1e6,
  };
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

async function drainListing(listing: AsyncIterable<unknown>): Promise<number> {
  let n = 0;
  for await (const _ of listing) n += 1;
  return n;
}

async function main(): Promise<void> {
  const dynamo = await startDynamoLocal();
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    TABLE_NAME: TABLE,
  });
  resetClients();
  try {
    await dynamoClient().send(new CreateTableCommand(tableDefinition(TABLE)));
    const store: EnvelopeStore = createEnvelopeStore({ tableName: TABLE });
    const seedOptions = { dlqArn: DLQ, sourceArn: SOURCE, count: N, incidentId: 'inc-bench-listing' };
    const seeded = await putBigIncidentEnvelopes(store, seedOptions);
    console.error(`seeded ${seeded.created} envelopes in ${(seeded.ms / 1000).toFixed(1)} s`);

    const runs: PagedRun[] = [];
    const projected = (names: readonly string[]) => ({
      ProjectionExpression: names.map((_, i) => `#f${i}`).join(', '),
      ExpressionAttributeNames: Object.fromEntries(names.map((n, i) => [`#f${i}`, n])),
    });
    const before = process.env.BENCH_BEFORE !== 'false';
    runs.push(await pagedQuery('Query, full items, Limit (after)', {}, true));
    runs.push(
      await pagedQuery(
        `Query, Preflight's fields (${PREFLIGHT_FIELDS.length}), Limit`,
        projected(PREFLIGHT_FIELDS),
        true,
      ),
    );
    runs.push(
      await pagedQuery(
        `Query, Park/Reconcile's fields (${CANDIDATE_FIELDS.length}), Limit`,
        projected(CANDIDATE_FIELDS),
        true,
      ),
    );
    runs.push(await pagedQuery('Query, Select COUNT, Limit', { Select: 'COUNT' }, true));
    if (before) {
      runs.push(await pagedQuery('Query, full items, no Limit (before)', {}));
      runs.push(await pagedQuery(`Query, Preflight's fields, no Limit`, projected(PREFLIGHT_FIELDS)));
      runs.push(await pagedQuery('Query, Select COUNT, no Limit', { Select: 'COUNT' }));
    }

    const listing = createEnvelopeListing({ tableName: TABLE });
    const listings: Array<{ label: string; ms: number; items: number }> = [];
    for (const [label, names] of [
      ["Preflight's", PREFLIGHT_FIELDS],
      ["Park/Reconcile's", CANDIDATE_FIELDS],
    ] as const) {
      const r = await timed(() => drainListing(listing.listEnvelopes(DLQ, names)));
      listings.push({ label: `listing.listEnvelopes (${label} fields)`, ms: r.ms, items: r.value });
    }

    const plan = planFor(
      { dlqArn: DLQ, dlqUrl: DLQ_URL, incidentId: 'inc-bench-listing' },
      {
        parkingQueueUrl: 'http://sqs.local/123456789012/orders-parking',
        rampRates: [5, 50, 200],
        sampleSize: 5,
      },
    );
    const onStore = await timed(() =>
      preflight({ action: 'preflight', plan }, { ...preflightDeps(store), listing }),
    );
    // The same envelopes from memory: Preflight's own work, without DynamoDB.
    const memory = bigIncidentWrites(seedOptions, 0, N).map((w) => w.envelope as StoredEnvelope);
    const inMemory = await timed(() =>
      preflight(
        { action: 'preflight', plan },
        preflightDeps({
          listEnvelopes: () => ({
            [Symbol.asyncIterator]: async function* () {
              yield* memory;
            },
          }),
          markPayloadGone: async () => undefined,
        } as PreflightDeps['envelopes']),
      ),
    );
    // Before: full envelopes, a Query without Limit (only where it ends in minutes).
    const full =
      before && N <= 20_000
        ? await timed(() => preflight({ action: 'preflight', plan }, preflightDeps(store)))
        : undefined;
    const preflights = [
      { label: 'Preflight core, projected listing on DynamoDB Local', ms: onStore.ms, result: onStore.value },
      { label: 'Preflight core, envelopes from memory', ms: inMemory.ms, result: inMemory.value },
      ...(full
        ? [{ label: 'Preflight core, full envelopes, no Limit (before)', ms: full.ms, result: full.value }]
        : []),
    ];

    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    console.log(`\n${N} envelopes (seeded in ${s(seeded.ms)})\n`);
    console.log(
      '| listing | pages | items | total | ms/page | first tenth ms/page | last tenth ms/page | MB returned |',
    );
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const r of runs)
      console.log(
        `| ${r.label} | ${r.pages} | ${r.items} | ${s(r.ms)} | ${r.msPerPage.toFixed(0)} | ${r.firstTenthMs.toFixed(0)} | ${r.lastTenthMs.toFixed(0)} | ${r.mb.toFixed(1)} |`,
      );
    for (const l of listings) console.log(`| ${l.label} | | ${l.items} | ${s(l.ms)} | | | | |`);
    console.log('\n(a variant stopped at the cap read the DLQ only in part: its items column says how far)');
    console.log('');
    for (const p of preflights)
      console.log(
        `${p.label}: ${s(p.ms)} (ok ${p.result.ok}, unsettled ${p.result.unsettled}, toPark ${p.result.forecast?.toPark ?? '-'}, ${p.result.refusal ?? ''})`,
      );
    const ratio = onStore.ms / (listings[0]?.ms ?? 1);
    console.log(`Preflight on DynamoDB Local / its listing alone: ${ratio.toFixed(2)}`);
    console.log(
      JSON.stringify({
        n: N,
        seedMs: seeded.ms,
        runs,
        listings,
        preflight: preflights.map((p) => ({ label: p.label, ms: p.ms })),
      }),
    );
  } finally {
    await dynamo.stop();
  }
}

await main();
