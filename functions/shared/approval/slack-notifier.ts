/**
 * The Slack {@link Notifier}: progress and the final report go into the incident's Slack thread
 * (`thread_ts` = the approval message's `ts`, remembered by request-approval in the approval
 * store). An incident without a thread yet (pre-approved console start, refusal before approval)
 * gets a new top-level message in the queue's channel, which becomes the thread for the rest.
 *
 * An `approval-expired` notification also replaces the approval request (its buttons) with
 * "approval expired, nothing was moved" and closes the approval record.
 *
 * An `alarm-cleared` notification (triage, the alarm went from ALARM back to OK) is posted
 * into the thread and, while the approval is still PENDING, the approval request is updated to say
 * "alarm cleared" with its Approve / Reject buttons kept and, when the approval record stored the
 * posted request, its summary, plan and warnings too. Nothing is closed or cancelled.
 *
 * Delivery problems are logged and handed to a fallback notifier (the log notifier), never thrown:
 * a Slack outage must not fail a redrive that already moved messages. Slack calls end by the
 * invocation's deadline and a long `Retry-After` is not waited for (slack-client.ts), so a
 * rate-limited notice falls back at once; it is kept on the incident (missed-notices.ts) and
 * the next message posted for the incident carries it.
 *
 * @see https://api.slack.com/methods/chat.postMessage#arg_thread_ts
 */

import { createIncidentStore } from '#incident/incident-store.js';
import { createMissedNotices, type MissedNotice, type MissedNotices } from '#incident/missed-notices.js';
import { createLogNotifier, type Notification, type Notifier } from '#incident/notifier.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { onResetClients, tableAccess } from '#platform/clients.js';
import { type PipelineConfig, pipelineConfig } from '#platform/config.js';
import { errorMessage } from '#platform/errors.js';
import { logger } from '#platform/middleware.js';
import { type ApprovalStore, createApprovalStore } from './approval-store.js';
import { createSlackApi, type SlackApi, slackApiOptions } from './slack-client.js';
import {
  alarmClearedApprovalMessage,
  approvalExpiredMessage,
  decidedMessage,
  parseStoredRequestMessage,
  threadNotice,
  withMissedNotices,
} from './slack-messages.js';
import { loadSlackSecrets } from './slack-secrets.js';

/** How long a thread pointer is kept after a top-level notice, seconds (30 days). */
const THREAD_TTL_SECONDS = 30 * 86_400;

/** Ports of {@link createSlackNotifier}. */
export interface SlackNotifierDeps {
  slack: Pick<SlackApi, 'postMessage' | 'updateMessage'>;
  threads: Pick<ApprovalStore, 'getThread' | 'putThread' | 'close' | 'get'>;
  /** The channel for an incident without a thread (its queue's `slackChannel`, or the default). */
  channelFor: (incidentId: string) => Promise<string | null>;
  /** Gets every notification that could not be delivered to Slack. @default the log notifier */
  fallback?: Notifier;
  /**
   * Keeps what went to `fallback` on the incident, so the next message posted carries it.
   * Absent: nothing is kept.
   */
  missed?: MissedNotices;
  /** Now, epoch milliseconds. */
  now: () => number;
}

/**
 * A notifier that posts into the incident's Slack thread.
 *
 * @returns a {@link Notifier} whose `notify` never throws (failures go to `fallback`).
 */
export function createSlackNotifier(deps: SlackNotifierDeps): Notifier {
  const fallback = deps.fallback ?? createLogNotifier();
  return {
    async notify(n) {
      let taken: MissedNotice[] = [];
      // What earlier notices missed rides on this one (taken once the destination is known).
      const messageWithMissed = async () => {
        taken = (await deps.missed?.take(n.incidentId)) ?? [];
        return withMissedNotices(threadNotice(n.kind, n.text, n.fields), taken);
      };
      try {
        const thread = await deps.threads.getThread(n.incidentId);
        if (thread) {
          const message = await messageWithMissed();
          if (n.kind === 'approval-expired' && thread.approvalId) {
            // Nobody answered within TimeoutSeconds. Take the buttons away and close the
            // approval, so a late click is answered "expired" without calling Step Functions.
            await deps.threads.close(thread.approvalId, 'task-timed-out', deps.now());
            await deps.slack.updateMessage(thread.channel, thread.ts, approvalExpiredMessage());
          }
          await deps.slack.postMessage(thread.channel, message, { threadTs: thread.ts });
          if (n.kind === 'alarm-cleared' && thread.approvalId)
            await annotateAlarmCleared(deps, thread, thread.approvalId, n);
          return;
        }
        const channel = await deps.channelFor(n.incidentId);
        if (!channel) {
          await fallback.notify(n);
          return;
        }
        const posted = await deps.slack.postMessage(channel, await messageWithMissed());
        await deps.threads.putThread(
          n.incidentId,
          posted,
          Math.floor(deps.now() / 1000) + THREAD_TTL_SECONDS,
        );
      } catch (error) {
        logger.warn('Slack notification failed; logging it instead', {
          incidentId: n.incidentId,
          kind: n.kind,
          error: errorMessage(error),
        });
        await fallback.notify(n);
        // Kept for the next Slack message: the ones this post would have carried, then this one.
        try {
          for (const missed of [...taken, { kind: n.kind, text: n.text, at: deps.now() }])
            await deps.missed?.keep(n.incidentId, missed);
        } catch (keepError) {
          logger.warn('could not keep the missed notice on the incident', {
            incidentId: n.incidentId,
            error: errorMessage(keepError),
          });
        }
      }
    },
  };
}

/**
 * Puts "alarm cleared" on an approval request still waiting for a click, keeping its buttons
 * and (rebuilt from the request stored in the approval record) its summary, plan and warnings.
 * A click between the read and the update would have its "Approved by ..." text overwritten by
 * buttons again, so the record is read once more and a decided request gets its decided text back.
 */
async function annotateAlarmCleared(
  deps: SlackNotifierDeps,
  thread: { channel: string; ts: string },
  approvalId: string,
  n: Notification,
): Promise<void> {
  const approval = await deps.threads.get(approvalId);
  if (approval?.status !== 'PENDING') return;
  const clearedAt =
    typeof n.fields.clearedAt === 'string' ? n.fields.clearedAt : new Date(deps.now()).toISOString();
  await deps.slack.updateMessage(
    thread.channel,
    thread.ts,
    alarmClearedApprovalMessage({
      approvalId,
      incidentId: n.incidentId,
      dlqArn: approval.dlqArn,
      clearedAt,
      // The request as posted (summary, plan, warnings); null on older records: note and buttons only.
      original: parseStoredRequestMessage(approval.requestMessage),
      postedAtMs: approval.createdAt,
    }),
  );
  const after = await deps.threads.get(approvalId);
  if (after && after.status !== 'PENDING' && after.decision && after.decidedBy)
    await deps.slack.updateMessage(
      thread.channel,
      thread.ts,
      decidedMessage(after.decision, after.decidedBy.username, after.decidedAt ?? deps.now()),
    );
}

/**
 * The notifier Notify, triage and execution-ended use: Slack when credentials are configured
 * (`SLACK_SECRET_ARN`, or `SLACK_BOT_TOKEN` locally), else the log notifier. The channel for an
 * incident without a thread is its queue's `slackChannel`, else `SLACK_DEFAULT_CHANNEL`.
 *
 * @param config - @default pipelineConfig()
 * @throws InvalidInputError from the Slack secret (see `loadSlackSecrets`).
 * @see https://api.slack.com/methods/chat.postMessage
 */
export async function notifierFromConfig(config: PipelineConfig = pipelineConfig()): Promise<Notifier> {
  const { slack } = config;
  if (!slack.secretArn && !slack.botToken) return createLogNotifier();
  const token = slack.botToken ?? (await loadSlackSecrets(slack)).botToken;
  const table = tableAccess(config);
  const incidents = createIncidentStore(table);
  const registry = createQueueRegistry(table);
  return createSlackNotifier({
    slack: createSlackApi(slackApiOptions(token, slack)),
    threads: createApprovalStore(table),
    missed: createMissedNotices(table),
    channelFor: async (incidentId) => {
      const incident = await incidents.getIncident(incidentId);
      const registered = incident
        ? (await registry.getRegistration(incident.dlqArn)).slackChannel
        : undefined;
      return registered ?? slack.defaultChannel ?? null;
    },
    now: () => Date.now(),
  });
}

let containerNotifier: Promise<Notifier> | undefined;
// Built from the configuration and the clients: forgotten with them (tests and local runs
// point the pipeline at other endpoints, another Slack API or another table).
onResetClients(() => {
  containerNotifier = undefined;
});

/**
 * {@link notifierFromConfig}, built once per Lambda container and reused across invocations (the
 * Slack secret is read once). A failed build (e.g. Secrets Manager unavailable) is not cached, so
 * the next invocation tries again.
 */
export function sharedNotifier(config: PipelineConfig = pipelineConfig()): Promise<Notifier> {
  containerNotifier ??= notifierFromConfig(config).catch((error: unknown) => {
    containerNotifier = undefined;
    throw error;
  });
  return containerNotifier;
}
