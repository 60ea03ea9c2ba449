/**
 * Wires {@link requestApproval}'s ports to the pipeline's stores and the Slack client. Shared by the
 * Lambda handler and the local Slack approver (`npm start -- --approve-via slack`).
 */
import { type ApprovalStore, createApprovalStore } from '#approval/approval-store.js';
import type { SlackApi } from '#approval/slack-client.js';
import { createIncidentStore, type IncidentStore } from '#incident/incident-store.js';
import { createQueueRegistry, type QueueRegistry } from '#incident/queue-registry.js';
import type { RequestApprovalDeps } from './request-approval.js';

/** Options of {@link requestApprovalDeps}; every store defaults to the DynamoDB one. */
export interface RequestApprovalWiring {
  slack: Pick<SlackApi, 'postMessage'>;
  approvals?: ApprovalStore;
  incidents?: Pick<IncidentStore, 'getIncident'>;
  registry?: Pick<QueueRegistry, 'getRegistration'>;
  /** @default process.env.SLACK_DEFAULT_CHANNEL */
  defaultChannel?: string | undefined;
  /** @default process.env.APPROVAL_TIMEOUT_SECONDS, else 3600 */
  timeoutSeconds?: number | undefined;
  /** Now, epoch milliseconds. @default Date.now */
  now?: () => number;
}

/** Builds the ports of {@link requestApproval}. */
export function requestApprovalDeps(wiring: RequestApprovalWiring): RequestApprovalDeps {
  const incidents = wiring.incidents ?? createIncidentStore();
  const registry = wiring.registry ?? createQueueRegistry();
  const envTimeout = Number(process.env.APPROVAL_TIMEOUT_SECONDS);
  return {
    approvals: wiring.approvals ?? createApprovalStore(),
    slack: wiring.slack,
    incidentSummary: async (incidentId) => (await incidents.getIncident(incidentId))?.summary ?? null,
    registration: (dlqArn) => registry.getRegistration(dlqArn),
    defaultChannel: wiring.defaultChannel ?? process.env.SLACK_DEFAULT_CHANNEL,
    timeoutSeconds:
      wiring.timeoutSeconds ?? (Number.isInteger(envTimeout) && envTimeout > 0 ? envTimeout : undefined),
    now: wiring.now ?? (() => Date.now()),
  };
}
