/**
 * KMS keys of encrypted queues, and whether a role's IAM policies let it use one: DescribeKey and
 * GetKeyPolicy (KMS), SimulatePrincipalPolicy (IAM, policy-simulator.ts). KMS errors are adapted at this boundary:
 * a key that does not exist is `null`, `AccessDenied*` becomes {@link AccessDeniedError},
 * throttling and 5xx become {@link TransientError}.
 *
 * @see https://docs.aws.amazon.com/kms/latest/APIReference/API_DescribeKey.html
 * @see https://docs.aws.amazon.com/kms/latest/APIReference/API_GetKeyPolicy.html
 * @see https://docs.aws.amazon.com/IAM/latest/APIReference/API_SimulatePrincipalPolicy.html
 */
import { DescribeKeyCommand, GetKeyPolicyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { AccessDeniedError, awsErrorName, isRetryable, TransientError } from '#platform/errors.js';
import type { PolicySimulator } from './policy-simulator.js';

export type { SimulatedDecision } from './policy-simulator.js';

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

/** The KMS and IAM port. */
export interface KeyAccess {
  /** DescribeKey; null when KMS says the key does not exist. @throws AccessDeniedError, TransientError */
  describe(keyId: string): Promise<KeyDescription | null>;
  /** GetKeyPolicy (the `default` policy, the only one a key has). @throws AccessDeniedError, TransientError */
  policy(keyArn: string): Promise<string>;
  /**
   * SimulatePrincipalPolicy of the role's identity policies (inline, managed, boundary) for each
   * action on the key (policy-simulator.ts). @throws AccessDeniedError, TransientError
   */
  simulate: PolicySimulator['simulate'];
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
export function createKeyAccess(clients: { kms: KMSClient; iam: PolicySimulator }): KeyAccess {
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
    simulate: (roleArn, actions, keyArn, context) => clients.iam.simulate(roleArn, actions, keyArn, context),
  };
}
