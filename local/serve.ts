/**
 * `npm run local`: the local stack, kept up until Ctrl-C, for the `dlq` CLI and `npm start` to
 * use with the real SDK clients: SQS (the local-aws-sqs stand-in), DynamoDB Local with the
 * pipeline table, and a Step Functions API (local/sfn-standin.ts) whose executions run the real
 * `statemachines/redrive.asl.json` with the real handlers in this process.
 *
 * Prints the variables to export (also written to `--write-env FILE` as `export` lines, or printed
 * as one JSON object with `--json`), then narrates every execution it runs. Approval requests are
 * answered as `npm start` answers them: a terminal prompt, `--approve`, `--reject`, or
 * auto-approval when stdin is not a terminal.
 *
 * Flags: `--write-env FILE`, `--json`, `--approve` / `--reject` / `--approve-via NAME`, `--verbose`.
 */
import './demo/env.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Approver, approverFromArgs } from './approver.js';
import { whenAncestorsExit } from './parent-watch.js';
import { startSfnStandIn } from './sfn-standin.js';
import { LOCAL_STACK_ENV, startLocalStack } from './stack.js';

/** A served local stack. */
export interface ServedStack {
  /** Every variable a client needs (endpoints, region, dummy credentials, TABLE_NAME, STATE_MACHINE_ARN). */
  env: Record<string, string>;
  stateMachineArn: string;
  stop(): Promise<void>;
}

/**
 * Starts the local stack and the Step Functions stand-in in this process, and points this
 * process's SDK clients at them.
 *
 * @param options.approver - answers approval requests. @default auto-approval
 * @param options.say - narration of the executions. @default silent
 */
export async function serveLocalStack(
  options: { approver?: Approver; say?: (line: string) => void; retryIntervalMs?: number } = {},
): Promise<ServedStack> {
  const say = options.say ?? (() => undefined);
  const stack = await startLocalStack();
  const sfn = await startSfnStandIn({
    ...(options.approver ? { approver: options.approver } : {}),
    retryIntervalMs: options.retryIntervalMs ?? 1000,
    onTaskResult: (state, result, name) => {
      const r = (result ?? {}) as Record<string, unknown>;
      const detail = r.reason ?? r.refusal ?? r.decision ?? r.verdict ?? '';
      say(`[${name}] ${state}${detail ? `: ${String(detail)}` : ''}`);
    },
    onExecutionEnded: (result) =>
      say(
        `[${result.executionName}] ended ${result.status} at ${result.path.at(-1) ?? '?'} (${result.stateTransitions} state transitions)`,
      ),
  });
  const env = {
    ...stack.env,
    AWS_ENDPOINT_URL_SFN: sfn.endpoint,
    STATE_MACHINE_ARN: sfn.stateMachineArn,
    [LOCAL_STACK_ENV]: '1',
  };
  Object.assign(process.env, env);
  return {
    env,
    stateMachineArn: sfn.stateMachineArn,
    async stop() {
      await sfn.close();
      await stack.stop();
    },
  };
}

/** `export NAME='value'` lines for a POSIX shell. */
export function exportLines(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([k, v]) => `export ${k}='${v.replace(/'/g, "'\\''")}'`)
    .join('\n');
}

/** Creates the env file's folder and checks it can be written, before anything starts (exit 2 if not). */
async function ensureWritable(file: string): Promise<void> {
  try {
    await mkdir(dirname(resolve(file)), { recursive: true });
    await writeFile(file, '', { mode: 0o600, flag: 'a' });
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    process.stderr.write(
      `--write-env ${file}: cannot write it (${reason}); name a file in a folder you can write to\n`,
    );
    process.exit(2);
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const known = new Set([
    '--write-env',
    '--json',
    '--approve',
    '--reject',
    '--approve-via',
    '--verbose',
    '--help',
  ]);
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    if (!known.has(flag)) {
      process.stderr.write(`${flag}: unknown flag (known: ${[...known].join(', ')})\n`);
      process.exit(2);
    }
    if (flag === '--write-env' || flag === '--approve-via') i += 1;
  }
  if (argv.includes('--help')) {
    process.stdout.write(
      'usage: npm run local -- [--write-env FILE] [--json] [--approve|--reject|--approve-via NAME] [--verbose]\n',
    );
    return;
  }
  if (argv.includes('--approve-via')) await import('./slack-approver.js');
  const approver = await approverFromArgs(argv);
  const envFileAt = argv.indexOf('--write-env');
  const envFile = envFileAt >= 0 ? argv[envFileAt + 1] : undefined;
  if (envFileAt >= 0 && (!envFile || envFile.startsWith('--'))) {
    process.stderr.write('--write-env: needs a file name\n');
    process.exit(2);
  }
  if (envFile) await ensureWritable(envFile);
  process.stderr.write(
    'Starting the local stack (SQS stand-in, DynamoDB Local, Step Functions stand-in)...\n',
  );
  const served = await serveLocalStack({ approver, say: (line) => process.stderr.write(`${line}\n`) });
  if (envFile) await writeFile(envFile, `${exportLines(served.env)}\n`, { mode: 0o600 });
  if (argv.includes('--json')) process.stdout.write(`${JSON.stringify(served.env)}\n`);
  else
    process.stdout.write(
      `${exportLines(served.env)}\n\n# Paste the lines above into another shell (or: source ${envFile ?? '<the --write-env file>'}), then:\n#   npm start                      the demo incident, on this stack\n#   npx dlq incidents              list incidents\n#   npx dlq show <incident>        the report and audit trail\n# Approvals (${approver.name}) are answered here. Ctrl-C stops everything.\n`,
    );
  const stop = async () => {
    process.stderr.write('Stopping the local stack...\n');
    await served.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  // `kill` of the npm process that started this one signals only npm: stop with it.
  whenAncestorsExit(() => void stop());
  await new Promise(() => undefined);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) void main();
