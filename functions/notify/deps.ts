/**
 * Notify's (and RecordFailure's) ports, from the pipeline configuration and the shared clients.
 * The notifier is `sharedNotifier()` (Slack when configured, else the log notifier; built once per
 * container, so the Slack secret is read once).
 */
import { sharedNotifier } from '#approval/slack-notifier.js';
import { createAuditTrail } from '#incident/audit-trail.js';
import { createIncidentStore } from '#incident/incident-store.js';
import { createWorkflowLeaseStore } from '#incident/workflow-lease.js';
import { sqsClient, tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { sharedRunMetrics } from '#platform/metrics.js';
import { createMoveTaskRecords } from '#transfer/move-task-record.js';
import { createMoveTasks } from '#transfer/move-tasks.js';
import type { NotifyDeps } from './notify.js';

/** Builds the ports of `notify`; `options.overrides` replaces any of them. */
export async function createNotifyDeps(options: DepsOptions<NotifyDeps> = {}): Promise<NotifyDeps> {
  const config = options.config ?? pipelineConfig();
  const table = tableAccess(config);
  return {
    incidents: createIncidentStore(table),
    leases: createWorkflowLeaseStore(table),
    audit: createAuditTrail(table),
    moveTasks: { records: createMoveTaskRecords(table), tasks: createMoveTasks({ client: sqsClient() }) },
    metrics: sharedRunMetrics(),
    ...options.overrides,
    notifier: options.overrides?.notifier ?? (await sharedNotifier(config)),
  };
}
