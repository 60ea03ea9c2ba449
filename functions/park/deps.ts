/** Park's ports: the transfer ports it shares with SampleRedrive (`#transfer/transfer-deps.js`), and the bulk envelope states. */
import { createEnvelopeStates } from '#inventory/envelope-states.js';
import { tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { createTransferDeps } from '#transfer/transfer-deps.js';
import type { ParkDeps } from './park.js';

/** Builds the ports of `park`; `options.overrides` replaces any of them. */
export function createParkDeps(options: DepsOptions<ParkDeps> = {}): ParkDeps {
  const config = options.config ?? pipelineConfig();
  return {
    ...createTransferDeps(config),
    envelopeStates: createEnvelopeStates(tableAccess(config)),
    ...options.overrides,
  };
}
