/**
 * A recording-mover run whose destination is in another account or Region: refused by name in
 * Preflight, before any side effect, unless the DLQ's registration names a role for that account
 * and Region (issue 11). Real Preflight handler, SQS stand-in, DynamoDB Local.
 */
import { describe, expect, it } from 'vitest';
import { Selection } from '#incident/execution-input.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sqsClient } from '#platform/clients.js';
import { createRedriveLedger } from '#transfer/redrive-ledger.js';
import { handler as preflightHandler } from '../../functions/preflight/handler.js';
import type { PreflightResult } from '../../functions/preflight/preflight.js';
import { lambdaContext, planFor, seedAndInventory } from '../support/redrive-fixtures.js';
import { queueDepth } from '../support/seed-dlq.js';
import { useTransferStack } from '../support/transfer-stack.js';

const timeout = { 'error-class': { DataType: 'String', StringValue: 'UpstreamTimeout' } };

describe('a mover destination outside the DLQ account and Region', () => {
  useTransferStack();

  for (const [where, arn, selected] of [
    ['another account', 'arn:aws:sqs:us-east-1:999999999999:orders-elsewhere', true],
    ['another Region', 'arn:aws:sqs:eu-west-1:000000000000:orders-elsewhere', true],
    // Without a selection too: a move task cannot reach it either, so the plan takes the mover.
    ['another account (a full run, no selection)', 'arn:aws:sqs:us-east-1:999999999999:orders-full', false],
  ] as const) {
    it(`is refused in Preflight when the registration names no role for ${where}, naming the destination and the accessRoles entry it needs, with nothing moved or recorded`, async () => {
      const name = `xacct-${where.replace(/\W/g, '-')}`.slice(0, 40);
      const dlq = await seedAndInventory({
        sqs: sqsClient(),
        dlqName: `${name}-dlq`,
        sourceNames: [`${name}-src`],
        messages: Array.from({ length: 5 }, (_, i) => ({
          body: `{"orderId":"x-${i}"}`,
          attributes: timeout,
        })),
        incidentId: `inc-${name}`,
      });
      const plan = planFor(dlq, {
        destinationArn: arn,
        ...(selected ? { selection: Selection.parse({ classifications: ['transient'] }) } : {}),
      });

      const result = (await preflightHandler(
        { action: 'preflight', plan } as never,
        lambdaContext,
      )) as PreflightResult;

      expect([result.ok, result.path]).toEqual([false, 'mover']);
      const [, region, accountId] = /^arn:aws:sqs:([^:]+):(\d+):/.exec(arn)?.slice(0) ?? [];
      expect(result.refusal).toContain(`destination ${arn} is in`);
      expect(result.refusal).toContain(
        `names no role for it (accessRoles: { accountId: '${accountId}', region: '${region}', roleArn })`,
      );
      expect(await queueDepth(sqsClient(), dlq.dlqUrl)).toEqual({ visible: 5, inFlight: 0 });
      expect(await createRedriveLedger().list(dlq.dlqArn)).toEqual([]);
      const states: string[] = [];
      for await (const e of createEnvelopeStore().listEnvelopes(dlq.dlqArn)) states.push(e.state);
      expect(states).toEqual(Array(5).fill('IN_DLQ'));
    });
  }
});
