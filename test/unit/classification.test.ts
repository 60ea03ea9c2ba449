import { describe, expect, it } from 'vitest';
import {
  classifyMessage,
  fingerprint,
  MAX_FINGERPRINT_CHARS,
  normaliseReason,
} from '#inventory/classification.js';
import { type ClassificationRule, DEFAULT_RULES } from '#inventory/classification-rules.js';
import type { Envelope } from '#inventory/model.js';
import { summarise } from '#inventory/summary.js';

const base = { sourceKnown: true, bodyIsJson: true, receiveCount: 4 };

describe('classification rules are data', () => {
  it.each([
    ['AccessDeniedException', 'User is not authorized to perform sqs:SendMessage', 'systemic'],
    ['Error', 'getaddrinfo ENOTFOUND api.internal', 'systemic'],
    ['Runtime.ExitError', 'RequestId: abc Error: Runtime exited with error: signal: killed', 'poison'],
    ['ValidationError', 'amount must be positive', 'permanent'],
    ['SyntaxError', 'Unexpected token o in JSON at position 1', 'permanent'],
    ['ThrottlingException', 'Rate exceeded', 'transient'],
    ['TimeoutError', 'inventory service timed out after 3000 ms', 'transient'],
    ['WeirdError', 'something odd', 'unknown'],
  ])('classifies %s (%s) as %s', (errorClass, errorMessage, expected) => {
    expect(classifyMessage({ ...base, errorClass, errorMessage }).classification).toBe(expected);
  });

  it('C07 a message sent straight to the DLQ without a failure reason is poison (no source to redrive to)', () => {
    const result = classifyMessage({ sourceKnown: false, bodyIsJson: false, receiveCount: 1 });
    expect([result.classification, result.ruleId]).toEqual(['poison', 'no-source-queue']);
  });

  it('a custom rule list changes the outcome without code changes', () => {
    const rules: ClassificationRule[] = [
      {
        id: 'legacy',
        match: { errorClass: '^LegacyGatewayError$' },
        classification: 'transient',
        reason: 'known flaky',
      },
      ...DEFAULT_RULES,
    ];
    expect(classifyMessage({ ...base, errorClass: 'LegacyGatewayError' }, rules)).toEqual({
      classification: 'transient',
      reason: 'known flaky',
      ruleId: 'legacy',
    });
    expect(classifyMessage({ ...base, errorClass: 'LegacyGatewayError' }).classification).toBe('unknown');
  });

  it('normalises digits, UUIDs and hex ids out of reasons so equal failures share a fingerprint', () => {
    expect(
      normaliseReason('order 1234 not found (req 9f8e7d6c) id 0b6b1b1e-0000-4000-8000-00000000abcd'),
    ).toBe('order # not found (req <hex>) id <uuid>');
    expect(fingerprint('NotFound', 'order 1 missing')).toBe(fingerprint('NotFound', 'order 77 missing'));
    expect(fingerprint(undefined, undefined)).toBe('<none>|<none>');
  });

  it('bounds a fingerprint of a long reason to MAX_FINGERPRINT_CHARS, keeping distinct long reasons distinct and equal ones equal', () => {
    const long = (tail: string) => `timeout calling ${'inventory-service '.repeat(300)}${tail}`;
    const a = fingerprint('Timeout', long('at step A'));
    const b = fingerprint('Timeout', long('at step B'));
    expect(a.length).toBe(MAX_FINGERPRINT_CHARS);
    expect(b.length).toBe(MAX_FINGERPRINT_CHARS);
    expect(a).not.toBe(b);
    expect(a.startsWith('Timeout|timeout calling inventory-service')).toBe(true);
    expect(fingerprint('Timeout', long('at step A'))).toBe(a);
    const short = 'x'.repeat(MAX_FINGERPRINT_CHARS - 2);
    expect(fingerprint('E', short)).toBe(`E|${short}`);
  });
});

function envelope(
  i: number,
  errorClass: string,
  errorMessage: string,
  classification: Envelope['classification'],
): Envelope {
  return {
    dlqArn: 'arn:aws:sqs:us-east-1:111122223333:orders-dlq',
    messageId: `m-${i}`,
    idempotencyKey: `k-${i}`,
    keySource: 'hash',
    sourceArn: 'arn:aws:sqs:us-east-1:111122223333:orders-queue',
    bodyBytes: 2,
    bodySha256: 'x',
    bodyChunked: false,
    bodyChunks: 0,
    messageAttributes: {},
    systemAttributes: {},
    receiveCount: 4,
    sentAt: 1_000 + i,
    retentionDeadline: 10_000_000 + i,
    retentionDeadlineApproximate: false,
    failure: { errorClass, errorMessage, fingerprint: fingerprint(errorClass, errorMessage) },
    classification,
    bodyFormat: 'raw',
    state: 'IN_DLQ',
    redriveCount: 0,
    firstSeenAt: '2026-01-02T10:35:00.000Z',
    lastSeenAt: '2026-01-02T10:35:00.000Z',
  };
}

describe('incident summary', () => {
  it('groups causes by fingerprint with one example each and counts classifications', () => {
    const envs = [
      envelope(1, 'ValidationError', 'amount must be positive, got -4', 'permanent'),
      envelope(2, 'ValidationError', 'amount must be positive, got -9', 'permanent'),
      envelope(3, 'TimeoutError', 'timed out after 3000 ms', 'transient'),
    ];
    const { summary, incidentClassification } = summarise(envs, { now: 2_000, partial: false });
    expect(incidentClassification).toBeNull();
    expect(summary.causes.map((c) => [c.errorClass, c.count, c.exampleMessageId])).toEqual([
      ['ValidationError', 2, 'm-1'],
      ['TimeoutError', 1, 'm-3'],
    ]);
    expect(summary.countByClassification).toEqual({
      transient: 1,
      permanent: 2,
      poison: 0,
      systemic: 0,
      unknown: 0,
    });
    expect([summary.oldestMessageAgeMs, summary.earliestRetentionDeadline]).toEqual([999, 10_000_001]);
  });

  it('marks an incident systemic when every message fails the same way', () => {
    const envs = Array.from({ length: 6 }, (_, i) =>
      envelope(i, 'TimeoutError', `db timed out after ${i}00 ms`, 'transient'),
    );
    const { summary, incidentClassification } = summarise(envs, { now: 2_000, partial: false });
    expect(incidentClassification?.classification).toBe('systemic');
    expect(summary.countByClassification.systemic).toBe(6);
    expect(summary.causes).toHaveLength(1);
  });
});
