/**
 * Preflight's KMS check on the local stack: the KMS stand-in holds the keys and key policies, the
 * IAM stand-in the pipeline roles and their identity policies (PIPELINE_KEY_USERS names them, as
 * the stack does), and the real preflight handler decides before any approval whether each role
 * may use each queue's key.
 */
import { CreateRoleCommand, IAMClient, PutRolePolicyCommand } from '@aws-sdk/client-iam';
import {
  CreateAliasCommand,
  CreateKeyCommand,
  DisableKeyCommand,
  KMSClient,
  ScheduleKeyDeletionCommand,
} from '@aws-sdk/client-kms';
import { SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createWorkflowLeaseStore } from '#incident/workflow-lease.js';
import { resetClients, sqsClient } from '#platform/clients.js';
import { handler } from '../../functions/preflight/handler.js';
import type { PreflightResult } from '../../functions/preflight/preflight.js';
import { StandinError } from '../../local/aws-standins/server.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import {
  createQueue,
  type InventoriedDlq,
  lambdaContext,
  planFor,
  seedAndInventory,
} from '../support/redrive-fixtures.js';
import { queueDepth } from '../support/seed-dlq.js';

const ACCOUNT = '111122223333';
const REGION = 'us-east-1';
const VIA_SQS = `sqs.${REGION}.amazonaws.com`;

const run = (event: unknown) => handler(event as never, lambdaContext) as Promise<PreflightResult>;

/** A key policy that lets `roleArns` use the key only through SQS (no root delegation for use). */
function viaSqsOnlyPolicy(roleArns: string[]): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'KeyAdministration',
        Effect: 'Allow',
        Principal: { AWS: `arn:aws:iam::${ACCOUNT}:root` },
        Action: [
          'kms:Describe*',
          'kms:Get*',
          'kms:Put*',
          'kms:Enable*',
          'kms:Disable*',
          'kms:ScheduleKeyDeletion',
        ],
        Resource: '*',
      },
      {
        Sid: 'PipelineUseThroughSqs',
        Effect: 'Allow',
        Principal: { AWS: roleArns },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
        Resource: '*',
        Condition: { StringEquals: { 'kms:ViaService': VIA_SQS, 'kms:CallerAccount': ACCOUNT } },
      },
    ],
  });
}

describe('Preflight checks every queue KMS key against the pipeline roles (KMS and IAM stand-ins)', () => {
  let stack: LocalStack;
  let roles: Record<'sample' | 'move' | 'park', string>;
  const kms = () => new KMSClient({});
  const iam = () => new IAMClient({});

  const createRole = async (name: string, statements: unknown[]) => {
    const out = await iam().send(
      new CreateRoleCommand({
        RoleName: name,
        AssumeRolePolicyDocument: JSON.stringify({
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' },
          ],
        }),
      }),
    );
    if (statements.length > 0)
      await iam().send(
        new PutRolePolicyCommand({
          RoleName: name,
          PolicyName: 'kms',
          PolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: statements }),
        }),
      );
    return out.Role?.Arn as string;
  };
  const createKey = async (policy?: string) =>
    (await kms().send(new CreateKeyCommand(policy ? { Policy: policy } : {}))).KeyMetadata?.Arn as string;
  const encrypt = (url: string, keyId: string) =>
    sqsClient().send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { KmsMasterKeyId: keyId } }));
  let counter = 0;
  const seed = async (options: { straightToDlq?: number } = {}): Promise<InventoriedDlq> => {
    counter += 1;
    return seedAndInventory({
      sqs: sqsClient(),
      dlqName: `kms-${counter}-dlq`,
      sourceNames: [`kms-${counter}-src`],
      messages: [{ body: '{"n":1}' }, { body: '{"n":2}' }],
      ...(options.straightToDlq
        ? {
            sendStraightToDlq: Array.from({ length: options.straightToDlq }, (_, i) => ({
              body: `{"straight":${i}}`,
            })),
          }
        : {}),
      incidentId: `inc-kms-${counter}`,
    });
  };

  beforeAll(async () => {
    stack = await startLocalStack({ accountId: ACCOUNT });
    const kmsUse = ['kms:Decrypt', 'kms:GenerateDataKey'];
    roles = {
      // Identity policies allow the key use the function needs, only through SQS.
      sample: await createRole('pipeline-sample-redrive', [
        {
          Effect: 'Allow',
          Action: kmsUse,
          Resource: '*',
          Condition: { StringEquals: { 'kms:ViaService': VIA_SQS } },
        },
      ]),
      move: await createRole('pipeline-move-task', [{ Effect: 'Allow', Action: kmsUse, Resource: '*' }]),
      // Park's role was given Decrypt but not GenerateDataKey: it could read the DLQ, not send to parking.
      park: await createRole('pipeline-park', [{ Effect: 'Allow', Action: 'kms:Decrypt', Resource: '*' }]),
    };
    process.env.PIPELINE_KEY_USERS = JSON.stringify([
      {
        function: 'sample-redrive',
        roleArn: roles.sample,
        dlq: ['kms:Decrypt'],
        destination: kmsUse,
        parking: [],
      },
      { function: 'move-task', roleArn: roles.move, dlq: ['kms:Decrypt'], destination: kmsUse, parking: [] },
      { function: 'park', roleArn: roles.park, dlq: ['kms:Decrypt'], destination: [], parking: kmsUse },
    ]);
    resetClients();
  });
  afterAll(async () => {
    delete process.env.PIPELINE_KEY_USERS;
    resetClients();
    await stack?.stop();
  });
  beforeEach(() => {
    stack.standins.kms.calls.splice(0);
    stack.standins.iam.calls.splice(0);
    stack.standins.kms.clearFaults();
  });

  it('passes a key whose policy allows the roles only through SQS (kms:ViaService), without calling KMS as them', async () => {
    const dlq = await seed();
    const key = await createKey(viaSqsOnlyPolicy([roles.sample, roles.move, roles.park]));
    await encrypt(dlq.dlqUrl, key);
    await encrypt(dlq.sources[0]?.url as string, key);
    stack.standins.kms.calls.splice(0);

    const result = await run({ action: 'preflight', plan: planFor(dlq) });

    expect(result.refusal).toBeNull();
    expect(result.ok).toBe(true);
    // Read the key, never used it: a Decrypt from preflight's own role would prove nothing.
    expect([...new Set(stack.standins.kms.calls.map((c) => c.operation))].sort()).toEqual([
      'DescribeKey',
      'GetKeyPolicy',
    ]);
    const simulations = stack.standins.iam.calls.filter((c) => c.operation === 'SimulatePrincipalPolicy');
    expect(simulations.map((c) => c.input.PolicySourceArn).sort()).toEqual(
      // DLQ: all three decrypt; destination: sample-redrive and move-task.
      [roles.move, roles.move, roles.park, roles.sample, roles.sample].sort(),
    );
    expect(simulations[0]?.input.ContextEntries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ ContextKeyName: 'kms:ViaService', ContextKeyValues: [VIA_SQS] }),
      ]),
    );
  });

  it('refuses before approval when a role may not use the parking queue key, naming queue, key, role and action, and changes nothing', async () => {
    const dlq = await seed({ straightToDlq: 2 });
    const parkingUrl = await createQueue(sqsClient(), `kms-${counter}-parking`);
    const key = await createKey();
    await encrypt(parkingUrl, key);
    const depthBefore = await queueDepth(sqsClient(), dlq.dlqUrl);

    const result = await run({ action: 'preflight', plan: planFor(dlq, { parkingQueueUrl: parkingUrl }) });

    expect(result.ok).toBe(false);
    expect(result.refusal).toBe(
      `redrive refused: parking queue kms-${counter}-parking is encrypted with KMS key ${key}: the park role (${roles.park}) may not kms:GenerateDataKey on it: no IAM policy of the role allows it (implicitDeny)`,
    );
    expect(await queueDepth(sqsClient(), dlq.dlqUrl)).toEqual(depthBefore);
    expect(await createWorkflowLeaseStore().get(dlq.dlqArn)).toBeUndefined();
  });

  it('only warns about the parking queue key when no message will be parked', async () => {
    const dlq = await seed();
    const parkingUrl = await createQueue(sqsClient(), `kms-${counter}-parking`);
    const key = await createKey();
    await encrypt(parkingUrl, key);

    const result = await run({ action: 'preflight', plan: planFor(dlq, { parkingQueueUrl: parkingUrl }) });

    expect(result.ok).toBe(true);
    expect(result.warnings).toContain(
      `parking queue kms-${counter}-parking is encrypted with KMS key ${key}: the park role (${roles.park}) may not kms:GenerateDataKey on it: no IAM policy of the role allows it (implicitDeny)`,
    );
  });

  it('refuses a key whose policy neither names the role nor delegates to the account, even though the role IAM policy allows it', async () => {
    const dlq = await seed();
    const key = await createKey(viaSqsOnlyPolicy([roles.park]));
    await encrypt(dlq.dlqUrl, key);

    const result = await run({ action: 'preflight', plan: planFor(dlq) });

    expect(result.ok).toBe(false);
    expect(result.refusal).toContain(
      `DLQ ${dlq.dlqArn.split(':').pop()} is encrypted with KMS key ${key}: the sample-redrive role (${roles.sample}) may not kms:Decrypt on it: the key policy neither allows the role nor lets the account's IAM policies decide`,
    );
    expect(result.refusal).toContain(`the move-task role (${roles.move}) may not kms:Decrypt`);
    expect(result.refusal).not.toContain(`the park role`);
  });

  it('refuses a disabled destination key and a DLQ key pending deletion, naming each state', async () => {
    const dlq = await seed();
    const dlqKey = await createKey();
    const sourceKey = await createKey();
    await encrypt(dlq.dlqUrl, dlqKey);
    await encrypt(dlq.sources[0]?.url as string, sourceKey);
    await kms().send(new DisableKeyCommand({ KeyId: sourceKey }));
    await kms().send(new ScheduleKeyDeletionCommand({ KeyId: dlqKey, PendingWindowInDays: 7 }));

    const result = await run({ action: 'preflight', plan: planFor(dlq) });

    expect(result.ok).toBe(false);
    expect(result.refusal).toMatch(
      new RegExp(
        `DLQ kms-${counter}-dlq is encrypted with KMS key ${dlqKey}, which is pending deletion \\(deleted at \\d{4}-`,
      ),
    );
    expect(result.refusal).toContain(
      `destination kms-${counter}-src is encrypted with KMS key ${sourceKey}, which is Disabled: SQS cannot encrypt or decrypt with it`,
    );
    expect(stack.standins.iam.calls).toEqual([]);
  });

  it('refuses a key preflight may not read, saying the pipeline is granted KMS only on registered keys', async () => {
    const dlq = await seed();
    const key = await createKey();
    await kms().send(
      new CreateAliasCommand({ AliasName: `alias/unregistered-${counter}`, TargetKeyId: key }),
    );
    await encrypt(dlq.dlqUrl, `alias/unregistered-${counter}`);
    stack.standins.kms.fail({
      operation: 'DescribeKey',
      error: new StandinError('AccessDeniedException', 'User is not authorized to perform: kms:DescribeKey'),
    });

    const result = await run({ action: 'preflight', plan: planFor(dlq) });

    expect(result.ok).toBe(false);
    expect(result.refusal).toContain(
      `DLQ kms-${counter}-dlq is encrypted with KMS key alias/unregistered-${counter}, which preflight may not read`,
    );
    expect(result.refusal).toContain('granted KMS only on registered keys');
  });

  it('checks nothing for SSE-SQS and the AWS managed key alias/aws/sqs', async () => {
    const dlq = await seed();
    await encrypt(dlq.dlqUrl, 'alias/aws/sqs');
    await sqsClient().send(
      new SetQueueAttributesCommand({
        QueueUrl: dlq.sources[0]?.url as string,
        Attributes: { SqsManagedSseEnabled: 'true' },
      }),
    );

    const result = await run({ action: 'preflight', plan: planFor(dlq) });

    expect(result.ok).toBe(true);
    expect(stack.standins.kms.calls).toEqual([]);
    expect(stack.standins.iam.calls).toEqual([]);
  });
});
