/**
 * Live progress of the ramped redrive: moved of total and the current rate, measured from the DLQ
 * depth (what an SRE watches in the console), with the move task's configured rate beside it.
 * A cli-progress bar on a terminal; one plain line per second otherwise (logs, CI).
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import cliProgress from 'cli-progress';
import { sleep } from '#platform/sleep.js';
import { queueDepth } from './queues.js';

/** A running progress display; `stop()` ends it. */
export interface RampProgress {
  /** Sets the move task's configured rate and ramp step, shown beside the measured rate. */
  setTaskRate(rate: number, step: number): void;
  /**
   * `moved` never exceeds `total` (the backlog when the ramp started); messages that reached the
   * DLQ after that (late arrivals, returned copies) are counted apart in `arrived`, the most the
   * DLQ held above what the counter expected.
   */
  stop(): Promise<{ moved: number; total: number; arrived: number }>;
}

/**
 * Starts polling the DLQ depth and drawing progress.
 *
 * @param total - messages expected to be moved; undefined: the DLQ depth at the first poll (the
 *   move task reports 0 to move until it has counted the backlog).
 * @param options.tty - draw a bar (true) or print lines (false). @default process.stderr.isTTY
 */
export function startRampProgress(
  sqs: SQSClient,
  dlqUrl: string,
  total: number | undefined,
  options: { tty?: boolean; stream?: NodeJS.WritableStream; pollMs?: number } = {},
): RampProgress {
  const stream = options.stream ?? process.stderr;
  const tty = options.tty ?? (stream as { isTTY?: boolean }).isTTY === true;
  const bar = tty
    ? new cliProgress.SingleBar(
        {
          format:
            'ramp |{bar}| {value}/{total} moved | {rate} msg/s now | task rate {taskRate} msg/s (step {step})',
          stream: stream as NodeJS.WritableStream,
          hideCursor: true,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let expected = total ?? 0;
  let barStarted = false;
  let taskRate = '-';
  let step = '-';
  let moved = 0;
  let arrived = 0;
  const history: Array<{ t: number; moved: number }> = [{ t: Date.now(), moved: 0 }];
  let lastLine = 0;
  let stopped = false;

  const tick = async () => {
    const { visible, inFlight } = await queueDepth(sqs, dlqUrl);
    if (total === undefined && !barStarted) expected = visible + inFlight;
    if (bar && !barStarted) bar.start(Math.max(1, expected), 0, { rate: '0.0', taskRate, step });
    barStarted = true;
    moved = Math.max(moved, Math.min(expected, expected - (visible + inFlight)));
    arrived = Math.max(arrived, visible + inFlight - (expected - moved));
    const extra = arrived > 0 ? ` (+${arrived} arrived in the DLQ since the ramp started)` : '';
    const now = Date.now();
    history.push({ t: now, moved });
    while (history.length > 2 && (history[0] as { t: number }).t < now - 2000) history.shift();
    const first = history[0] as { t: number; moved: number };
    const rate = now > first.t ? ((moved - first.moved) * 1000) / (now - first.t) : 0;
    if (bar) bar.update(moved, { rate: rate.toFixed(1), taskRate, step });
    else if (now - lastLine >= 1000) {
      lastLine = now;
      stream.write(
        `ramp: ${moved}/${expected} moved${extra}, ${rate.toFixed(1)} msg/s now, task rate ${taskRate} msg/s (step ${step})\n`,
      );
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await tick().catch(() => undefined);
      await sleep(options.pollMs ?? 250);
    }
    await tick().catch(() => undefined);
  })();

  return {
    setTaskRate(rate, index) {
      taskRate = String(rate);
      step = String(index + 1);
    },
    async stop() {
      stopped = true;
      await loop;
      bar?.stop();
      return { moved, total: expected, arrived };
    },
  };
}
