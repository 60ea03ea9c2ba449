/**
 * Classification rules, as data (DESIGN.md "Classify by evidence, not by count").
 *
 * Each rule matches evidence about one message; the first matching rule wins. Patterns are
 * case-insensitive regular-expression sources, so rules can be loaded from JSON configuration.
 * {@link INCIDENT_RULES} look at the whole DLQ (systemic: every message fails the same way).
 */
import type { Classification } from './model.js';

/** What a message rule can look at. Every given field must match. */
export interface RuleMatch {
  /** Regex source tested against the consumer's error class. */
  errorClass?: string;
  /** Regex source tested against the consumer's error message. */
  errorMessage?: string;
  /** Regex source tested against `errorClass + ': ' + errorMessage`. */
  anyError?: string;
  /** True: the consumer attached a failure reason; false: it did not. */
  hasFailureReason?: boolean;
  /** True: SQS reported a DeadLetterQueueSourceArn; false: it did not (sent straight to the DLQ). */
  sourceKnown?: boolean;
  /** True: the body (or the SNS payload) parses as JSON; false: it does not. */
  bodyIsJson?: boolean;
  /** Minimum ApproximateReceiveCount. */
  minReceiveCount?: number;
}

/** One classification rule. */
export interface ClassificationRule {
  id: string;
  match: RuleMatch;
  classification: Classification;
  /** Shown in the summary and the approval message. */
  reason: string;
}

/** The default message rules; first match wins; nothing matched = 'unknown'. */
export const DEFAULT_RULES: readonly ClassificationRule[] = [
  {
    id: 'credentials-or-endpoint',
    match: {
      anyError:
        'AccessDenied|Unauthori[sz]ed|Forbidden|InvalidClientTokenId|ExpiredToken|UnrecognizedClient|SignatureDoesNotMatch|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|getaddrinfo|certificate|CERT_',
    },
    classification: 'systemic',
    reason: 'credentials or endpoint failure: every message will fail the same way until it is fixed',
  },
  {
    id: 'consumer-crash',
    match: {
      anyError:
        'OutOfMemory|heap out of memory|StackOverflow|Maximum call stack|Runtime\\.ExitError|Runtime\\.OutOfMemory|Task timed out|SIGKILL|segmentation fault',
    },
    classification: 'poison',
    reason: 'the message crashes or times out the consumer',
  },
  {
    id: 'bad-payload',
    match: {
      anyError:
        'SyntaxError|JSON|Validation|Schema|Unmarshal|Deserializ|Malformed|Invalid(Payload|Message|Format|Argument)|TypeError|Unprocessable|\\b4(00|22)\\b',
    },
    classification: 'permanent',
    reason: 'the payload is rejected by the consumer: redriving it unchanged will fail again',
  },
  {
    id: 'throttle-or-timeout',
    match: {
      anyError:
        'Throttl|TooManyRequests|Rate ?exceeded|ProvisionedThroughputExceeded|ETIMEDOUT|ECONNRESET|EPIPE|socket hang up|Timeout|ServiceUnavailable|\\b5(00|02|03|04)\\b|Deadlock|LockTimeout|Unavailable',
    },
    classification: 'transient',
    reason: 'a dependency was slow or throttled: a redrive after recovery should succeed',
  },
  {
    id: 'no-source-queue',
    match: { sourceKnown: false, hasFailureReason: false },
    classification: 'poison',
    reason:
      'no DeadLetterQueueSourceArn: sent straight to the DLQ, so there is no source queue to redrive to',
  },
];

/** A rule over the whole inventory of one DLQ. */
export interface IncidentRule {
  id: string;
  /** Applies when every message of the DLQ shares one fingerprint. */
  allSameFingerprint: true;
  /** ...and there are at least this many messages. */
  minMessages: number;
  /** ...and their message classification is one of these. */
  fromClassifications: readonly Classification[];
  classification: Classification;
  reason: string;
}

/** The default incident rules. */
export const INCIDENT_RULES: readonly IncidentRule[] = [
  {
    id: 'every-message-fails-the-same-way',
    allSameFingerprint: true,
    minMessages: 5,
    fromClassifications: ['transient', 'unknown'],
    classification: 'systemic',
    reason: 'every message fails with the same error: likely a dependency, credential or deploy problem',
  },
];

/**
 * Message attribute names where consumers put their failure reason (configurable data).
 * Looked up in the SQS message attributes first, then in SNS attributes of non-raw bodies.
 */
export interface FailureAttributeNames {
  errorClass: readonly string[];
  errorMessage: readonly string[];
}

/** The default failure-reason attribute names. */
export const DEFAULT_FAILURE_ATTRIBUTES: FailureAttributeNames = {
  errorClass: ['error-class', 'x-error-class', 'x-error-type', 'errorClass', 'ErrorClass', 'exception-class'],
  errorMessage: [
    'error-message',
    'x-error-message',
    'x-error-reason',
    'errorMessage',
    'ErrorMessage',
    'exception-message',
  ],
};
