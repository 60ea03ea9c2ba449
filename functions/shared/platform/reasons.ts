/**
 * Decisions as data: why a ramp step decided what it did, as a `code` and the numbers that decided
 * it (in the manner of zod's issue codes). `reasons-text.ts` renders them; tests assert codes and
 * numbers. docs/redrive-workflow.md describes the ramp.
 */

/** One term of an exposure bound: a rate in force for some seconds of the window. */
export interface ExposureTerm {
  /** Messages per second. */
  rate: number;
  seconds: number;
  /** The term: rate x seconds, or what the segment moved when that is fewer. */
  messages: number;
}

/**
 * How an exposure bound was computed: the rates in force from one return window before the last
 * clean check (or the ramp's start) to now, each for the seconds it was in force.
 */
export interface ExposureBasis {
  returnWindowSeconds: number;
  /** Epoch ms of the last check that found nothing back (null: none yet, the window starts at the ramp's start). */
  cleanAt: number | null;
  /** The window, epoch ms. */
  from: number;
  to: number;
  terms: ExposureTerm[];
}

/** Messages that may have reached a broken consumer, and the bound on them. */
export interface RampExposure {
  /** Messages of this run found back in the DLQ. */
  returned: number;
  /** Moved since the last clean check: may still come back. */
  atRisk: number;
  /** At most this many moved messages can reach a consumer that broke since the last clean check. */
  bound: number;
  basis: ExposureBasis;
}

/** How a task this run asked for came to be its own. */
export type AdoptedBy = 'started' | 'record' | 'crashed-attempt' | 'lost-answer';

/** A move task the pipeline did not start, as ListMessageMoveTasks showed it. */
export interface ForeignTask {
  taskHandle: string | null;
  status: string;
  rate: number | null;
  /** Epoch ms, or null when not known. */
  startedAt: number | null;
  moved: number;
}

/** Why the ramp decided what it did. */
export type RampReason =
  | { code: 'task-started'; taskHandle: string; rate: number; by: AdoptedBy }
  | { code: 'excess'; depth: number; expected: number; excess: number }
  | { code: 'excess-at-start'; depth: number; inDlq: number }
  | { code: 'excess-after-window'; depth: number; excess: number }
  | { code: 'examine-pending'; depth: number; expected: number; excess: number; status: string | null }
  | {
      code: 'reinflow';
      returned: number;
      bySource: Record<string, number>;
      moved: number;
      baseline: number | null;
      atRisk: number;
      after: RampReason | null;
    }
  | { code: 'inventory-partial'; moved: number; detail: string; after: RampReason | null }
  | { code: 'payload-unchecked'; moved: number; detail: string; after: RampReason | null }
  | { code: 'late-to-park'; late: number; toPark: number; rate: number; after: RampReason | null }
  | { code: 'late-none-to-park'; late: number; after: RampReason | null; next: RampReason }
  | { code: 'leftover'; depth: number; next: RampReason }
  | { code: 'backlog'; backlog: number; limit: number; factor: number; rate: number }
  | { code: 'healthy'; rate: number; moved: number; nextRate: number }
  | { code: 'healthy-top'; rate: number; moved: number; baseline: number }
  | { code: 'drain-wait'; moved: number; secondsLeft: number; returnWindowSeconds: number }
  | { code: 'done'; moved: number; returnWindowSeconds: number; left: number }
  | { code: 'empty-at-start' }
  | { code: 'empty-task-stopping' }
  | { code: 'check-bound'; maxChecks: number; moved: number }
  | { code: 'step-bound'; maxSteps: number; moved: number }
  | ({ code: 'foreign-task' } & ForeignTask)
  | { code: 'ambiguous-tasks'; count: number; rate: number }
  | { code: 'rate-refused'; detail: string }
  | { code: 'start-refused'; detail: string }
  | { code: 'task-failed'; failureReason: string | null; moved: number; toMove: number | null }
  | { code: 'task-cancelled-outside'; moved: number }
  | { code: 'task-status'; status: string }
  | { code: 'task-not-listed-yet'; taskHandle: string }
  | { code: 'task-not-listed'; taskHandle: string }
  | { code: 'no-task' }
  | { code: 'cancelled-task-stopping'; status: string }
  | { code: 'step-up-waits'; rate: number; status: string | null }
  | {
      code: 'cancelled';
      by: string;
      via: string;
      at: number;
      note: string | null;
      moved: number;
      restInDlq: boolean;
    }
  | {
      code: 'stopped-after-failure';
      taskHandle: string | null;
      cancelled: boolean;
      moved: number;
      stillStatus: string | null;
      waitSeconds: number;
    }
  | { code: 'send-failed'; count: number; examples: string[]; moved: number }
  | { code: 'in-flight'; inFlight: number; queue: string; waitSeconds: number; moved: number }
  | {
      code: 'mover-drain-wait';
      moved: number;
      secondsLeft: number;
      returnWindowSeconds: number;
    }
  | { code: 'mover-draining'; secondsLeft: number }
  | {
      code: 'mover-done';
      moved: number;
      left: Record<string, number>;
      fifoHeld: number;
      notSelected: number;
      returnWindowSeconds: number;
      heldGroups: { groups: number; examples: string[] } | null;
    }
  | {
      code: 'mover-moved';
      movedNow: number;
      rate: number;
      moved: number;
      selected: number;
      nextRate: number | null;
      left: Record<string, number>;
    };

/** The codes of {@link RampReason}. */
export type RampReasonCode = RampReason['code'];

/** A run's exposure bound as the ramp reported it (`$.ramp.exposurePeak`), or null when it did not ramp. */
export function exposureBoundOf(ramp: unknown): { bound: number; basis: ExposureBasis } | null {
  const peak = (ramp as { exposurePeak?: { bound?: unknown; basis?: unknown } } | null | undefined)
    ?.exposurePeak;
  if (typeof peak?.bound !== 'number' || typeof peak.basis !== 'object' || peak.basis === null) return null;
  return { bound: peak.bound, basis: peak.basis as ExposureBasis };
}
