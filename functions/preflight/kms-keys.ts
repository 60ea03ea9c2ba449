/**
 * KMS keys of encrypted queues, and whether a role's IAM policies let it use one: DescribeKey and
 * GetKeyPolicy (KMS), SimulatePrincipalPolicy (IAM). SDK errors are adapted at this boundary:
 * a key that does not exist is `null`, `AccessDenied*` becomes {@link AccessDeniedError},
 * throttling and 5xx become {@link TransientError}.
 *
 * @see https://docs.aws.amazon.com/kms/latest/APIReference/API_DescribeKey.html
 * @see https://docs.aws.amazon.com/kms/latest/APIReference/API_GetKeyPolicy.html
 * @see https://docs.aws.amazon.com/IAM/latest/APIReference/API_SimulatePrincipalPolicy.html
 */
import { type IAMClient, SimulatePrincipalPolicyCommand } from '@aws-sdk/client-iam';
import { DescribeKeyCommand, GetKeyPolicyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { AccessDeniedError, awsErrorName, isRetryable, TransientError } from '#platform/errors.js';

/** What preflight needs to know about a key. */
export interface KeyDescription {
  /** The key ARN (DescribeKey resolves a key id, alias name or alias ARN to it). */
  arn: string;
  /** `Enabled`, `Disabled`, `PendingDeletion`, `PendingImport`, `Unavailable`... */
  state: string;
  /** `AWS` for an AWS managed key (`alias/aws/sqs`), `CUSTOMER` for a customer managed key. */
  manager: string;
  /** When a key pending deletion is deleted, epoch milliseconds. */
  deletionDate?: number;
}

/** One decision of the IAM policy simulator. */
export interface SimulatedDecision {
  action: string;
  /** `allowed`, `explicitDeny` or `implicitDeny`. */
  decision: string;
  /** Context keys the role's policies test that the simulation was not given. */
  missingContext: string[];
}

/** The KMS and IAM port. */
export interface KeyAccess {
  /** DescribeKey; null when KMS says the key does not exist. @throws AccessDeniedError, TransientError */
  describe(keyId: string): Promise<KeyDescription | null>;
  /** GetKeyPolicy (the `default` policy, the only one a key has). @throws AccessDeniedError, TransientError */
  policy(keyArn: string): Promise<string>;
  /**
   * SimulatePrincipalPolicy of the role's identity policies (inline, managed, boundary) for each
   * action on the key. @throws AccessDeniedError, TransientError
   */
  simulate(
    roleArn: string,
    actions: readonly string[],
    keyArn: string,
    context: ReadonlyMap<string, readonly string[]>,
  ): Promise<SimulatedDecision[]>;
}

function adapt(error: unknown, action: string, resource: string): unknown {
  const name = awsErrorName(error);
  if (name === 'AccessDeniedException' || name === 'AccessDenied')
    return new AccessDeniedError(action, resource, error);
  if (isRetryable(error) || name === 'ThrottlingException' || name === 'Throttling')
    return new TransientError(`${action} on ${resource}: ${(error as Error).message}`, error);
  return error;
}

/** Creates the port over the shared (or given) clients. */
export function createKeyAccess(clients: { kms: KMSClient; iam: IAMClient }): KeyAccess {
  return {
    async describe(keyId) {
      try {
        const out = await clients.kms.send(new DescribeKeyCommand({ KeyId: keyId }));
        const meta = out.KeyMetadata;
        return {
          arn: meta?.Arn ?? keyId,
          state: meta?.KeyState ?? 'Unknown',
          manager: meta?.KeyManager ?? 'CUSTOMER',
          ...(meta?.DeletionDate ? { deletionDate: meta.DeletionDate.getTime() } : {}),
        };
      } catch (error) {
        if (awsErrorName(error) === 'NotFoundException') return null;
        throw adapt(error, 'kms:DescribeKey', keyId);
      }
    },
    async policy(keyArn) {
      try {
        const out = await clients.kms.send(new GetKeyPolicyCommand({ KeyId: keyArn, PolicyName: 'default' }));
        return out.Policy ?? '';
      } catch (error) {
        throw adapt(error, 'kms:GetKeyPolicy', keyArn);
      }
    },
    async simulate(roleArn, actions, keyArn, context) {
      const decisions: SimulatedDecision[] = [];
      let marker: string | undefined;
      try {
        do {
          const out = await clients.iam.send(
            new SimulatePrincipalPolicyCommand({
              PolicySourceArn: roleArn,
              ActionNames: [...actions],
              ResourceArns: [keyArn],
              ContextEntries: [...context].map(([name, values]) => ({
                ContextKeyName: name,
                ContextKeyValues: [...values],
                ContextKeyType: 'string',
              })),
              ...(marker ? { Marker: marker } : {}),
            }),
          );
          for (const result of out.EvaluationResults ?? [])
            decisions.push({
              action: result.EvalActionName ?? '',
              decision: result.EvalDecision ?? 'implicitDeny',
              missingContext: result.MissingContextValues ?? [],
            });
          marker = out.IsTruncated ? out.Marker : undefined;
        } while (marker);
      } catch (error) {
        throw adapt(error, 'iam:SimulatePrincipalPolicy', roleArn);
      }
      return decisions;
    },
  };
}
