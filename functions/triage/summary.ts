/**
 * The incident summary (model.ts `IncidentSummary`): counts, counts per source queue, causes
 * grouped by failure fingerprint with one example each, classification counts, oldest age,
 * earliest retention deadline and how many messages expire within 24 h.
 */
import { classifyIncident } from '#inventory/classification.js';
import type { IncidentRule } from '#inventory/classification-rules.js';
import type { CauseGroup, Classification, Envelope, IncidentSummary } from '#inventory/model.js';
import { expiresWithin } from '#inventory/retention.js';

/** A summary plus the incident rule that overrode message classifications, if any. */
export interface SummaryResult {
  summary: IncidentSummary;
  /** Set when an incident rule (e.g. systemic: every message fails the same way) applied. */
  incidentClassification: { classification: Classification; reason: string; ruleId: string } | null;
}

const EMPTY_COUNTS = (): Record<Classification, number> => ({
  transient: 0,
  permanent: 0,
  poison: 0,
  systemic: 0,
  unknown: 0,
});

/**
 * Summarises the envelopes of one DLQ.
 *
 * @param now - epoch milliseconds (ages and the 24 h window are measured from it).
 * @param partial - true when the inventory stopped early.
 */
export function summarise(
  envelopes: readonly Envelope[],
  options: { now: number; partial: boolean; incidentRules?: readonly IncidentRule[] },
): SummaryResult {
  const groups = new Map<string, CauseGroup>();
  const countBySource: Record<string, number> = {};
  let oldestSent: number | null = null;
  let earliest: number | null = null;
  let expiring = 0;
  for (const e of envelopes) {
    countBySource[e.sourceArn] = (countBySource[e.sourceArn] ?? 0) + 1;
    const group = groups.get(e.failure.fingerprint);
    if (group) group.count++;
    else
      groups.set(e.failure.fingerprint, {
        fingerprint: e.failure.fingerprint,
        errorClass: e.failure.errorClass ?? '<none>',
        count: 1,
        classification: e.classification,
        exampleMessageId: e.messageId,
        exampleReason: e.failure.errorMessage ?? '(no failure reason attached by the consumer)',
      });
    if (e.sentAt > 0 && (oldestSent === null || e.sentAt < oldestSent)) oldestSent = e.sentAt;
    if (earliest === null || e.retentionDeadline < earliest) earliest = e.retentionDeadline;
    if (expiresWithin(e.retentionDeadline, options.now)) expiring++;
  }
  const causes = [...groups.values()].sort(
    (a, b) => b.count - a.count || a.fingerprint.localeCompare(b.fingerprint),
  );
  const incidentClassification = classifyIncident(causes, options.incidentRules);
  const countByClassification = EMPTY_COUNTS();
  if (incidentClassification) {
    for (const c of causes) c.classification = incidentClassification.classification;
    countByClassification[incidentClassification.classification] = envelopes.length;
  } else {
    for (const e of envelopes) countByClassification[e.classification]++;
  }
  return {
    summary: {
      messageCount: envelopes.length,
      countBySource,
      causes,
      countByClassification,
      oldestMessageAgeMs: oldestSent === null ? null : Math.max(0, options.now - oldestSent),
      oldestSentAt: oldestSent,
      earliestRetentionDeadline: earliest,
      expiringWithin24h: expiring,
      partial: options.partial,
    },
    incidentClassification,
  };
}
