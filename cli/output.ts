/**
 * Output of the `dlq` CLI: human tables on a terminal, one JSON document with `--json` (for
 * scripts), one-line errors with the exit code that says what went wrong.
 *
 * Exit codes: 0 done, 1 the operation failed or found nothing (the message says what), 2 a bad
 * argument (the message names it; nothing was read, started or written).
 */

/** Where a command writes; tests pass buffers, the binary passes the process streams. */
export interface CliIO {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Whether stderr is a terminal (progress bars) . @default false */
  isTTY?: boolean;
  /** Now, epoch milliseconds. @default Date.now */
  now?: () => number;
}

/** A failure the CLI reports in one line, with its exit code. */
export class CliError extends Error {
  public override readonly name = 'CliError';
  /** 1: the operation failed or found nothing; 2: a bad argument. */
  public readonly exitCode: 1 | 2;
  public constructor(message: string, exitCode: 1 | 2 = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** A bad argument: exit 2, the message names the argument. */
export function usageError(argument: string, problem: string): CliError {
  return new CliError(`${argument}: ${problem}`, 2);
}

/** Writes `value` as pretty JSON and a newline. */
export function printJson(io: CliIO, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Formats rows as an aligned table with a header line. Cells are printed as given (no cutting):
 * a reader must see the whole ARN or reason.
 */
export function formatTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** Labelled lines (`label: value`), labels aligned. */
export function formatFields(fields: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(...fields.map(([k]) => k.length));
  return fields.map(([k, v]) => `${`${k}:`.padEnd(width + 2)}${v}`).join('\n');
}
