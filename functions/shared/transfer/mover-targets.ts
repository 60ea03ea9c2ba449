/**
 * Where the recording mover sends a message, and with which credentials.
 *
 * The target is the plan's `destinationArn` when given (an SQS queue), else the message's origin
 * (`Envelope.origin`: its source queue, SNS topic, EventBridge bus or Lambda function), else the
 * source queue of an envelope stored before origins existed. A target in another account or
 * Region than the DLQ is reached only through a role the queue registration lists for that account
 * (and Region); without one it is refused by name, before anything is sent.
 *
 * @see https://docs.aws.amazon.com/IAM/latest/UserGuide/reference-arns.html
 * @see https://docs.aws.amazon.com/IAM/latest/UserGuide/id_roles_common-scenarios_aws-accounts.html
 */
import { unqualifiedFunctionArn } from '#inventory/idempotency-key.js';
import type { AccessRole, Envelope, OriginKind } from '#inventory/model.js';
import type { ClientScope } from '#platform/scoped-clients.js';

/** The parts of an ARN. */
export interface ArnParts {
  partition: string;
  service: string;
  region: string;
  accountId: string;
  resource: string;
}

/** Splits `arn:<partition>:<service>:<region>:<account>:<resource>`, or undefined. */
export function parseArn(arn: string): ArnParts | undefined {
  const match = /^arn:([^:]+):([^:]+):([^:]*):(\d{12}):(.+)$/.exec(arn);
  if (!match) return undefined;
  const [, partition = '', service = '', region = '', accountId = '', resource = ''] = match;
  return { partition, service, region, accountId, resource };
}

const KIND_OF_SERVICE: Readonly<Record<string, OriginKind>> = {
  sqs: 'sqs',
  sns: 'sns',
  events: 'eventbridge',
  lambda: 'lambda',
};

/** A message's target before it is resolved (kind and ARN), or why it has none. */
export type TargetRef = { kind: OriginKind; arn: string } | { kind: null; reason: string };

/** The target of one envelope (see the module comment). */
export function targetRefOf(
  envelope: Pick<Envelope, 'origin' | 'sourceArn'>,
  plan: { destinationArn: string | null },
): TargetRef {
  if (plan.destinationArn) return { kind: 'sqs', arn: plan.destinationArn };
  const origin = envelope.origin;
  if (origin?.arn) {
    const arn = origin.kind === 'lambda' ? unqualifiedFunctionArn(origin.arn) : origin.arn;
    return { kind: origin.kind, arn };
  }
  if (origin?.kind === 'lambda')
    return {
      kind: null,
      reason:
        'a Lambda async-invocation DLQ message does not name its function: register the DLQ with origin { kind: lambda, functionArn }',
    };
  if (origin?.kind)
    return { kind: null, reason: `its ${origin.kind} origin is not known: register the DLQ's origin` };
  if (envelope.sourceArn !== 'unknown') return { kind: 'sqs', arn: envelope.sourceArn };
  return { kind: null, reason: 'no DeadLetterQueueSourceArn and no origin: give a destinationArn' };
}

/** The kind of a target ARN, from its service. */
export function kindOfArn(arn: string): OriginKind | undefined {
  const parts = parseArn(arn);
  return parts ? KIND_OF_SERVICE[parts.service] : undefined;
}

/** The client scope of a target, or why it cannot be reached. */
export type TargetAccess = { ok: true; scope: ClientScope | undefined } | { ok: false; refusal: string };

/**
 * How the pipeline reaches `targetArn`: with its own credentials when the target is in the DLQ's
 * account and Region, else through the first registered role for the target's account whose
 * Region (if any) matches.
 */
export function accessTo(
  targetArn: string,
  dlqArn: string,
  accessRoles: readonly AccessRole[] | undefined,
): TargetAccess {
  const target = parseArn(targetArn);
  const dlq = parseArn(dlqArn);
  if (!target || !dlq) return { ok: false, refusal: `${targetArn}: not an ARN` };
  if (target.accountId === dlq.accountId && target.region === dlq.region)
    return { ok: true, scope: undefined };
  const role = (accessRoles ?? []).find(
    (r) => r.accountId === target.accountId && (r.region === undefined || r.region === target.region),
  );
  if (!role)
    return {
      ok: false,
      refusal: `destination ${targetArn} is in ${target.accountId === dlq.accountId ? 'this account' : `account ${target.accountId}`}, ${target.region}, and the registration of ${dlqArn.split(':').pop()} names no role for it (accessRoles: { accountId: '${target.accountId}', region: '${target.region}', roleArn })`,
    };
  return {
    ok: true,
    scope: {
      accountId: target.accountId,
      region: target.region,
      role: { roleArn: role.roleArn, ...(role.externalId ? { externalId: role.externalId } : {}) },
    },
  };
}
