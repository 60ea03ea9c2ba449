import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { resetClients, sqsClient } from '#platform/clients.js';
import { type SqsAccountStandin, startSqsAccount } from '../../local/aws-standins/sqs-account.js';
import { runScenario } from '../../local/demo/run-scenario.js';
import type { IncidentConsumer } from '../../local/demo/scenario.js';
import type { Scenario } from '../../local/demo/scenarios/index.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { createQueue, drain } from '../support/redrive-fixtures.js';
import { queueDepth } from '../support/seed-dlq.js';

// The role path of the recording mover end to end (issue 11): the DLQ's registration names a role
// for a destination in another account; the real ASL and handlers run on the local stack, the
// mover assumes the role through the STS stand-in and sends through the client factory of that
// account and Region (REMOTE_ENDPOINTS) to that account's own SQS stand-in.
const TIMEOUT_MS = 300_000;
const OTHER_ACCOUNT = '999999999999';
const ROLE_ARN = `arn:aws:iam::${OTHER_ACCOUNT}:role/dlq-redrive-sender`;
const EXTERNAL_ID = 'orders-xacct';

describe('a mover destination in another account, reached through the role its registration names', {
  timeout: TIMEOUT_MS,
}, () => {
  let stack: LocalStack;
  let other: SqsAccountStandin;
  let otherSqs: SQSClient;
  beforeAll(async () => {
    stack = await startLocalStack();
    other = await startSqsAccount({ accountId: OTHER_ACCOUNT, region: stack.region });
    process.env.REMOTE_ENDPOINTS = JSON.stringify(other.remoteEndpoints);
    resetClients();
    otherSqs = new SQSClient({
      region: stack.region,
      endpoint: other.url,
      credentials: { accessKeyId: 'other-account-admin', secretAccessKey: 'local' },
    });
  });
  afterAll(async () => {
    delete process.env.REMOTE_ENDPOINTS;
    resetClients();
    otherSqs?.destroy();
    await other?.close();
    await stack?.stop();
  });

  it('assumes the registered role through STS and delivers each message once, with its key, to the other account; nothing reaches the home account', async () => {
    const name = 'xacct-orders';
    const remoteUrl = await createQueue(otherSqs, name);
    // A queue of the same name in the home account: a copy sent with the home clients would land here.
    const homeUrl = await createQueue(sqsClient(), name);
    stack.standins.sts.allowRole(ROLE_ARN, { externalId: EXTERNAL_ID });
    let consumer: IncidentConsumer | undefined;
    const scenario: Scenario = {
      name: 'cross-account',
      summary: 'the run sends to a queue of another account through its registered role',
      expected: { outcome: 'Done', text: 'every message delivered to the other account or parked' },
      incident: (messages) => ({
        name: 'xacct-src',
        messages: messages ?? 30,
        poisonEvery: 10,
        registration: {
          sampleSize: 3,
          rampRates: [20, 200],
          dwellSeconds: 1,
          accessRoles: [{ accountId: OTHER_ACCOUNT, roleArn: ROLE_ARN, externalId: EXTERNAL_ID }],
        },
      }),
      input: { destinationArn: `arn:aws:sqs:${stack.region}:${OTHER_ACCOUNT}:${name}` },
      afterRun: async (ctx) => {
        consumer = ctx.incident.consumer;
      },
    };

    const report = await runScenario(scenario, { retryIntervalMs: 100 });

    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ asExpected: true, outcome: 'Done', missing: 0, parked: 3 });
    expect(report.redriven).toBe(report.inventoried - 3);
    expect(report.sampled + report.bulkMoved).toBe(report.redriven);

    // STS: every AssumeRole named the registered role, with its external id.
    const assumed = stack.standins.sts.calls.filter((c) => c.operation === 'AssumeRole');
    expect(assumed.length).toBeGreaterThan(0);
    expect(new Set(assumed.map((c) => `${String(c.input.RoleArn)} ${String(c.input.ExternalId)}`))).toEqual(
      new Set([`${ROLE_ARN} ${EXTERNAL_ID}`]),
    );
    // The other account's SQS: every send signed with that role's session credentials.
    const sends = other.calls.filter((c) => c.operation.startsWith('SendMessage'));
    expect(sends.length).toBeGreaterThan(0);
    expect(new Set(sends.map((c) => stack.standins.sts.roleOf(c.accessKeyId)))).toEqual(new Set([ROLE_ARN]));

    // Each redriven envelope's message arrived there once, carrying its idempotency key.
    const arrived = await drain(otherSqs, remoteUrl);
    const keys = arrived.map((m) => m.MessageAttributes?.['idempotency-key']?.StringValue);
    const redriven: string[] = [];
    for await (const e of createEnvelopeStore().listEnvelopes(report.onCall?.dlqArn ?? ''))
      if (e.state === 'REDRIVEN') redriven.push(e.idempotencyKey);
    expect(redriven).toHaveLength(report.redriven);
    expect(keys.sort()).toEqual(redriven.sort());
    expect(new Set(keys).size).toBe(keys.length);

    // Nothing in the home account: not in its queue of that name, not back at the source's consumer.
    expect(await queueDepth(sqsClient(), homeUrl)).toEqual({ visible: 0, inFlight: 0 });
    expect(consumer?.deliveries.filter((d) => d.redriveId !== null)).toEqual([]);
  });
});
