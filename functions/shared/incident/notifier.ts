/**
 * The notifier port: how the workflow tells people what happened (docs/contracts.md "Stores").
 * The default {@link createLogNotifier} writes a structured log line; the Slack notifier implements
 * the same {@link Notifier} interface.
 *
 * @example
 * ```ts
 * const notifier: Notifier = createLogNotifier();
 * await notifier.notify({ incidentId: 'inc-1', kind: 'refused', text: 'redrive refused: ...', fields: {} });
 * ```
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
 */

import { RecordNotFoundError } from '#platform/errors.js';
import { logger } from '#platform/middleware.js';
import type { IncidentStatus, IncidentStore } from './incident-store.js';

/** Outcomes of a redrive run, as the ASL's Pass states write them to `$.outcome`. */
export const REDRIVE_OUTCOMES = [
  'completed',
  'sample-only',
  'dry-run',
  'nothing-to-redrive',
  'refused',
  'rejected',
  'approval-expired',
  'sample-failed',
  'halted',
  'cancelled',
  // The inventory was a sample (the DLQ deeper than it could hold): parked and sampled messages
  // are done, the bulk move is refused (docs/contracts.md "Messages triage could not see").
  'bulk-move-refused',
  'failed',
] as const;
export type RedriveOutcome = (typeof REDRIVE_OUTCOMES)[number];

/**
 * Notices that are not run outcomes: triage's (`unresolvable-alarm`, `partial-inventory`,
 * `systemic`) and `alarm-cleared`, which triage sends to each incident of an alarm that went from
 * ALARM back to OK. The Slack notifier posts it into the incident's thread and annotates a
 * still-pending approval request, keeping its buttons. `execution-ended`: functions/execution-ended
 * saw a run end ABORTED, TIMED_OUT or FAILED (without Notify/RecordFailure releasing its workflow
 * lease) and says whether it released the lease. `composite-children-skipped`: triage followed a
 * composite alarm's triggering children and names the ones it did not triage, with why (not in
 * ALARM, not a DLQ alarm, not a DLQ, gone). `kms-key-unusable`: SQS could not use a queue's KMS
 * key for the pipeline (queue, key, KMS action and SQS's error in the text and fields).
 */
export const NOTICE_KINDS = [
  'unresolvable-alarm',
  'partial-inventory',
  'systemic',
  'alarm-cleared',
  'execution-ended',
  'composite-children-skipped',
  'kms-key-unusable',
] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];

/** One notification. `fields` are short label/value pairs (counts, ids), never message bodies. */
export interface Notification {
  incidentId: string;
  /** The outcome, or another event name such as `approval-requested`. */
  kind: RedriveOutcome | NoticeKind | (string & {});
  /** One or two sentences a person on call can act on. */
  text: string;
  fields: Record<string, string | number | boolean | null>;
}

/** Where notifications go. Implementations must not throw for a delivery problem they can log. */
export interface Notifier {
  notify(notification: Notification): Promise<void>;
}

/**
 * A notifier that writes one JSON log line per notification (level WARN for outcomes a person must
 * look at, INFO otherwise). The default when no Slack notifier is configured.
 */
export function createLogNotifier(log: Pick<typeof logger, 'info' | 'warn'> = logger): Notifier {
  const attention = new Set<string>(['refused', 'approval-expired', 'sample-failed', 'halted', 'failed']);
  return {
    async notify(n) {
      const line = { incidentId: n.incidentId, kind: n.kind, fields: n.fields };
      if (attention.has(n.kind)) log.warn(n.text, line);
      else log.info(n.text, line);
    },
  };
}

/**
 * The incident's status once a run ended with `outcome`: `CLOSED` when every message is settled
 * (`completed`, `nothing-to-redrive`), `FAILED` for `failed`, `STOPPED` for every other end (a
 * person or a guard stopped it with messages left in the DLQ). A dry run changes nothing, so it
 * leaves the status as it was (`undefined`).
 */
export function statusAfterRun(outcome: RedriveOutcome | (string & {})): IncidentStatus | undefined {
  if (outcome === 'dry-run') return undefined;
  if (outcome === 'completed' || outcome === 'nothing-to-redrive') return 'CLOSED';
  return outcome === 'failed' ? 'FAILED' : 'STOPPED';
}

/** The part of the incident store the workflow writes its results with. */
export type RunRecorder = Pick<IncidentStore, 'updateIncident'>;

/**
 * Writes workflow results onto the incident as extra top-level fields (`reconcile`, `outcome`,
 * `outcomeText`, `ramp`...), next to triage's own fields. A run started from the console without
 * triage has no incident: that is logged, not an error.
 *
 * @throws whatever the store throws other than "incident does not exist".
 */
export async function recordRunOnIncident(
  incidents: RunRecorder,
  incidentId: string,
  fields: Record<string, unknown>,
): Promise<boolean> {
  try {
    // The incident item is open to extra attributes; its TypeScript type lists triage's fields only.
    await incidents.updateIncident(incidentId, fields as Parameters<RunRecorder['updateIncident']>[1]);
    return true;
  } catch (error) {
    if (error instanceof RecordNotFoundError) {
      logger.info('no incident record to update (console start without triage?)', { incidentId });
      return false;
    }
    throw error;
  }
}
