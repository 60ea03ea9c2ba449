/**
 * Local IAM stand-in: roles with inline policies and the policy simulator, on the wire protocol
 * the SDK v3 client (3.1164.0) speaks: awsQuery, version 2010-05-08.
 *
 * Operations: CreateRole, GetRole, PutRolePolicy, DeleteRolePolicy, SimulatePrincipalPolicy.
 * The simulation evaluates the role's inline policies (identity policies) the way IAM does for
 * one account: an explicit Deny wins, else an Allow whose Action, Resource and Condition match,
 * else `implicitDeny`. Conditions: the String*, Arn* and Bool operators, `...IfExists`, with the
 * request's `ContextEntries` plus `aws:PrincipalArn` / `aws:PrincipalAccount`; a key the policy
 * tests that the context lacks is listed in `MissingContextValues`, as IAM does. An unsupported
 * operator is an error, never a guess.
 *
 * Like IAM, a `ResourcePolicy` with a role as `PolicySourceArn` and no `CallerArn` (which may only
 * be a user) is `InvalidInput`: IAM cannot simulate a role against a resource policy, so the
 * pipeline does not ask it to (functions/preflight/key-check.ts).
 *
 * What is not IAM: no managed policies, groups, users, permissions boundaries or SCPs; the
 * simulation covers what the pipeline's preflight asks.
 *
 * @see https://docs.aws.amazon.com/IAM/latest/APIReference/API_SimulatePrincipalPolicy.html
 * @see https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html
 */
import { randomUUID } from 'node:crypto';
import {
  evaluateConditions,
  statementCovers,
  statementsOf,
} from '../../functions/preflight/policy-document.js';
import { awsQueryProtocol, requireString, type Standin, StandinError, startStandin } from './server.js';

interface StoredRole {
  name: string;
  arn: string;
  roleId: string;
  created: Date;
  trust: string;
  policies: Map<string, unknown>;
}

/** The running stand-in. */
export interface IamStandin extends Standin {
  /** The ARN of a role by name; undefined when there is none. */
  roleArn(name: string): string | undefined;
}

/** Starts the IAM stand-in; point the SDK at it with `AWS_ENDPOINT_URL_IAM`. */
export async function startIamStandin(options: { accountId?: string } = {}): Promise<IamStandin> {
  const account = options.accountId ?? '123456789012';
  const roles = new Map<string, StoredRole>();
  const roleNamed = (input: Record<string, unknown>): StoredRole => {
    const name = requireString(input, 'RoleName');
    const role = roles.get(name);
    if (!role) throw new StandinError('NoSuchEntity', `The role with name ${name} cannot be found.`, 404);
    return role;
  };
  const roleOfArn = (arn: string): StoredRole => {
    const role = [...roles.values()].find((r) => r.arn === arn);
    if (!role) throw new StandinError('NoSuchEntity', `PolicySourceArn ${arn} does not exist.`, 404);
    return role;
  };
  const roleOutput = (role: StoredRole) => ({
    Path: '/',
    RoleName: role.name,
    RoleId: role.roleId,
    Arn: role.arn,
    CreateDate: role.created,
    AssumeRolePolicyDocument: encodeURIComponent(role.trust),
  });

  const standin = await startStandin({
    service: 'IAM',
    protocol: awsQueryProtocol({ xmlns: 'https://iam.amazonaws.com/doc/2010-05-08/' }),
    operations: {
      CreateRole(input) {
        const name = requireString(input, 'RoleName');
        if (roles.has(name))
          throw new StandinError('EntityAlreadyExists', `Role with name ${name} already exists.`, 409);
        const role: StoredRole = {
          name,
          arn: `arn:aws:iam::${account}:role/${name}`,
          roleId: `AROA${randomUUID().replace(/-/g, '').slice(0, 17).toUpperCase()}`,
          created: new Date(),
          trust: requireString(input, 'AssumeRolePolicyDocument'),
          policies: new Map(),
        };
        roles.set(name, role);
        return { Role: roleOutput(role) };
      },
      GetRole: (input) => ({ Role: roleOutput(roleNamed(input)) }),
      PutRolePolicy(input) {
        const role = roleNamed(input);
        const document = requireString(input, 'PolicyDocument');
        try {
          role.policies.set(requireString(input, 'PolicyName'), JSON.parse(document));
        } catch {
          throw new StandinError('MalformedPolicyDocument', 'The policy document is not JSON.');
        }
        return {};
      },
      DeleteRolePolicy(input) {
        const role = roleNamed(input);
        const name = requireString(input, 'PolicyName');
        if (!role.policies.delete(name))
          throw new StandinError('NoSuchEntity', `The role policy with name ${name} cannot be found.`, 404);
        return {};
      },
      SimulatePrincipalPolicy(input) {
        const source = requireString(input, 'PolicySourceArn');
        const role = roleOfArn(source);
        if (input.ResourcePolicy !== undefined && input.CallerArn === undefined)
          throw new StandinError(
            'InvalidInput',
            'Invalid input: CallerArn is required if you include a ResourcePolicy and the PolicySourceArn is not the ARN for an IAM user.',
          );
        const actions = (input.ActionNames as string[] | undefined) ?? [];
        if (actions.length === 0)
          throw new StandinError('InvalidInput', 'ActionNames must contain at least one action.');
        const resources = (input.ResourceArns as string[] | undefined) ?? ['*'];
        const context = new Map<string, string[]>([
          ['aws:PrincipalArn', [role.arn]],
          ['aws:PrincipalAccount', [account]],
        ]);
        for (const entry of (input.ContextEntries as Array<Record<string, unknown>> | undefined) ?? [])
          context.set(String(entry.ContextKeyName), (entry.ContextKeyValues as string[]) ?? []);
        const results = actions.flatMap((action) =>
          resources.map((resource) => {
            const missing = new Set<string>();
            const matched: Array<{ effect: string; policy: string }> = [];
            for (const [policy, document] of role.policies)
              for (const statement of statementsOf(document)) {
                if (!statementCovers(statement, action, resource)) continue;
                const outcome = evaluateConditions(statement.Condition, context);
                if ('unsupported' in outcome)
                  throw new StandinError(
                    'InvalidInput',
                    `the local IAM stand-in does not evaluate the ${outcome.unsupported} operator`,
                  );
                if ('missing' in outcome) for (const key of outcome.missing) missing.add(key);
                else if (outcome.holds) matched.push({ effect: statement.Effect ?? '', policy });
              }
            const deny = matched.filter((m) => m.effect === 'Deny');
            const allow = matched.filter((m) => m.effect === 'Allow');
            const decisive = deny.length > 0 ? deny : allow;
            return {
              EvalActionName: action,
              EvalResourceName: resource,
              EvalDecision: deny.length > 0 ? 'explicitDeny' : allow.length > 0 ? 'allowed' : 'implicitDeny',
              MatchedStatements: decisive.map((m) => ({
                SourcePolicyId: m.policy,
                SourcePolicyType: 'IAM Policy',
              })),
              MissingContextValues: [...missing],
            };
          }),
        );
        return { EvaluationResults: results, IsTruncated: false };
      },
    },
  });
  return { ...standin, roleArn: (name) => roles.get(name)?.arn };
}
