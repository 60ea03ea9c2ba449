/**
 * A per-test timeout scaled like vitest.config.ts scales the default ones, at most 4x: by the load
 * measured when the run started (VITEST_TIMEOUT_SCALE), or by the load now when that is higher. A
 * second `npm test` started beside this one raises the load only after both have started (the
 * one-minute load average lags), so the factor taken at the start alone stayed 1 for a pair
 * started together, and a simulated invocation of 60 s (redrive-fixtures.ts `lambdaContext`) ran
 * out under a load of 16-30 (redrive-hostile C07). Timeouts catch hangs; they never decide a result.
 */
import { availableParallelism, loadavg } from 'node:os';

/** The load factor now: the one-minute load average per core, between 1 and 4. */
export function loadFactorNow(): number {
  return Math.min(4, Math.max(1, (loadavg()[0] ?? 0) / availableParallelism()));
}

export function scaled(ms: number): number {
  const atStart = Number(process.env.VITEST_TIMEOUT_SCALE);
  const factor = Math.max(Number.isFinite(atStart) && atStart >= 1 ? atStart : 1, loadFactorNow());
  return Math.round(ms * Math.min(4, factor));
}
