/**
 * Failure fingerprints and classification by rules that are data (see `classification-rules.ts`).
 */
import { createHash } from 'node:crypto';
import {
  type ClassificationRule,
  DEFAULT_RULES,
  INCIDENT_RULES,
  type IncidentRule,
  type RuleMatch,
} from './classification-rules.js';
import type { Classification } from './model.js';

/** Evidence about one message, as the rules see it. */
export interface MessageEvidence {
  errorClass?: string;
  errorMessage?: string;
  sourceKnown: boolean;
  bodyIsJson: boolean;
  receiveCount: number;
}

/** The outcome of classifying one message. */
export interface ClassificationResult {
  classification: Classification;
  reason: string;
  /** Id of the rule that matched, or null when none did. */
  ruleId: string | null;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const HEX = /\b(0x)?[0-9a-f]*\d[0-9a-f]*[a-f][0-9a-f]*\b|\b(0x)?[0-9a-f]*[a-f][0-9a-f]*\d[0-9a-f]*\b/gi;
const DIGITS = /\d+/g;

/**
 * Normalises a failure reason so that messages failing the same way group together: UUIDs, hex
 * ids (mixed letters and digits, e.g. request ids) and digit runs become placeholders, whitespace
 * is collapsed.
 *
 * @example normaliseReason('order 1234 not found (req 9f8e7d6c)') // 'order # not found (req <hex>)'
 */
export function normaliseReason(reason: string): string {
  return reason
    .replace(UUID, '<uuid>')
    .replace(HEX, '<hex>')
    .replace(DIGITS, '#')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Longest fingerprint, characters. A longer one keeps its first characters and ends in `#` and 16
 * hex digits of the SHA-256 of the whole, so distinct causes stay distinct while an incident
 * summary of `MAX_CAUSE_GROUPS` groups (summary.ts) stays far under DynamoDB's 400 KB item (and Step
 * Functions' 256 KiB payload) however long the consumers' reasons are.
 */
export const MAX_FINGERPRINT_CHARS = 512;

/**
 * The failure fingerprint: error class plus normalised reason, `'<none>'` for a missing part,
 * at most {@link MAX_FINGERPRINT_CHARS} characters. Messages with no failure reason at all share
 * the fingerprint `'<none>|<none>'`.
 */
export function fingerprint(errorClass: string | undefined, errorMessage: string | undefined): string {
  const whole = `${errorClass?.trim() || '<none>'}|${errorMessage ? normaliseReason(errorMessage) || '<none>' : '<none>'}`;
  if (whole.length <= MAX_FINGERPRINT_CHARS) return whole;
  const digest = createHash('sha256').update(whole).digest('hex').slice(0, 16);
  let keep = MAX_FINGERPRINT_CHARS - 17;
  const last = whole.charCodeAt(keep - 1);
  if (last >= 0xd800 && last <= 0xdbff) keep -= 1; // not half of a surrogate pair
  return `${whole.slice(0, keep)}#${digest}`;
}

const compiled = new Map<string, RegExp>();
function test(pattern: string | undefined, value: string | undefined): boolean {
  if (pattern === undefined) return true;
  if (value === undefined) return false;
  let re = compiled.get(pattern);
  if (!re) {
    re = new RegExp(pattern, 'i');
    compiled.set(pattern, re);
  }
  return re.test(value);
}

function matches(match: RuleMatch, e: MessageEvidence): boolean {
  const hasFailure = Boolean(e.errorClass || e.errorMessage);
  const anyError = hasFailure ? `${e.errorClass ?? ''}: ${e.errorMessage ?? ''}` : undefined;
  if (!test(match.errorClass, e.errorClass)) return false;
  if (!test(match.errorMessage, e.errorMessage)) return false;
  if (!test(match.anyError, anyError)) return false;
  if (match.hasFailureReason !== undefined && match.hasFailureReason !== hasFailure) return false;
  if (match.sourceKnown !== undefined && match.sourceKnown !== e.sourceKnown) return false;
  if (match.bodyIsJson !== undefined && match.bodyIsJson !== e.bodyIsJson) return false;
  if (match.minReceiveCount !== undefined && e.receiveCount < match.minReceiveCount) return false;
  return true;
}

/**
 * Classifies one message: the first matching rule wins; no match gives 'unknown'.
 *
 * @param evidence - what the consumer and SQS told us about the message.
 * @param rules - the rules (data); defaults to {@link DEFAULT_RULES}.
 */
export function classifyMessage(
  evidence: MessageEvidence,
  rules: readonly ClassificationRule[] = DEFAULT_RULES,
): ClassificationResult {
  for (const rule of rules) {
    if (matches(rule.match, evidence))
      return { classification: rule.classification, reason: rule.reason, ruleId: rule.id };
  }
  return { classification: 'unknown', reason: 'no rule matched the failure evidence', ruleId: null };
}

/** One fingerprint group as the incident rules see it. */
export interface FingerprintGroup {
  fingerprint: string;
  count: number;
  classification: Classification;
}

/**
 * Applies incident rules to the fingerprint groups of one DLQ. Returns the classification that
 * overrides every message's (e.g. 'systemic'), or null when no incident rule applies.
 */
export function classifyIncident(
  groups: readonly FingerprintGroup[],
  rules: readonly IncidentRule[] = INCIDENT_RULES,
): { classification: Classification; reason: string; ruleId: string } | null {
  const total = groups.reduce((n, g) => n + g.count, 0);
  const only = groups.length === 1 ? groups[0] : undefined;
  for (const rule of rules) {
    if (
      only &&
      only.fingerprint !== fingerprint(undefined, undefined) &&
      total >= rule.minMessages &&
      rule.fromClassifications.includes(only.classification)
    ) {
      return { classification: rule.classification, reason: rule.reason, ruleId: rule.id };
    }
  }
  return null;
}
