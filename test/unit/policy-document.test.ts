import { describe, expect, it } from 'vitest';
import {
  evaluateConditions,
  readKeyPolicy,
  statementCovers,
  wildcardMatch,
} from '../../functions/preflight/policy-document.js';

const ACCOUNT = '111122223333';
const ROLE = `arn:aws:iam::${ACCOUNT}:role/pipeline-park`;
const KEY = `arn:aws:kms:us-east-1:${ACCOUNT}:key/1234`;
const VIA_SQS = new Map([
  ['kms:ViaService', ['sqs.us-east-1.amazonaws.com']],
  ['kms:CallerAccount', [ACCOUNT]],
]);
const verdict = (statements: unknown[], action = 'kms:Decrypt', context = VIA_SQS) =>
  readKeyPolicy(JSON.stringify({ Version: '2012-10-17', Statement: statements }), {
    principalArn: ROLE,
    accountId: ACCOUNT,
    action,
    keyArn: KEY,
    context,
  });

describe('policy statements', () => {
  it('matches IAM wildcards: * any run, ? one character, actions case-insensitively', () => {
    expect(wildcardMatch('kms:Generate*', 'kms:GenerateDataKey')).toBe(true);
    expect(wildcardMatch('kms:Decryp?', 'kms:Decrypt')).toBe(true);
    expect(wildcardMatch('kms:Decryp?', 'kms:Decrypts')).toBe(false);
    expect(statementCovers({ Action: 'KMS:decrypt', Resource: '*' }, 'kms:Decrypt', KEY)).toBe(true);
    expect(statementCovers({ NotAction: 'kms:Decrypt', Resource: '*' }, 'kms:Decrypt', KEY)).toBe(false);
    expect(
      statementCovers({ Action: 'kms:*', Resource: 'arn:aws:kms:*:*:key/other' }, 'kms:Decrypt', KEY),
    ).toBe(false);
  });

  it('evaluates conditions: a missing key is reported unless IfExists, negated operators match none', () => {
    expect(
      evaluateConditions({ StringEquals: { 'kms:viaservice': 'sqs.us-east-1.amazonaws.com' } }, VIA_SQS),
    ).toEqual({
      holds: true,
    });
    expect(
      evaluateConditions({ StringNotEquals: { 'kms:ViaService': ['sqs.us-east-1.amazonaws.com'] } }, VIA_SQS),
    ).toEqual({ holds: false });
    expect(evaluateConditions({ StringEquals: { 'aws:SourceVpce': 'vpce-1' } }, VIA_SQS)).toEqual({
      missing: ['aws:SourceVpce'],
    });
    expect(evaluateConditions({ StringEqualsIfExists: { 'aws:SourceVpce': 'vpce-1' } }, VIA_SQS)).toEqual({
      holds: true,
    });
    expect(evaluateConditions({ NumericLessThan: { 'kms:GrantConstraintType': '1' } }, VIA_SQS)).toEqual({
      unsupported: 'NumericLessThan',
    });
  });
});

describe('evaluateConditions set operators', () => {
  const keys = (values: string[]) => new Map([['dynamodb:LeadingKeys', values]]);
  const leading = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['DLQ#*'] } };
  const qualifier = { 'ForAnyValue:StringEquals': { 'states:StateMachineQualifier': ['live'] } };

  it('ForAllValues holds when every value matches (and for an absent key), fails on one that does not', () => {
    expect(evaluateConditions(leading, keys(['DLQ#a', 'DLQ#b']))).toEqual({ holds: true });
    expect(evaluateConditions(leading, keys(['DLQ#a', 'INC#b']))).toEqual({ holds: false });
    expect(evaluateConditions(leading, new Map())).toEqual({ holds: true });
  });

  it('ForAnyValue holds when one value matches, and is missing for an absent key', () => {
    const context = (values: string[]) => new Map([['states:StateMachineQualifier', values]]);
    expect(evaluateConditions(qualifier, context(['3', 'live']))).toEqual({ holds: true });
    expect(evaluateConditions(qualifier, context(['3']))).toEqual({ holds: false });
    expect(evaluateConditions(qualifier, new Map())).toEqual({ missing: ['states:StateMachineQualifier'] });
  });
});

describe('readKeyPolicy (KMS: the key policy must allow the role, or delegate to the account)', () => {
  it('the default key policy delegates to IAM policies', () => {
    expect(
      verdict([
        {
          Effect: 'Allow',
          Principal: { AWS: `arn:aws:iam::${ACCOUNT}:root` },
          Action: 'kms:*',
          Resource: '*',
        },
      ]),
    ).toEqual({ kind: 'delegates' });
  });

  it('a statement naming the role through SQS allows it, but not for a call that does not come through SQS', () => {
    const statements = [
      {
        Effect: 'Allow',
        Principal: { AWS: [ROLE] },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
        Resource: '*',
        Condition: { StringEquals: { 'kms:ViaService': 'sqs.us-east-1.amazonaws.com' } },
      },
    ];
    expect(verdict(statements)).toEqual({ kind: 'allows' });
    expect(
      verdict(statements, 'kms:Decrypt', new Map([['kms:ViaService', ['s3.us-east-1.amazonaws.com']]])),
    ).toEqual({
      kind: 'silent',
    });
    expect(verdict(statements, 'kms:Encrypt')).toEqual({ kind: 'silent' });
  });

  it('an explicit Deny wins over an Allow and is named by its Sid', () => {
    expect(
      verdict([
        { Effect: 'Allow', Principal: { AWS: ROLE }, Action: 'kms:*', Resource: '*' },
        { Sid: 'NoParkDecrypt', Effect: 'Deny', Principal: '*', Action: 'kms:Decrypt', Resource: '*' },
      ]),
    ).toEqual({ kind: 'denies', statement: '"NoParkDecrypt"' });
  });

  it('another account root or a service principal gives the role nothing', () => {
    expect(
      verdict([
        {
          Effect: 'Allow',
          Principal: { AWS: 'arn:aws:iam::999999999999:root' },
          Action: 'kms:*',
          Resource: '*',
        },
        { Effect: 'Allow', Principal: { Service: 'sqs.amazonaws.com' }, Action: 'kms:*', Resource: '*' },
      ]),
    ).toEqual({ kind: 'silent' });
  });

  it('is undecidable, with the reason, when the deciding statement tests a key the request context lacks', () => {
    expect(
      verdict([
        {
          Sid: 'OrgOnly',
          Effect: 'Allow',
          Principal: '*',
          Action: 'kms:Decrypt',
          Resource: '*',
          Condition: { StringEquals: { 'aws:PrincipalOrgID': 'o-123' } },
        },
      ]),
    ).toEqual({ kind: 'undecidable', reason: 'statement "OrgOnly" tests aws:PrincipalOrgID' });
    expect(
      readKeyPolicy('{not json', {
        principalArn: ROLE,
        accountId: ACCOUNT,
        action: 'kms:Decrypt',
        keyArn: KEY,
        context: VIA_SQS,
      }),
    ).toEqual({
      kind: 'undecidable',
      reason: 'the key policy is not JSON',
    });
  });
});
