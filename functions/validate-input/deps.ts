/** ValidateInput's ports, from the pipeline configuration and the shared clients. */
import { createOpenIncidents } from '#incident/open-incident.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createAbandonedSessionFinder } from '#inventory/inventory-session.js';
import { sqsClient, tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { createQueueLocator } from './queue-locator.js';
import type { ValidateInputDeps } from './validate-input.js';

/** Builds the ports of `validateInput`; `options.overrides` replaces any of them. */
export function createValidateInputDeps(options: DepsOptions<ValidateInputDeps> = {}): ValidateInputDeps {
  const config = options.config ?? pipelineConfig();
  return {
    queues: createQueueLocator(sqsClient()),
    registrations: createQueueRegistry(tableAccess(config)),
    openIncidents: createOpenIncidents(tableAccess(config)),
    abandonedSessions: createAbandonedSessionFinder(tableAccess(config)),
    region: config.region,
    defaultParkingQueueUrl: config.parkingQueueUrl,
    ...options.overrides,
  };
}
