/** SampleRedrive's ports: the transfer ports it shares with Park (`#transfer/transfer-deps.js`). */
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { createTransferDeps } from '#transfer/transfer-deps.js';
import type { SampleRedriveDeps } from './sample-redrive.js';

/** Builds the ports of `sampleRedrive`; `options.overrides` replaces any of them. */
export function createSampleRedriveDeps(options: DepsOptions<SampleRedriveDeps> = {}): SampleRedriveDeps {
  return { ...createTransferDeps(options.config ?? pipelineConfig()), ...options.overrides };
}
