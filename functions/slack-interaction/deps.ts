/**
 * The Slack interaction's ports, from the pipeline configuration and the shared clients: one set
 * for the Function URL request (verify, decide, ack, defer), which reads the signing secret
 * through `loadSlackSecrets` (once per container), and one for the deferred follow-up (callback,
 * `response_url` update), which needs no Slack credentials: it only answers `response_url`s, so
 * this function bundles no Slack Web API client.
 */
import { createApprovalStore } from '#approval/approval-store.js';
import { createRampProgressStore } from '#approval/ramp-progress-store.js';
import { createResponseUrlPoster } from '#approval/slack-response-url.js';
import { loadSlackSecrets } from '#approval/slack-secrets.js';
import { createAuditTrail } from '#incident/audit-trail.js';
import { createCancelRequests } from '#incident/cancel-requests.js';
import { lambdaClient, sfnClient, tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { createLambdaInvoker } from '#platform/lambda-invoke.js';
import { lambdaDefer } from './defer.js';
import type { AcknowledgeDeps, FollowUpDeps } from './interaction.js';
import { createTaskCallbacks } from './task-callbacks.js';

/**
 * Builds the ports of `acknowledgeInteraction`; `options.overrides` replaces any of them. The
 * follow-up is deferred by an async self-invocation of `AWS_LAMBDA_FUNCTION_NAME`.
 *
 * @throws InvalidInputError from `loadSlackSecrets` when no Slack credentials are configured.
 */
export async function createAcknowledgeDeps(
  options: DepsOptions<AcknowledgeDeps> = {},
): Promise<AcknowledgeDeps> {
  const config = options.config ?? pipelineConfig();
  const signingSecret =
    options.overrides?.signingSecret ?? (await loadSlackSecrets(config.slack)).signingSecret;
  return {
    signingSecret,
    approvals: createApprovalStore(tableAccess(config)),
    defer: lambdaDefer(createLambdaInvoker(lambdaClient), config.functionName ?? 'slack-interaction'),
    now: () => Date.now(),
    allowedResponseUrlPrefixes: config.slack.responseUrlPrefixes,
    cancels: {
      progress: createRampProgressStore(tableAccess(config)),
      requests: createCancelRequests(tableAccess(config)),
      audit: createAuditTrail(tableAccess(config)),
    },
    ...options.overrides,
  };
}

/** Builds the ports of `runFollowUp`; `options.overrides` replaces any of them. */
export async function createFollowUpDeps(options: DepsOptions<FollowUpDeps> = {}): Promise<FollowUpDeps> {
  const config = options.config ?? pipelineConfig();
  return {
    approvals: createApprovalStore(tableAccess(config)),
    slack: createResponseUrlPoster({ allowedResponseUrlPrefixes: config.slack.responseUrlPrefixes }),
    callbacks: createTaskCallbacks(sfnClient()),
    now: () => Date.now(),
    audit: createAuditTrail(tableAccess(config)),
    ...options.overrides,
  };
}
