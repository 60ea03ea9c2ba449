/**
 * Props checks of the pipeline's constructs, in the style of AWS Solutions Constructs: every
 * problem is collected, then one error lists them all, each naming the prop, the allowed values
 * and the value given. Token (deploy-time) values are not checked: their value is unknown at synth.
 *
 * @see https://docs.aws.amazon.com/solutions/latest/constructs/welcome.html
 */
import { Token } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { InvalidInputError } from '#platform/errors.js';

/**
 * Throws once when there is any problem.
 * @throws InvalidInputError `<Construct> <path>: invalid props: <problem>; <problem>...`
 */
export function throwIfInvalid(kind: string, scope: IConstruct, problems: readonly string[]): void {
  if (problems.length > 0) throw new InvalidInputError(`${kind} ${scope.node.path}: invalid props`, problems);
}

/** `name: must be one of a, b (given: "x")`, or nothing. */
export function oneOfProblem(name: string, value: string | undefined, allowed: readonly string[]): string[] {
  return value === undefined || allowed.includes(value)
    ? []
    : [`${name}: must be one of ${allowed.join(', ')} (given: ${JSON.stringify(value)})`];
}

/**
 * A Secrets Manager secret's complete ARN: ends in `-` and the 6 random characters Secrets
 * Manager appends to the name (`fromSecretCompleteArn` needs them).
 * @see https://docs.aws.amazon.com/secretsmanager/latest/userguide/reference_iam-permissions.html#iam-resources
 */
export function completeSecretArnProblem(name: string, value: string | undefined): string[] {
  if (value === undefined || Token.isUnresolved(value)) return [];
  return /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+-[A-Za-z0-9]{6}$/.test(value)
    ? []
    : [
        `${name}: must be the complete ARN of a Secrets Manager secret, arn:<partition>:secretsmanager:<region>:<account>:secret:<name>-<6 characters> (given: ${JSON.stringify(value)})`,
      ];
}

/** A Slack channel: an id such as C0123456789, or a name; never blank and never with spaces. */
export function slackChannelProblem(name: string, value: string | undefined): string[] {
  if (value === undefined || Token.isUnresolved(value)) return [];
  return /^[^\s]{1,80}$/.test(value)
    ? []
    : [
        `${name}: must be a Slack channel id or name, 1-80 characters without spaces (given: ${JSON.stringify(value)})`,
      ];
}

/**
 * A state machine alias name: 1-80 of letters, digits, `-` and `_`, not digits only (a number
 * would read as a version).
 * @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_CreateStateMachineAlias.html
 */
export function aliasNameProblem(name: string, value: string | undefined): string[] {
  if (value === undefined || Token.isUnresolved(value)) return [];
  return /^(?=.*[A-Za-z_-])[A-Za-z0-9_-]{1,80}$/.test(value)
    ? []
    : [`${name}: must be 1-80 of A-Z a-z 0-9 - _ and not only digits (given: ${JSON.stringify(value)})`];
}
