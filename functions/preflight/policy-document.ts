/**
 * Reading IAM policy documents: statement matching (Action / NotAction, Resource / NotResource
 * with IAM's `*` and `?` wildcards), the condition operators a KMS key policy uses, and the
 * verdict of a key policy on one role's use of a key.
 *
 * Why the pipeline reads key policies itself: IAM's policy simulator cannot evaluate a role
 * against a resource policy (SimulatePrincipalPolicy needs a `CallerArn`, which may only be a
 * user, whenever a `ResourcePolicy` is given). So preflight asks the simulator about the role's
 * identity policies, and reads the key policy here: KMS allows a use only when the key policy
 * allows it, directly or by delegating to the account's IAM policies (docs/redrive-workflow.md).
 *
 * A condition this reader cannot evaluate (an operator or key outside what it knows) makes the
 * verdict `undecidable` with the reason: the caller warns instead of guessing either way.
 *
 * @see https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html
 * @see https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html
 * @see https://docs.aws.amazon.com/IAM/latest/APIReference/API_SimulatePrincipalPolicy.html
 */

/** One statement of a policy document (the members this module reads). */
export interface PolicyStatement {
  Sid?: string;
  Effect?: string;
  Principal?: string | Record<string, string | string[]>;
  NotPrincipal?: unknown;
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: string | string[];
  NotResource?: string | string[];
  Condition?: Record<string, Record<string, string | string[] | boolean>>;
}

const asList = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/** The statements of a policy document (a single statement object or a list). */
export function statementsOf(document: unknown): PolicyStatement[] {
  const statement = (document as { Statement?: PolicyStatement | PolicyStatement[] } | null)?.Statement;
  return asList(statement).filter((s): s is PolicyStatement => s !== null && typeof s === 'object');
}

/** IAM's wildcard match: `*` any run of characters, `?` one. */
export function wildcardMatch(pattern: string, value: string, caseInsensitive = false): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, caseInsensitive ? 'i' : '').test(value);
}

/** Whether a statement covers an action (action names are case-insensitive) and a resource. */
export function statementCovers(statement: PolicyStatement, action: string, resource: string): boolean {
  const actionMatch =
    statement.NotAction !== undefined
      ? !asList(statement.NotAction).some((p) => wildcardMatch(p, action, true))
      : asList(statement.Action).some((p) => wildcardMatch(p, action, true));
  const resourceMatch =
    statement.NotResource !== undefined
      ? !asList(statement.NotResource).some((p) => wildcardMatch(p, resource))
      : asList(statement.Resource).some((p) => wildcardMatch(p, resource));
  return actionMatch && resourceMatch;
}

const OPERATORS: Readonly<Record<string, (pattern: string, value: string) => boolean>> = {
  StringEquals: (p, v) => p === v,
  StringNotEquals: (p, v) => p !== v,
  StringEqualsIgnoreCase: (p, v) => p.toLowerCase() === v.toLowerCase(),
  StringNotEqualsIgnoreCase: (p, v) => p.toLowerCase() !== v.toLowerCase(),
  StringLike: (p, v) => wildcardMatch(p, v),
  StringNotLike: (p, v) => !wildcardMatch(p, v),
  ArnEquals: (p, v) => p === v,
  ArnLike: (p, v) => wildcardMatch(p, v),
  ArnNotEquals: (p, v) => p !== v,
  ArnNotLike: (p, v) => !wildcardMatch(p, v),
  Bool: (p, v) => p.toLowerCase() === v.toLowerCase(),
};

/** The outcome of a statement's Condition block against a request context. */
export type ConditionOutcome =
  | { holds: boolean }
  /** Keys the block tests that the context lacks (without `IfExists`): the statement does not apply. */
  | { missing: string[] }
  /** An operator this module does not evaluate (`NumericLessThan`, `DateGreaterThan`, ...). */
  | { unsupported: string };

/**
 * Evaluates a Condition block. Keys are matched case-insensitively, as IAM does; `...IfExists`
 * holds when the key is absent; a negated operator holds when the value matches none of the
 * patterns, any other when it matches one. `ForAnyValue:` holds when one of the request's values
 * does, `ForAllValues:` when every one does (and when the key is absent).
 * @see https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-single-vs-multi-valued-context-keys.html
 *
 * @param context - context key (any case) -> the request's values.
 */
export function evaluateConditions(
  condition: PolicyStatement['Condition'],
  context: ReadonlyMap<string, readonly string[]>,
): ConditionOutcome {
  const lower = new Map([...context].map(([k, v]) => [k.toLowerCase(), v]));
  const missing: string[] = [];
  let holds = true;
  for (const [operatorName, tests] of Object.entries(condition ?? {})) {
    const set = /^(ForAnyValue|ForAllValues):/.exec(operatorName)?.[1];
    const bare = set === undefined ? operatorName : operatorName.slice(set.length + 1);
    const ifExists = bare.endsWith('IfExists');
    const name = ifExists ? bare.slice(0, -'IfExists'.length) : bare;
    const operator = OPERATORS[name];
    if (!operator) return { unsupported: operatorName };
    const negated = name.includes('Not');
    for (const [key, raw] of Object.entries(tests)) {
      const patterns = asList(raw).map(String);
      const values = lower.get(key.toLowerCase());
      // ForAllValues holds for an absent key (no value fails it).
      if (values === undefined && set === 'ForAllValues') continue;
      if (values === undefined) {
        if (!ifExists) missing.push(key);
        continue;
      }
      const each = (value: string) =>
        negated ? patterns.every((p) => operator(p, value)) : patterns.some((p) => operator(p, value));
      if (!(set === 'ForAllValues' ? values.every(each) : values.some(each))) holds = false;
    }
  }
  return missing.length > 0 ? { missing } : { holds };
}

/** What a key policy says about one principal's use of the key for one action. */
export type KeyPolicyVerdict =
  /** A statement allows the principal itself (or everyone, under conditions that hold). */
  | { kind: 'allows' }
  /** A statement allows the account: the principal's IAM policies decide. */
  | { kind: 'delegates' }
  /** An explicit Deny applies. */
  | { kind: 'denies'; statement: string }
  /** No statement allows the principal or its account. */
  | { kind: 'silent' }
  /** A statement that could decide has a condition this reader cannot evaluate. */
  | { kind: 'undecidable'; reason: string };

/** Who a statement's Principal names, relative to the request. */
function principalMatch(
  principal: PolicyStatement['Principal'],
  principalArn: string,
  accountId: string,
): 'self' | 'account' | null {
  if (principal === '*') return 'self';
  if (principal === undefined || typeof principal !== 'object') return null;
  const named = asList(principal.AWS);
  if (named.includes('*') || named.includes(principalArn)) return 'self';
  if (named.includes(accountId) || named.includes(`arn:aws:iam::${accountId}:root`)) return 'account';
  if (named.some((p) => /^arn:aws[a-z-]*:iam::\d{12}:root$/.test(p) && p.split(':')[4] === accountId))
    return 'account';
  return null;
}

/**
 * The verdict of a key policy on `principalArn` calling `action` on `keyArn`.
 *
 * @param policy - the key policy JSON text (GetKeyPolicy).
 * @param context - the request's context keys besides `aws:PrincipalArn` / `aws:PrincipalAccount`,
 *   which are added (e.g. `kms:ViaService` = `sqs.<region>.amazonaws.com`, `kms:CallerAccount`).
 */
export function readKeyPolicy(
  policy: string,
  request: {
    principalArn: string;
    accountId: string;
    action: string;
    keyArn: string;
    context: ReadonlyMap<string, readonly string[]>;
  },
): KeyPolicyVerdict {
  let document: unknown;
  try {
    document = JSON.parse(policy);
  } catch {
    return { kind: 'undecidable', reason: 'the key policy is not JSON' };
  }
  const context = new Map(request.context);
  context.set('aws:PrincipalArn', [request.principalArn]);
  context.set('aws:PrincipalAccount', [request.accountId]);
  let allows = false;
  let delegates = false;
  let unsure: string | undefined;
  let unsureDeny: string | undefined;
  for (const [index, statement] of statementsOf(document).entries()) {
    const label = statement.Sid ? `"${statement.Sid}"` : `#${index + 1}`;
    if (!statementCovers(statement, request.action, request.keyArn)) continue;
    if (statement.NotPrincipal !== undefined) {
      unsure ??= `statement ${label} uses NotPrincipal`;
      continue;
    }
    const who = principalMatch(statement.Principal, request.principalArn, request.accountId);
    if (who === null) continue;
    const outcome = evaluateConditions(statement.Condition, context);
    const deny = statement.Effect === 'Deny';
    if ('unsupported' in outcome || 'missing' in outcome) {
      const why =
        'unsupported' in outcome
          ? `statement ${label} uses the ${outcome.unsupported} operator`
          : `statement ${label} tests ${outcome.missing.join(', ')}`;
      if (deny) unsureDeny ??= why;
      else unsure ??= why;
      continue;
    }
    if (!outcome.holds) continue;
    if (deny) return { kind: 'denies', statement: label };
    if (who === 'self') allows = true;
    else delegates = true;
  }
  if (unsureDeny) return { kind: 'undecidable', reason: unsureDeny };
  if (allows) return { kind: 'allows' };
  if (delegates) return { kind: 'delegates' };
  if (unsure) return { kind: 'undecidable', reason: unsure };
  return { kind: 'silent' };
}
