/**
 * ApprovalReminder's ports, from the pipeline configuration and the shared clients: the reminders
 * (approval records in the table) and the Slack client (bot token from `loadSlackSecrets`).
 */
import { createApprovalReminders, type RemindDeps } from '#approval/approval-reminders.js';
import { createSlackApi, slackApiOptions } from '#approval/slack-client.js';
import { loadSlackSecrets } from '#approval/slack-secrets.js';
import { tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';

/**
 * Builds the ports of `approvalReminder`; `options.overrides` replaces any of them (an overridden
 * `slack` skips loading the Slack secret).
 * @throws InvalidInputError from `loadSlackSecrets` when no Slack credentials are configured.
 */
export async function createApprovalReminderDeps(options: DepsOptions<RemindDeps> = {}): Promise<RemindDeps> {
  const config = options.config ?? pipelineConfig();
  const slack =
    options.overrides?.slack ??
    createSlackApi(slackApiOptions((await loadSlackSecrets(config.slack)).botToken, config.slack));
  return {
    reminders: createApprovalReminders(tableAccess(config)),
    slack,
    now: () => Date.now(),
    ...options.overrides,
  };
}
