/**
 * cdk-nag v3 wiring. v3 runs as a CDK policy-validation plugin; a finding is suppressed with
 * `Validations.of(construct).acknowledge({ id, reason })`, which covers the construct and all of
 * its children. A finding id may be narrowed to one finding: `AwsSolutions-IAM5[Resource::*]`.
 *
 * @see https://github.com/cdklabs/cdk-nag/blob/main/MIGRATION.md
 * @see https://docs.aws.amazon.com/cdk/v2/guide/policy-validation-synthesis.html
 */
import { type Stack, Token, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** A suppression: the rule (or single finding) id and the written reason. */
export interface Acknowledgement {
  readonly id: string;
  readonly reason: string;
}

/**
 * Acknowledges cdk-nag findings on a construct and its children, each with its reason.
 * @throws Error when a reason is shorter than 20 characters (a suppression must say why).
 */
export function acknowledge(construct: IConstruct, ...rules: readonly Acknowledgement[]): void {
  for (const rule of rules) {
    if (rule.reason.trim().length < 20) {
      throw new Error(`suppression ${rule.id} on ${construct.node.path} needs a written reason`);
    }
    Validations.of(construct).acknowledge({ id: rule.id, reason: rule.reason });
  }
}

/** How cdk-nag spells a pseudo parameter in a finding id: `<AWS::Region>`, or the literal value. */
function nagPart(value: string, pseudo: string): string {
  return Token.isUnresolved(value) ? `<${pseudo}>` : value;
}

/**
 * `arn:<AWS::Partition>:<service>:<AWS::Region>:<AWS::AccountId>:`, as cdk-nag prints the start of
 * an ARN built with `stack.formatArn` in a finding id (literal values when the stack has them).
 */
export function nagArnPrefix(stack: Stack, service: string): string {
  return `arn:${nagPart(stack.partition, 'AWS::Partition')}:${service}:${nagPart(stack.region, 'AWS::Region')}:${nagPart(stack.account, 'AWS::AccountId')}:`;
}
