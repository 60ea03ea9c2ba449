/**
 * How times are shown to a person on call, everywhere the pipeline shows one (Slack, the terminal
 * approval prompt, `npm start`'s report, the `dlq` CLI): a UTC clock time, with the relative time
 * beside it, e.g. `2026-01-02T10:35:00Z (3 h 20 min ago)`. Machine-readable outputs (`--json`)
 * carry epoch milliseconds and ISO-8601 instead.
 */

/** A duration, milliseconds, as `2 d 3 h`, `3 h 20 min`, `12 min`, `45 s`. Negative counts as 0. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  if (m > 0) return `${m} min`;
  return `${s} s`;
}

/**
 * Epoch milliseconds as ISO-8601 UTC to the second (`2026-01-02T10:35:00Z`): what a person reads.
 * Machine-readable fields keep the milliseconds beside it.
 */
export function isoUtc(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `in 2 h 5 min` / `3 min ago` / `now`, from `nowMs` to `ms`. */
export function relativeTime(ms: number, nowMs: number): string {
  const delta = ms - nowMs;
  if (Math.abs(delta) < 1000) return 'now';
  return delta > 0 ? `in ${formatDuration(delta)}` : `${formatDuration(-delta)} ago`;
}

/**
 * A clock time and the relative time beside it: `2026-01-02T10:35:00Z (in 3 h 20 min)`.
 * @param ms - the time, epoch milliseconds.
 * @param nowMs - now, epoch milliseconds.
 */
export function clockText(ms: number, nowMs: number): string {
  return `${isoUtc(ms)} (${relativeTime(ms, nowMs)})`;
}
