/**
 * A per-test timeout scaled like vitest.config.ts scales the default ones (by the load measured
 * when the run started, at most 4x). Timeouts catch hangs; they never decide a result.
 */
export function scaled(ms: number): number {
  const factor = Number(process.env.VITEST_TIMEOUT_SCALE);
  return Math.round(ms * (Number.isFinite(factor) && factor >= 1 ? factor : 1));
}
