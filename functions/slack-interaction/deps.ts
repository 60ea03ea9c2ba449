/**
 * The Slack interaction's ports, from the pipeline configuration and the shared clients: one set
 * for the Function URL request (verify, decide, ack, defer), one for the deferred follow-up
 * (callback, `response_url` update). Both read the Slack credentials through `loadSlackSecrets`
 * (once per container).
 */
import { createApprovalStore } from '#approval/approval-store.js';
import { createSlackApi, loadSlackSecrets, slackApiOptions } from '#approval/slack-client.js';
import { lambdaClient, sfnClient, tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
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
    defer: lambdaDefer(lambdaClient(), config.functionName ?? 'slack-interaction'),
    now: () => Date.now(),
    allowedResponseUrlPrefixes: config.slack.responseUrlPrefixes,
    ...options.overrides,
  };
}

/**
 * Builds the ports of `runFollowUp`; `options.overrides` replaces any of them.
 *
 * @throws InvalidInputError from `loadSlackSecrets` when no Slack credentials are configured.
 */
export async function createFollowUpDeps(options: DepsOptions<FollowUpDeps> = {}): Promise<FollowUpDeps> {
  const config = options.config ?? pipelineConfig();
  const slack =
    options.overrides?.slack ??
    createSlackApi(slackApiOptions((await loadSlackSecrets(config.slack)).botToken, config.slack));
  return {
    approvals: createApprovalStore(tableAccess(config)),
    slack,
    callbacks: createTaskCallbacks(sfnClient()),
    now: () => Date.now(),
    ...options.overrides,
  };
}
