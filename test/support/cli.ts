/**
 * Runs the `dlq` CLI in-process (the same `runCli` the binary calls) and captures what it prints.
 */
import { runCli } from '../../cli/main.js';

/** What one CLI run printed and its exit code. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (for `--json` runs). */
  json<T = unknown>(): T;
}

/** Runs `dlq <argv...>` against the environment's stack. */
export async function dlq(...argv: string[]): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
  });
  return { code, stdout, stderr, json: <T>() => JSON.parse(stdout) as T };
}
