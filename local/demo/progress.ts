/**
 * Live progress of the ramped redrive: what the move task reports it moved (its
 * ApproximateNumberOfMessagesMoved, the report's "moved by move tasks"), what left the DLQ and the
 * current rate, both measured from the DLQ depth (what an SRE watches in the console: a message
 * deleted by hand leaves the DLQ too, without being moved), with the task's configured rate.
 * A cli-progress bar on a terminal; one plain line per second otherwise (logs, CI).
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import cliProgress from 'cli-progress';
import { sleep } from '#platform/sleep.js';
import { drawsOnTerminal } from '../terminal.js';
import { queueDepth } from './queues.js';

/** A running progress display; `stop()` ends it. */
export interface RampProgress {
  /** Sets the move task's configured rate and ramp step, shown beside the measured rate. */
  setTaskRate(rate: number, step: number): void;
  /** Sets what the run's move tasks reported moved so far (the last ramp result's). */
  setTaskMoved(moved: number): void;
  /** Ends the display: see {@link RampEnd}. */
  stop(): Promise<RampEnd>;
}

/** What the ramp display saw, at its end. */
export interface RampEnd {
  /** The backlog when the ramp started (the task's count, else the DLQ depth at the first poll). */
  total: number;
  /** What the move tasks reported moved (ApproximateNumberOfMessagesMoved), as the report counts. */
  taskMoved: number;
  /**
   * Most of the backlog seen gone from the DLQ (never above `total`): moved by the task or gone
   * otherwise (deleted by hand); messages that reached the DLQ after the start are in `arrived`.
   */
  left: number;
  /** The most the DLQ held above what `left` leaves (late arrivals, returned copies). */
  arrived: number;
  /** The DLQ's depth (visible + in flight) at the last poll. */
  depth: number;
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
            'ramp |{bar}| {value}/{total} left the DLQ | task moved {taskMoved} | {rate} msg/s now | task rate {taskRate} msg/s (step {step})',
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
  let taskMoved = 0;
  let depth = 0;
  const history: Array<{ t: number; moved: number }> = [{ t: Date.now(), moved: 0 }];
  let lastLine = 0;
  let stopped = false;

  const tick = async () => {
    const { visible, inFlight } = await queueDepth(sqs, dlqUrl);
    depth = visible + inFlight;
    if (total === undefined && !barStarted) expected = visible + inFlight;
    if (bar && !barStarted) bar.start(Math.max(1, expected), 0, { rate: '0.0', taskRate, step, taskMoved });
    barStarted = true;
    moved = Math.max(moved, Math.min(expected, expected - (visible + inFlight)));
    arrived = Math.max(arrived, visible + inFlight - (expected - moved));
    const extra = arrived > 0 ? ` (+${arrived} arrived in the DLQ since the ramp started)` : '';
    const now = Date.now();
    history.push({ t: now, moved });
    while (history.length > 2 && (history[0] as { t: number }).t < now - 2000) history.shift();
    const first = history[0] as { t: number; moved: number };
    const rate = now > first.t ? ((moved - first.moved) * 1000) / (now - first.t) : 0;
    if (bar) bar.update(moved, { rate: rate.toFixed(1), taskRate, step, taskMoved });
    else if (now - lastLine >= 1000) {
      lastLine = now;
      stream.write(
        `ramp: ${moved}/${expected} left the DLQ${extra}, task moved ${taskMoved}, ${rate.toFixed(1)} msg/s now, task rate ${taskRate} msg/s (step ${step})\n`,
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

  const display: RampProgress = {
    setTaskRate(rate, index) {
      taskRate = String(rate);
      step = String(index + 1);
    },
    setTaskMoved(n) {
      taskMoved = n;
    },
    async stop() {
      stopped = true;
      await loop;
      bar?.stop();
      release();
      return { total: expected, taskMoved, left: moved, arrived, depth };
    },
  };
  const release = drawsOnTerminal(display);
  return display;
}

/** The ramp's display over a whole local run (npm start): see {@link rampDisplay}. */
export interface RampDisplay {
  /** Sees each Task result: the first move task starts the display, every ramp result sets its rate. */
  onTaskResult(state: string, result: Record<string, unknown>, sqs: SQSClient, dlqUrl: string): void;
  /**
   * Ends the display and says its summary line, once: the ramp is over when Reconcile starts or
   * the run ends, and nothing of it prints after that. Later calls do nothing.
   */
  stop(): Promise<void>;
}

/** The Task states whose result is a move task's `$.ramp`. */
const MOVE_TASK_STATES = new Set(['StartMoveTask', 'StepUp', 'CheckProgress']);

/**
 * The summary line of a ramp: what the move tasks moved (the report's count) and how the DLQ's
 * depth compares with what that leaves of the backlog: more (returned copies, late arrivals: the
 * report's returned and late-arrival rows) or fewer (gone without the task: deleted or moved by
 * hand, parked late arrivals). Only the net difference is known from a depth.
 */
export function rampSummaryLine(end: RampEnd): string {
  const leftByTask = end.total - end.taskMoved;
  const net = end.depth - leftByTask;
  const holds =
    net > 0
      ? `the DLQ holds ${end.depth}: the ${leftByTask} the task left there and ${net} that arrived meanwhile (returned copies or late arrivals)`
      : net < 0
        ? `the DLQ holds ${end.depth} of the ${leftByTask} the task left there: ${-net} left it without the move task (deleted or moved by hand, or parked)`
        : `the DLQ holds ${end.depth}`;
  return `Ramp: the move task moved ${end.taskMoved} of ${end.total}; ${holds}.`;
}

/**
 * The ramp's display of one local run: started by the first StartMoveTask with a task, stopped
 * by {@link RampDisplay.stop} (call it when the Reconcile or done phase starts) with
 * {@link rampSummaryLine}.
 *
 * @param options.say - prints the summary line.
 * @param options.progress - display options ({@link startRampProgress}'s).
 */
export function rampDisplay(options: {
  say: (line: string) => void;
  progress?: Parameters<typeof startRampProgress>[3];
}): RampDisplay {
  let progress: RampProgress | undefined;
  let stopped = false;
  let stopping: Promise<void> | undefined;
  return {
    onTaskResult(state, r, sqs, dlqUrl) {
      if (stopped || !MOVE_TASK_STATES.has(state)) return;
      if (!progress && state === 'StartMoveTask' && r.taskHandle)
        progress = startRampProgress(
          sqs,
          dlqUrl,
          Number(r.toMove) > 0 ? Number(r.toMove) : undefined,
          options.progress,
        );
      progress?.setTaskRate(Number(r.rate), Number(r.rateIndex));
      // The report's "moved by move tasks": earlier tasks' count plus this one's.
      const moved = Number(r.movedBefore ?? 0) + Number(r.moved ?? 0);
      if (Number.isFinite(moved)) progress?.setTaskMoved(moved);
    },
    stop() {
      stopped = true;
      stopping ??= (async () => {
        if (!progress) return;
        options.say(rampSummaryLine(await progress.stop()));
      })();
      return stopping;
    },
  };
}

/** What a phase's progress display reads at each tick. */
export interface PhaseReading {
  /** Messages done so far. */
  done: number;
  /** Messages the phase has to do, when known. */
  total?: number | undefined;
  /** A short note shown after the counts (e.g. `held until 10:41`). */
  note?: string | undefined;
}

/** A running phase display; `stop()` ends it and returns the last reading. */
export interface PhaseProgress {
  stop(): Promise<PhaseReading>;
}

/**
 * Progress of one phase of a local run (seeding, inventory, park, verification wait, reconcile):
 * done of total (or done and elapsed time when the total is unknown), the rate over the last two
 * seconds, and a note. A cli-progress bar on a terminal; one plain line every 2 s otherwise.
 *
 * @param read - polled every `pollMs` (a failed read is skipped).
 * @param options.unit - what `done` counts. @default 'messages'
 */
export function startPhaseProgress(
  label: string,
  read: () => Promise<PhaseReading>,
  options: { tty?: boolean; stream?: NodeJS.WritableStream; pollMs?: number; unit?: string } = {},
): PhaseProgress {
  const stream = options.stream ?? process.stderr;
  const tty = options.tty ?? (stream as { isTTY?: boolean }).isTTY === true;
  const unit = options.unit ?? 'messages';
  const startedAt = Date.now();
  const bar = tty
    ? new cliProgress.SingleBar(
        {
          format: `${label.padEnd(9)} |{bar}| {value}/{total} ${unit} | {rate}/s | {elapsed} s {note}`,
          stream: stream as NodeJS.WritableStream,
          hideCursor: true,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let last: PhaseReading = { done: 0 };
  let barStarted = false;
  let lastLine = 0;
  let stopped = false;
  const history: Array<{ t: number; done: number }> = [];
  const tick = async () => {
    last = await read();
    const now = Date.now();
    history.push({ t: now, done: last.done });
    while (history.length > 2 && (history[0] as { t: number }).t < now - 2000) history.shift();
    const first = history[0] as { t: number; done: number };
    const rate = now > first.t ? ((last.done - first.done) * 1000) / (now - first.t) : 0;
    const elapsed = ((now - startedAt) / 1000).toFixed(0);
    const values = { rate: rate.toFixed(0), elapsed, note: last.note ?? '' };
    if (bar) {
      const total = Math.max(1, last.total ?? last.done);
      if (!barStarted) bar.start(total, last.done, values);
      barStarted = true;
      bar.setTotal(total);
      bar.update(last.done, values);
    } else if (now - lastLine >= 2000) {
      lastLine = now;
      const of = last.total !== undefined ? `${last.done}/${last.total}` : `${last.done}`;
      stream.write(
        `${label}: ${of} ${unit}, ${values.rate}/s, ${elapsed} s${last.note ? ` ${last.note}` : ''}\n`,
      );
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await tick().catch(() => undefined);
      await new Promise((r) => setTimeout(r, options.pollMs ?? 500));
    }
    await tick().catch(() => undefined);
  })();
  const display: PhaseProgress = {
    async stop() {
      stopped = true;
      await loop;
      bar?.stop();
      release();
      return last;
    },
  };
  const release = drawsOnTerminal(display);
  return display;
}
