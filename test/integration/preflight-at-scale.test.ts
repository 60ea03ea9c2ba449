/**
 * Preflight at the scale of the big incident (issue 10): the envelopes of a 50,000-message DLQ
 * (the `npm start -- --dlq-depth N` orders, every 20th poison) written straight to a DynamoDB
 * Local of this file's own, then the real Preflight core reads them through the handler's
 * projected listing (envelope-listing.ts) and reports exact counts. SQS answers from memory: what
 * is measured here is the envelope listing, which passed Preflight's 300 s five times at 100,000
 * (a Query page without `Limit` reads the rest of the DLQ on DynamoDB Local).
 *
 * No timing is asserted: the structure that keeps the listing linear is (every Query page carries
 * a `Limit` of at most 1,000 and a projection without the body), and the time is printed as a
 * ratio to a bare Query over the same envelopes. The figures at 100,000 are bench/envelope-listing
 * (docs/cost-model.md). Runs in the `long` project (`npm run test:long`).
 */
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnvelopeListing, PREFLIGHT_FIELDS } from '#inventory/envelope-listing.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { retentionDeadline } from '#inventory/retention.js';
import { keys, tableDefinition } from '#platform/table.js';
import { type PreflightDeps, preflight } from '../../functions/preflight/preflight.js';
import { type DynamoLocal, startDynamoLocal } from '../../local/stack.js';
import { bigIncidentQueues, deadLetteredOrder, putBigIncidentEnvelopes } from '../support/envelope-seed.js';
import { planFor } from '../support/redrive-fixtures.js';

const N = 50_000;
const TABLE = 'preflight-at-scale';
const DLQ = 'arn:aws:sqs:us-east-1:123456789012:orders-dlq';
const SOURCE = 'arn:aws:sqs:us-east-1:123456789012:orders';
const NOW = Date.now();
const INCIDENT = { dlqArn: DLQ, sourceArn: SOURCE, count: N, incidentId: 'inc-scale', now: NOW };

describe('Preflight over the envelopes of a 50,000-message DLQ', { timeout: 900_000 }, () => {
  let dynamo: DynamoLocal;
  let client: DynamoDBDocumentClient;
  const queries: QueryCommandInput[] = [];
  beforeAll(async () => {
    dynamo = await startDynamoLocal();
    const raw = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await raw.send(new CreateTableCommand(tableDefinition(TABLE)));
    client = DynamoDBDocumentClient.from(raw, {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    });
    const seeded = await putBigIncidentEnvelopes(createEnvelopeStore({ client, tableName: TABLE }), INCIDENT);
    expect(seeded.created).toBe(N);
  });
  afterAll(async () => {
    client?.destroy();
    await dynamo?.stop();
  });

  it('reports every envelope, the 2,500 to park, the source and the earliest retention deadline, reading pages of at most 1,000 without bodies', async () => {
    // Every Query the listing sends, recorded.
    const recording = {
      send: (command: QueryCommand) => {
        queries.push(command.input);
        return client.send(command);
      },
    } as unknown as DynamoDBDocumentClient;
    const queues = bigIncidentQueues(INCIDENT, N);
    const deps: PreflightDeps = {
      queues,
      moveTasks: { list: async () => [] },
      envelopes: {
        listEnvelopes: () => {
          throw new Error('Preflight must read through the projected listing');
        },
        markPayloadGone: async () => undefined,
      },
      listing: createEnvelopeListing({ client: recording, tableName: TABLE }),
      now: () => NOW,
    };
    const plan = planFor(
      { dlqArn: DLQ, dlqUrl: queues.dlqUrl, incidentId: 'inc-scale' },
      {
        parkingQueueUrl: 'http://sqs.local/123456789012/orders-parking',
        sampleSize: 5,
        rampRates: [5, 50, 200],
      },
    );

    const t0 = performance.now();
    const result = await preflight({ action: 'preflight', plan }, deps);
    const preflightMs = performance.now() - t0;

    const first = deadLetteredOrder(0, INCIDENT);
    const earliest = retentionDeadline({
      fifo: false,
      retentionPeriodSeconds: 1_209_600,
      systemAttributes: first.Attributes as Record<string, string>,
      now: NOW,
    }).deadline;
    expect([result.ok, result.refusal, result.dlqDepth, result.unsettled]).toEqual([true, null, N, N]);
    expect(result.forecast?.toPark).toBe(N / 20);
    expect(result.forecast?.toMove).toBe(N - N / 20 - 5);
    expect(result.sourceArns).toEqual([SOURCE]);
    expect(result.earliestRetentionDeadline).toBe(earliest);
    expect(result.path).toBe('move-task');
    expect(result.warnings).toContain(
      `${N / 20} do-not-redrive message(s) will be moved to the parking queue before the bulk move (a move task cannot skip messages)`,
    );

    // What keeps the listing linear on DynamoDB Local and small on the wire.
    expect(queries.length).toBeGreaterThan(N / 1000);
    for (const q of queries) {
      expect(q.Limit).toBeGreaterThan(0);
      expect(q.Limit).toBeLessThanOrEqual(1000);
      expect(Object.values(q.ExpressionAttributeNames ?? {})).not.toContain('body');
      expect(q.ProjectionExpression?.split(', ').length).toBe(PREFLIGHT_FIELDS.length + 2);
    }

    // The ratio to a bare Query of the same pages (printed, not asserted: timing is for bench/).
    const t1 = performance.now();
    let start: Record<string, unknown> | undefined;
    do {
      const out = await client.send(
        new QueryCommand({
          TableName: TABLE,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :msg)',
          ExpressionAttributeValues: { ':pk': keys.dlq(DLQ), ':msg': 'MSG#' },
          ProjectionExpression: 'sk',
          Limit: 1000,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      start = out.LastEvaluatedKey;
    } while (start);
    const bareMs = performance.now() - t1;
    console.info(
      `Preflight over ${N} envelopes: ${(preflightMs / 1000).toFixed(1)} s in ${queries.length} Query pages; a bare keys-only Query of the same envelopes ${(bareMs / 1000).toFixed(1)} s (ratio ${(preflightMs / bareMs).toFixed(2)})`,
    );
  });
});
