/**
 * IAM's verdict on one request of a pipeline function, from its role's statements as synthesized
 * (template-policies.ts): an explicit Deny wins, else an Allow whose action, resource and
 * conditions match, else the implicit deny. Statements are read by the project's one policy
 * reader (functions/preflight/policy-document.ts), which Preflight's key check uses too.
 *
 * A denial is data: the function, action and resource, and the catalogue entry
 * (packages/cdk/src/function-catalog.ts) whose grant would allow it, so the report can say what to add.
 *
 * @see https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html
 */

import type { FunctionName } from '@dlq-redrive/cdk/function-catalog';
import { evaluateConditions, statementCovers } from '../../functions/preflight/policy-document.js';
import type { RoleStatement } from './template-policies.js';

/** One request as IAM sees it: the caller's function, the action, the resource, the context keys. */
export interface IamRequest {
  readonly function: FunctionName;
  readonly action: string;
  readonly resource: string;
  /** Context key -> values (`states:StateMachineQualifier`, `dynamodb:LeadingKeys`). */
  readonly context?: ReadonlyMap<string, readonly string[]>;
}

/** The verdict: allowed by a statement, or denied with the reason and the grant that would allow it. */
export type IamVerdict =
  | { readonly allowed: true; readonly by: RoleStatement['origin'] }
  | {
      readonly allowed: false;
      readonly code: 'explicit-deny' | 'no-statement' | 'condition-failed';
      readonly function: FunctionName;
      readonly action: string;
      readonly resource: string;
      /** Where the grant belongs: the function's entry of packages/cdk/src/function-catalog.ts. */
      readonly grant: {
        readonly catalogEntry: FunctionName;
        readonly action: string;
        readonly resource: string;
      };
    };

/**
 * Judges one request against the caller's role statements.
 * @param statements - the caller's role statements, resolved to the ARNs the request names.
 */
export function judge(statements: readonly RoleStatement[], request: IamRequest): IamVerdict {
  const context = request.context ?? new Map<string, readonly string[]>();
  const applies = (s: RoleStatement) => {
    if (!statementCovers(s, request.action, request.resource)) return false;
    const outcome = evaluateConditions(s.Condition, context);
    return 'holds' in outcome && outcome.holds;
  };
  const denied = (code: 'explicit-deny' | 'no-statement' | 'condition-failed'): IamVerdict => ({
    allowed: false,
    code,
    function: request.function,
    action: request.action,
    resource: request.resource,
    grant: { catalogEntry: request.function, action: request.action, resource: request.resource },
  });
  if (statements.some((s) => s.Effect === 'Deny' && applies(s))) return denied('explicit-deny');
  const allow = statements.find((s) => s.Effect === 'Allow' && applies(s));
  if (allow) return { allowed: true, by: allow.origin };
  const covered = statements.some(
    (s) => s.Effect === 'Allow' && statementCovers(s, request.action, request.resource),
  );
  return denied(covered ? 'condition-failed' : 'no-statement');
}
