/**
 * The pipeline's one `sleep`: Node's timer promise, so backoffs, polls and waits in functions/,
 * local/ and test/ share one definition. Every `sleep?` port of a core defaults to it (tests pass
 * a fake clock instead).
 *
 * @see https://nodejs.org/api/timers.html#timerspromisessettimeoutdelay-value-options
 */
import { setTimeout as delay } from 'node:timers/promises';

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return delay(ms);
}
