/**
 * Ramp progress in Slack while a run moves messages (runs last up to 36 h): after every MoveTask
 * action the reporter folds the gate's measurement into the run's progress record and keeps ONE
 * message in the incident's thread up to date (`chat.postMessage` once, then `chat.update` in
 * place), with a Cancel button for the queue's approvers (slack-interaction verifies a click like
 * an Approve: signature, approver, first request wins, and records the cancel request the next
 * gate reads).
 *
 * **Within Slack's rate limits.** `chat.update` is a Tier 3 method (about 50 calls a minute per
 * app and workspace) and `chat.postMessage` allows about one message a second per channel. A run
 * posts one message, then updates it at most once per {@link ROUTINE_UPDATE_INTERVAL_MS} (30 s)
 * for routine checks; a new step, the ramp's end or a cancel request is shown at once, but never
 * sooner than {@link MIN_UPDATE_INTERVAL_MS} after the previous call. So one run makes at most
 * about 2 routine updates a minute plus one per ramp step (at most 10) and one at the end: about 20
 * runs at once stay under Tier 3. A skipped update loses nothing: the record holds every step, and
 * the next update shows it.
 *
 * The record, `INCIDENT#<incidentId>` / `SLACK#PROGRESS#<executionName>`, holds the message's
 * channel and `ts`, the approvers (from the queue registration when the ramp starts), the steps
 * and when Slack was last called; it expires (TTL) 30 days after the last update.
 *
 * Never throws: a Slack or table problem is logged and the ramp goes on.
 *
 * @see https://api.slack.com/methods/chat.update (Tier 3)
 * @see https://api.slack.com/apis/rate-limits
 */

import { type ApprovalStore, createApprovalStore } from '#approval/approval-store.js';
import { rampProgressMessage } from '#approval/ramp-progress-message.js';
import {
  createRampProgressStore,
  progressView,
  type RampProgressRecord,
  type RampProgressStore,
  type StoredStep,
} from '#approval/ramp-progress-store.js';
import { createSlackApi, type SlackApi, slackApiOptions } from '#approval/slack-client.js';
import { loadSlackSecrets } from '#approval/slack-secrets.js';
import { type CancelRequests, createCancelRequests } from '#incident/cancel-requests.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { onResetClients, tableAccess } from '#platform/clients.js';
import { type PipelineConfig, pipelineConfig } from '#platform/config.js';
import { errorMessage } from '#platform/errors.js';
import { logger } from '#platform/middleware.js';
import { exposureBoundOf } from '#platform/reasons.js';
import { sleep as realSleep } from '#platform/sleep.js';

/** Least time between two Slack calls on one progress message, milliseconds. */
export const MIN_UPDATE_INTERVAL_MS = 1_200;
/** Least time between two routine updates (same step, same state), milliseconds. */
export const ROUTINE_UPDATE_INTERVAL_MS = 30_000;
/** How long a progress record is kept after its last update, seconds (30 days). */
const PROGRESS_TTL_SECONDS = 30 * 86_400;
/** Ramp decisions after which the ramp has ended. */
const ENDED = new Set(['done', 'halt', 'refuse', 'cancelled']);

/** The gate's measurement the reporter reads (a subset of MoveTask's `$.ramp`). */
export interface RampMeasurement {
  decision: string;
  rateIndex: number;
  rate: number;
  movedBefore: number;
  moved: number;
  baseline: number | null;
  reinflow: number;
  excess: number;
  reason: string;
  exposurePeak?: unknown;
}

/** One report: which run, its plan's step count, the measurement. */
export interface RampProgressReport {
  incidentId: string;
  executionName: string;
  dlqArn: string;
  plannedSteps: number;
  ramp: RampMeasurement;
}

/** The progress port MoveTask's handler calls after every action. */
export interface RampProgressReporter {
  /** Never throws (see the module comment). @returns what was done, for logs and tests. */
  report(report: RampProgressReport): Promise<'posted' | 'updated' | 'skipped' | 'no-thread' | 'failed'>;
}

/** Ports of {@link createRampProgressReporter}. */
export interface RampProgressDeps {
  slack: Pick<SlackApi, 'postMessage' | 'updateMessage'>;
  store: RampProgressStore;
  threads: Pick<ApprovalStore, 'getThread' | 'putThread'>;
  cancelRequests: Pick<CancelRequests, 'get'>;
  /**
   * The queue registration's Slack approvers and channel, read when the ramp starts (the channel
   * is used when the incident has no thread yet: a pre-approved start).
   */
  registrationFor: (dlqArn: string) => Promise<{ approvers: string[]; slackChannel: string | null }>;
  /** Now, epoch milliseconds. */
  now: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** Folds one measurement into the record's steps (a new rate index starts a new step). */
export function foldStep(steps: readonly StoredStep[], ramp: RampMeasurement, at: number): StoredStep[] {
  const total = ramp.movedBefore + ramp.moved;
  const last = steps.at(-1);
  const next = [...steps];
  if (!last || last.rateIndex !== ramp.rateIndex) {
    // What the previous step's task moved after its last check is in movedBefore now.
    if (last)
      next[next.length - 1] = { ...last, moved: Math.max(last.moved, ramp.movedBefore - last.movedAtStart) };
    next.push({
      rateIndex: ramp.rateIndex,
      rate: ramp.rate,
      movedAtStart: last ? Math.max(ramp.movedBefore, last.movedAtStart + last.moved) : 0,
      moved: 0,
      reinflow: 0,
      excess: 0,
      startedAt: at,
      updatedAt: at,
    });
  }
  const current = next.at(-1) as StoredStep;
  next[next.length - 1] = {
    ...current,
    rate: ramp.rate,
    moved: Math.max(current.moved, total - current.movedAtStart),
    reinflow: ramp.reinflow,
    excess: Math.max(0, ramp.excess),
    updatedAt: at,
  };
  return next;
}

/**
 * When the next Slack call may happen. A first post: at once. A significant change (a new step,
 * the ramp's end, a cancel request to show): `MIN_UPDATE_INTERVAL_MS` after the last call, and
 * the reporter waits for it. A routine change: `ROUTINE_UPDATE_INTERVAL_MS` after the last call,
 * else skipped. Null: nothing changed that Slack should see.
 */
export function nextSlackCall(
  before: RampProgressRecord | null,
  after: RampProgressRecord,
): { at: number; significant: boolean } | null {
  if (!before?.ts) return { at: 0, significant: true };
  if (
    after.cancelShown !== before.cancelShown ||
    after.ended !== before.ended ||
    after.steps.length !== before.steps.length
  )
    return { at: before.slackAt + MIN_UPDATE_INTERVAL_MS, significant: true };
  const changed =
    after.moved !== before.moved ||
    after.decision !== before.decision ||
    after.reason !== before.reason ||
    JSON.stringify(after.steps.at(-1)) !== JSON.stringify(before.steps.at(-1));
  return changed ? { at: before.slackAt + ROUTINE_UPDATE_INTERVAL_MS, significant: false } : null;
}

/**
 * The Slack progress reporter.
 * @see https://api.slack.com/methods/chat.update
 */
export function createRampProgressReporter(deps: RampProgressDeps): RampProgressReporter {
  const sleep = deps.sleep ?? realSleep;
  return {
    async report(report) {
      try {
        const now = deps.now();
        const before = await deps.store.get(report.incidentId, report.executionName);
        const thread = before?.channel ? null : await deps.threads.getThread(report.incidentId);
        const registration = before ? null : await deps.registrationFor(report.dlqArn);
        const channel = before?.channel ?? thread?.channel ?? registration?.slackChannel ?? null;
        if (!channel) return 'no-thread';
        const { ramp } = report;
        const ended = before?.ended === true || ENDED.has(ramp.decision);
        const after: RampProgressRecord = {
          incidentId: report.incidentId,
          executionName: report.executionName,
          dlqArn: report.dlqArn,
          channel,
          ts: before?.ts ?? null,
          approvers: before?.approvers ?? registration?.approvers ?? [],
          steps: before?.ended ? before.steps : foldStep(before?.steps ?? [], ramp, now),
          plannedSteps: report.plannedSteps,
          moved: Math.max(before?.moved ?? 0, ramp.movedBefore + ramp.moved),
          toMove: ramp.baseline ?? before?.toMove ?? null,
          decision: before?.ended ? before.decision : ramp.decision,
          reason: before?.ended ? before.reason : ramp.reason,
          exposure: before?.ended ? (before.exposure ?? null) : exposureBoundOf(ramp),
          ended,
          slackAt: before?.slackAt ?? 0,
          cancelShown: false,
          expiresAt: Math.floor(now / 1000) + PROGRESS_TTL_SECONDS,
        };
        // A click between the gate's read and this update must not get its button back.
        const request = await deps.cancelRequests.get(report.incidentId, report.executionName);
        const cancel = request ? { by: request.by, via: request.via, at: request.at } : null;
        after.cancelShown = cancel !== null;
        const call = nextSlackCall(before, after);
        if (call === null || (!call.significant && call.at > now)) {
          await deps.store.put({ ...after, cancelShown: before?.cancelShown ?? false });
          return 'skipped';
        }
        if (call.at > now) await sleep(call.at - now);
        const at = deps.now();
        const message = rampProgressMessage(progressView(after, cancel, at));
        let outcome: 'posted' | 'updated';
        if (after.ts) {
          await deps.slack.updateMessage(channel, after.ts, message);
          outcome = 'updated';
        } else {
          const posted = await deps.slack.postMessage(
            channel,
            message,
            thread ? { threadTs: thread.ts } : {},
          );
          after.ts = posted.ts;
          after.channel = posted.channel;
          // No thread yet (a pre-approved start): this message becomes it, for Notify's report.
          if (!thread)
            await deps.threads.putThread(
              report.incidentId,
              posted,
              Math.floor(now / 1000) + PROGRESS_TTL_SECONDS,
            );
          outcome = 'posted';
        }
        await deps.store.put({ ...after, slackAt: at });
        return outcome;
      } catch (error) {
        logger.warn('Slack ramp progress failed; the ramp goes on', {
          incidentId: report.incidentId,
          executionName: report.executionName,
          error: errorMessage(error),
        });
        return 'failed';
      }
    },
  };
}

/**
 * The reporter MoveTask uses: Slack when credentials are configured (`SLACK_SECRET_ARN`, or
 * `SLACK_BOT_TOKEN` locally), else none (null): progress is then only in `$.ramp`, the logs and
 * the metrics. Built once per Lambda container; a failed build is not cached.
 *
 * @param config - @default pipelineConfig()
 */
export function sharedRampProgress(
  config: PipelineConfig = pipelineConfig(),
): Promise<RampProgressReporter | null> {
  containerReporter ??= (async () => {
    const { slack } = config;
    if (!slack.secretArn && !slack.botToken) return null;
    const token = slack.botToken ?? (await loadSlackSecrets(slack)).botToken;
    const table = tableAccess(config);
    const registry = createQueueRegistry(table);
    return createRampProgressReporter({
      slack: createSlackApi(slackApiOptions(token, slack)),
      store: createRampProgressStore(table),
      threads: createApprovalStore(table),
      cancelRequests: createCancelRequests(table),
      registrationFor: async (dlqArn) => {
        const registration = await registry.getRegistration(dlqArn);
        return {
          approvers: registration.approvers ?? [],
          slackChannel: registration.slackChannel ?? slack.defaultChannel ?? null,
        };
      },
      now: () => Date.now(),
    });
  })().catch((error: unknown) => {
    containerReporter = undefined;
    throw error;
  });
  return containerReporter;
}

let containerReporter: Promise<RampProgressReporter | null> | undefined;
// Built from the configuration and the clients: forgotten with them (see resetClients).
onResetClients(() => {
  containerReporter = undefined;
});

/**
 * Reports one MoveTask result to Slack (see {@link sharedRampProgress}); never throws.
 *
 * @param plan - the run's plan (`incidentId`, `dlqArn`, `rampRates`).
 */
export async function reportRampProgress(
  plan: { incidentId: string; dlqArn: string; rampRates: readonly number[] },
  executionName: string,
  ramp: RampMeasurement,
): Promise<void> {
  try {
    const reporter = await sharedRampProgress();
    await reporter?.report({
      incidentId: plan.incidentId,
      executionName,
      dlqArn: plan.dlqArn,
      plannedSteps: plan.rampRates.length,
      ramp,
    });
  } catch (error) {
    logger.warn('Slack ramp progress unavailable; the ramp goes on', { error: errorMessage(error) });
  }
}
