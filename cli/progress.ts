/**
 * Progress for long CLI commands: a cli-progress bar on a terminal (stderr), nothing otherwise
 * (scripts and `--json` read stdout; CI logs stay clean).
 */
import cliProgress from 'cli-progress';
import type { CliIO } from './output.js';

/** A running progress display. */
export interface Progress {
  update(value: number, payload?: Record<string, string | number>): void;
  /** Raises the total when more work turns up than expected. */
  setTotal(total: number): void;
  stop(): void;
}

/**
 * Starts a bar for `total` units of work.
 * @param format - cli-progress format; `{bar}`, `{value}`, `{total}` and payload keys.
 */
export function startProgress(io: CliIO, total: number, format: string): Progress {
  if (!io.isTTY) return { update: () => undefined, setTotal: () => undefined, stop: () => undefined };
  const bar = new cliProgress.SingleBar(
    { format, stream: io.stderr as NodeJS.WritableStream, hideCursor: true, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  bar.start(Math.max(1, total), 0);
  return {
    update: (value, payload) => bar.update(value, payload),
    setTotal: (t) => bar.setTotal(Math.max(1, t)),
    stop: () => bar.stop(),
  };
}
