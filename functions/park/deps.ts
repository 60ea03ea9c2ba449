/** Park's ports: the transfer ports it shares with SampleRedrive (`#transfer/transfer-deps.js`). */
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { createTransferDeps } from '#transfer/transfer-deps.js';
import type { ParkDeps } from './park.js';

/** Builds the ports of `park`; `options.overrides` replaces any of them. */
export function createParkDeps(options: DepsOptions<ParkDeps> = {}): ParkDeps {
  return { ...createTransferDeps(options.config ?? pipelineConfig()), ...options.overrides };
}
