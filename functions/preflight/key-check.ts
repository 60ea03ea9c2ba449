/**
 * Preflight's KMS check: may the pipeline's roles use the key of every queue the redrive touches?
 *
 * For the DLQ, every destination and the parking queue, the queue's `KmsMasterKeyId` is looked
 * up (DescribeKey: it exists, is Enabled, is customer managed), its key policy read
 * (GetKeyPolicy), and for each pipeline role that needs the key on that queue class
 * (`PIPELINE_KEY_USERS`: receiving decrypts, sending generates a data key and decrypts) both sides
 * of KMS's rule are checked:
 * - the key policy (`functions/preflight/policy-document.ts`) must allow the role, directly or by
 *   delegating to the account's IAM policies;
 * - when it delegates, the role's IAM policies must allow the action: IAM's policy simulator
 *   (SimulatePrincipalPolicy, identity policies only: it cannot put a role against a resource
 *   policy) with the context SQS's call to KMS carries, `kms:ViaService` =
 *   `sqs.<region>.amazonaws.com` and `kms:CallerAccount`. Calling KMS from preflight instead
 *   would be preflight's own role, not the users', and would falsely refuse keys whose policy
 *   allows use only through SQS.
 *
 * Not checked, and why: a queue without `KmsMasterKeyId` (unencrypted, or SSE-SQS with
 * `SqsManagedSseEnabled`: SQS holds the keys, no KMS permission is involved) and `alias/aws/sqs`
 * (the AWS managed key: its key policy lets every principal of the account use it through SQS,
 * and no policy of ours can change that).
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-key-management.html
 * @see https://docs.aws.amazon.com/kms/latest/developerguide/conditions-kms.html#conditions-kms-via-service
 * @see https://docs.aws.amazon.com/kms/latest/developerguide/key-state.html
 */
import type { KeyUser } from '#platform/config.js';
import { AccessDeniedError } from '#platform/errors.js';
import type { QueueInfo } from '#platform/sqs-queues.js';
import type { KeyAccess, KeyDescription } from './kms-keys.js';
import { readKeyPolicy } from './policy-document.js';

/** The queue classes a key can protect, as {@link KeyUser} lists their actions. */
export type QueueClass = 'dlq' | 'destination' | 'parking';

/** One queue to check. */
export interface KeyedQueue {
  queue: Pick<QueueInfo, 'arn' | 'name' | 'attributes'>;
  class: QueueClass;
  /** A problem with this queue's key refuses the redrive; otherwise it is a warning. */
  required: boolean;
}

/** What the check found: refusals (each names queue, key, role and action) and warnings. */
export interface KeyCheckResult {
  problems: string[];
  warnings: string[];
}

const CLASS_NAME: Readonly<Record<QueueClass, string>> = {
  dlq: 'DLQ',
  destination: 'destination',
  parking: 'parking queue',
};

/** `alias/aws/sqs`, by name or alias ARN. */
const isAwsManagedSqsAlias = (keyId: string) => keyId === 'alias/aws/sqs' || keyId.endsWith(':alias/aws/sqs');

const REGISTER_HINT =
  "the pipeline's roles are granted KMS only on registered keys: name it in MonitoredDlq (dlqEncryptionKey / sourceQueueEncryptionKeys) or PipelineStack (parkingQueueEncryptionKey)";

function stateProblem(key: KeyDescription): string | undefined {
  if (key.state === 'Enabled') return undefined;
  if (key.state === 'PendingDeletion')
    return `is pending deletion${key.deletionDate ? ` (deleted at ${new Date(key.deletionDate).toISOString()})` : ''}: cancel the deletion (CancelKeyDeletion) and enable it`;
  return `is ${key.state}: SQS cannot encrypt or decrypt with it`;
}

/** Why one role may not use one action, or undefined when it may (or the answer is unsure). */
function denial(
  verdict: ReturnType<typeof readKeyPolicy>,
  identity: { decision: string; missingContext: string[] } | undefined,
): { reason: string } | { unsure: string } | undefined {
  if (identity?.decision === 'explicitDeny') return { reason: 'an IAM policy of the role denies it' };
  switch (verdict.kind) {
    case 'denies':
      return { reason: `key policy statement ${verdict.statement} denies it` };
    case 'silent':
      return { reason: "the key policy neither allows the role nor lets the account's IAM policies decide" };
    case 'allows':
      return undefined;
    case 'undecidable':
      return { unsure: `the key policy could not be read for it (${verdict.reason})` };
    case 'delegates':
      if (identity?.decision === 'allowed') return undefined;
      return {
        reason: `no IAM policy of the role allows it (${identity?.decision ?? 'implicitDeny'}${
          identity?.missingContext.length ? `; its policies test ${identity.missingContext.join(', ')}` : ''
        })`,
      };
  }
}

/**
 * Checks every queue's key for every role that needs it.
 *
 * @param users - the pipeline roles (`PIPELINE_KEY_USERS`); empty: key states only.
 * @throws AccessDeniedError when the simulator may not be called (the stack grants preflight
 *   `iam:SimulatePrincipalPolicy` on the pipeline's roles), TransientError.
 */
export async function checkQueueKeys(
  queues: readonly KeyedQueue[],
  users: readonly KeyUser[],
  keys: KeyAccess,
): Promise<KeyCheckResult> {
  const problems: string[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  let unsimulated = false;
  for (const { queue, class: cls, required } of queues) {
    const keyId = queue.attributes.KmsMasterKeyId;
    if (!keyId || isAwsManagedSqsAlias(keyId) || seen.has(`${queue.arn} ${cls}`)) continue;
    seen.add(`${queue.arn} ${cls}`);
    const found = (required ? problems : warnings).push.bind(required ? problems : warnings);
    const prefix = `${CLASS_NAME[cls]} ${queue.name} is encrypted with KMS key ${keyId}`;
    let key: KeyDescription | null;
    let policy: string;
    try {
      key = await keys.describe(keyId);
      if (key === null) {
        found(`${prefix}, which does not exist: SQS cannot use it for any message`);
        continue;
      }
      const state = stateProblem(key);
      if (state) {
        found(`${prefix}, which ${state}`);
        continue;
      }
      if (key.manager === 'AWS') continue;
      const needing = users.filter((u) => u[cls].length > 0);
      if (needing.length === 0) {
        unsimulated ||= users.length === 0;
        continue;
      }
      policy = await keys.policy(key.arn);
    } catch (error) {
      if (!(error instanceof AccessDeniedError)) throw error;
      found(`${prefix}, which preflight may not read (${error.message}): ${REGISTER_HINT}`);
      continue;
    }
    const region = queue.arn.split(':')[3] ?? '';
    for (const user of users.filter((u) => u[cls].length > 0)) {
      const account = user.roleArn.split(':')[4] ?? '';
      const context = new Map<string, readonly string[]>([
        ['kms:ViaService', [`sqs.${region}.amazonaws.com`]],
        ['kms:CallerAccount', [account]],
      ]);
      const decisions = await keys.simulate(user.roleArn, user[cls], key.arn, context);
      const denied = new Map<string, string[]>();
      for (const action of user[cls]) {
        const verdict = readKeyPolicy(policy, {
          principalArn: user.roleArn,
          accountId: account,
          action,
          keyArn: key.arn,
          context,
        });
        const outcome = denial(
          verdict,
          decisions.find((d) => d.action.toLowerCase() === action.toLowerCase()),
        );
        if (outcome === undefined) continue;
        if ('unsure' in outcome) {
          warnings.push(
            `${prefix}: ${user.function} (${user.roleArn}) ${action} not verified: ${outcome.unsure}`,
          );
          continue;
        }
        denied.set(outcome.reason, [...(denied.get(outcome.reason) ?? []), action]);
      }
      for (const [reason, actions] of denied)
        found(
          `${prefix}: the ${user.function} role (${user.roleArn}) may not ${actions.join(', ')} on it: ${reason}`,
        );
    }
  }
  if (unsimulated)
    warnings.push(
      "KMS: PIPELINE_KEY_USERS is not set, so the pipeline roles' use of the queues' keys was not checked (key states were)",
    );
  return { problems, warnings };
}
