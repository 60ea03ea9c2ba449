/**
 * ExecutionEnded's ports, from the pipeline configuration and the shared clients. The notifier is
 * `sharedNotifier()` (Slack when configured, else the log notifier; built once per container).
 */
import { sharedNotifier } from '#approval/slack-notifier.js';
import { createIncidentStore } from '#incident/incident-store.js';
import { createWorkflowLeaseStore } from '#incident/workflow-lease.js';
import { sqsClient, tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { createMoveTaskRecords } from '#transfer/move-task-record.js';
import { createMoveTasks } from '#transfer/move-tasks.js';
import type { ExecutionEndedDeps } from './execution-ended.js';

/** Builds the ports of `executionEnded`; `options.overrides` replaces any of them. */
export async function createExecutionEndedDeps(
  options: DepsOptions<ExecutionEndedDeps> = {},
): Promise<ExecutionEndedDeps> {
  const config = options.config ?? pipelineConfig();
  const table = tableAccess(config);
  return {
    incidents: createIncidentStore(table),
    leases: createWorkflowLeaseStore(table),
    moveTasks: { records: createMoveTaskRecords(table), tasks: createMoveTasks({ client: sqsClient() }) },
    ...options.overrides,
    notifier: options.overrides?.notifier ?? (await sharedNotifier(config)),
  };
}
