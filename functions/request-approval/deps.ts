/**
 * RequestApproval's ports, from the pipeline configuration and the shared clients: the approval
 * store, the Slack client (bot token from `loadSlackSecrets`), the incident summary and the queue
 * registration. Shared by the Lambda handler and the local Slack approver
 * (`npm start -- --approve-via slack`), which overrides `slack`.
 */
import { createApprovalStore } from '#approval/approval-store.js';
import { createSlackApi, slackApiOptions } from '#approval/slack-client.js';
import { loadSlackSecrets } from '#approval/slack-secrets.js';
import { createAuditTrail } from '#incident/audit-trail.js';
import { createIncidentStore } from '#incident/incident-store.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import type { RequestApprovalDeps } from './request-approval.js';

/**
 * Builds the ports of `requestApproval`; `options.overrides` replaces any of them (an overridden
 * `slack` skips loading the Slack secret).
 *
 * @throws InvalidInputError from `loadSlackSecrets` when no Slack credentials are configured.
 */
export async function createRequestApprovalDeps(
  options: DepsOptions<RequestApprovalDeps> = {},
): Promise<RequestApprovalDeps> {
  const config = options.config ?? pipelineConfig();
  const table = tableAccess(config);
  const incidents = createIncidentStore(table);
  const registry = createQueueRegistry(table);
  const slack =
    options.overrides?.slack ??
    createSlackApi(slackApiOptions((await loadSlackSecrets(config.slack)).botToken, config.slack));
  return {
    approvals: createApprovalStore(table),
    slack,
    incidentSummary: async (incidentId) => (await incidents.getIncident(incidentId))?.summary ?? null,
    registration: (dlqArn) => registry.getRegistration(dlqArn),
    defaultChannel: config.slack.defaultChannel,
    timeoutSeconds: config.approvalTimeoutSeconds,
    now: () => Date.now(),
    audit: createAuditTrail(table),
    ...options.overrides,
  };
}
