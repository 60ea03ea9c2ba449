/**
 * The incident summary (model.ts `IncidentSummary`): counts, counts per source queue, causes
 * grouped by failure fingerprint with one example each, classification counts, oldest age,
 * earliest retention deadline and how many messages expire within 24 h.
 *
 * An inventory that runs over several invocations (docs/triage.md "Inventory on the engine") cannot
 * keep every envelope until the end, so the summary is built from a {@link PartialSummary}: a small
 * JSON value that each invocation adds its envelopes to ({@link addToSummary}), that is stored
 * between invocations and merged ({@link mergeSummaries}), and that {@link finishSummary} turns into
 * the incident summary. Its size does not grow with the DLQ: at most {@link MAX_CAUSE_GROUPS}
 * fingerprint groups are kept (the rest are counted in one `<other causes>` group) and example
 * reasons are cut to {@link EXAMPLE_REASON_CHARS} characters.
 */
import { classifyIncident } from './classification.js';
import type { IncidentRule } from './classification-rules.js';
import type { CauseGroup, Classification, Envelope, IncidentSummary } from './model.js';
import { expiresWithin } from './retention.js';

/** A summary plus the incident rule that overrode message classifications, if any. */
export interface SummaryResult {
  summary: IncidentSummary;
  /** Set when an incident rule (e.g. systemic: every message fails the same way) applied. */
  incidentClassification: { classification: Classification; reason: string; ruleId: string } | null;
}

/** Fingerprint groups a partial summary keeps; the rest are counted in one `<other causes>` group. */
export const MAX_CAUSE_GROUPS = 100;
/** Characters of a group's example reason a partial summary keeps. */
export const EXAMPLE_REASON_CHARS = 500;
/** The fingerprint of the group that counts the causes beyond {@link MAX_CAUSE_GROUPS}. */
export const OTHER_CAUSES = '<other causes>';

/** The mergeable state of a summary (JSON; stored between invocations of one inventory). */
export interface PartialSummary {
  messageCount: number;
  countBySource: Record<string, number>;
  causes: CauseGroup[];
  /** Each message's own classification (before any incident rule). */
  countByClassification: Record<Classification, number>;
  /** Oldest SentTimestamp, epoch milliseconds. */
  oldestSentAt: number | null;
  earliestRetentionDeadline: number | null;
  /** Messages whose deadline was less than 24 h away when they were inventoried. */
  expiringWithin24h: number;
}

const EMPTY_COUNTS = (): Record<Classification, number> => ({
  transient: 0,
  permanent: 0,
  poison: 0,
  systemic: 0,
  unknown: 0,
});

/** A summary of no message. */
export function emptySummary(): PartialSummary {
  return {
    messageCount: 0,
    countBySource: {},
    causes: [],
    countByClassification: EMPTY_COUNTS(),
    oldestSentAt: null,
    earliestRetentionDeadline: null,
    expiringWithin24h: 0,
  };
}

const minOf = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));

/** Adds `count` messages of one cause group to `causes`, within {@link MAX_CAUSE_GROUPS}. */
function addCause(causes: CauseGroup[], group: CauseGroup): void {
  const same = causes.find((c) => c.fingerprint === group.fingerprint);
  if (same) {
    same.count += group.count;
    return;
  }
  const room = causes.filter((c) => c.fingerprint !== OTHER_CAUSES).length < MAX_CAUSE_GROUPS;
  if (room && group.fingerprint !== OTHER_CAUSES) {
    causes.push({ ...group, exampleReason: group.exampleReason.slice(0, EXAMPLE_REASON_CHARS) });
    return;
  }
  const other = causes.find((c) => c.fingerprint === OTHER_CAUSES);
  if (other) other.count += group.count;
  else
    causes.push({
      fingerprint: OTHER_CAUSES,
      errorClass: '<many>',
      count: group.count,
      classification: 'unknown',
      exampleMessageId: group.exampleMessageId,
      exampleReason: `more than ${MAX_CAUSE_GROUPS} distinct failure fingerprints`,
    });
}

/**
 * Adds one envelope to a partial summary (in place) and returns it.
 * @param now - epoch milliseconds: the 24 h expiry window is measured from it.
 */
export function addToSummary(partial: PartialSummary, e: Envelope, now: number): PartialSummary {
  partial.messageCount += 1;
  // A message of an SNS, EventBridge or Lambda origin counts under its topic, bus or function.
  const origin = e.origin && e.origin.kind !== 'sqs' ? e.origin.arn : null;
  const source = e.sourceArn === 'unknown' && origin ? origin : e.sourceArn;
  partial.countBySource[source] = (partial.countBySource[source] ?? 0) + 1;
  addCause(partial.causes, {
    fingerprint: e.failure.fingerprint,
    errorClass: e.failure.errorClass ?? '<none>',
    count: 1,
    classification: e.classification,
    exampleMessageId: e.messageId,
    exampleReason: e.failure.errorMessage ?? '(no failure reason attached by the consumer)',
  });
  partial.countByClassification[e.classification] += 1;
  if (e.sentAt > 0) partial.oldestSentAt = minOf(partial.oldestSentAt, e.sentAt);
  partial.earliestRetentionDeadline = minOf(partial.earliestRetentionDeadline, e.retentionDeadline);
  if (expiresWithin(e.retentionDeadline, now)) partial.expiringWithin24h += 1;
  return partial;
}

/** `a` and `b` together, as a new partial summary (neither is changed). */
export function mergeSummaries(a: PartialSummary, b: PartialSummary): PartialSummary {
  const merged = emptySummary();
  for (const part of [a, b]) {
    merged.messageCount += part.messageCount;
    for (const [source, n] of Object.entries(part.countBySource))
      merged.countBySource[source] = (merged.countBySource[source] ?? 0) + n;
    for (const cause of part.causes) addCause(merged.causes, { ...cause });
    for (const [c, n] of Object.entries(part.countByClassification))
      merged.countByClassification[c as Classification] += n;
    merged.oldestSentAt = minOf(merged.oldestSentAt, part.oldestSentAt);
    merged.earliestRetentionDeadline = minOf(
      merged.earliestRetentionDeadline,
      part.earliestRetentionDeadline,
    );
    merged.expiringWithin24h += part.expiringWithin24h;
  }
  return merged;
}

/**
 * The incident summary of a partial summary: causes sorted by count, the incident rules applied
 * (an incident rule such as `systemic` overrides every message's classification).
 *
 * @param options.now - epoch milliseconds (the oldest message's age is measured from it).
 * @param options.partial - true when the inventory stopped early.
 */
export function finishSummary(
  partial: PartialSummary,
  options: { now: number; partial: boolean; incidentRules?: readonly IncidentRule[] },
): SummaryResult {
  const causes = partial.causes
    .map((c) => ({ ...c }))
    .sort((a, b) => b.count - a.count || a.fingerprint.localeCompare(b.fingerprint));
  const incidentClassification = classifyIncident(causes, options.incidentRules);
  let countByClassification = { ...partial.countByClassification };
  if (incidentClassification) {
    for (const c of causes) c.classification = incidentClassification.classification;
    countByClassification = EMPTY_COUNTS();
    countByClassification[incidentClassification.classification] = partial.messageCount;
  }
  return {
    summary: {
      messageCount: partial.messageCount,
      countBySource: { ...partial.countBySource },
      causes,
      countByClassification,
      oldestMessageAgeMs:
        partial.oldestSentAt === null ? null : Math.max(0, options.now - partial.oldestSentAt),
      earliestRetentionDeadline: partial.earliestRetentionDeadline,
      expiringWithin24h: partial.expiringWithin24h,
      partial: options.partial,
    },
    incidentClassification,
  };
}

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
  const partial = emptySummary();
  for (const e of envelopes) addToSummary(partial, e, options.now);
  return finishSummary(partial, options);
}
