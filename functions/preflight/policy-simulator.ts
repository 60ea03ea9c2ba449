/**
 * IAM `SimulatePrincipalPolicy` through `@aws-sdk/client-iam`, loaded on first use (platform/clients.ts
 * `iamClient`): only queues with a KMS key and registered key users are simulated, so the IAM
 * package stays off preflight's cold path. IAM errors are adapted here: `AccessDenied` becomes
 * {@link AccessDeniedError}, throttling and 5xx {@link TransientError}, anything else
 * {@link InternalError} naming IAM's code.
 *
 * @see https://docs.aws.amazon.com/IAM/latest/APIReference/API_SimulatePrincipalPolicy.html
 * @see https://docs.aws.amazon.com/IAM/latest/APIReference/CommonErrors.html
 */
import type { IAMClient } from '@aws-sdk/client-iam';
import { AccessDeniedError, InternalError, TransientError } from '#platform/errors.js';

/** One decision of the IAM policy simulator (an `EvaluationResult`, as preflight reads it). */
export interface SimulatedDecision {
  action: string;
  /** `allowed`, `explicitDeny` or `implicitDeny`. */
  decision: string;
  /** Context keys the policies test that the simulation was not given. */
  missingContext: string[];
}

/** The simulator port. */
export interface PolicySimulator {
  /**
   * SimulatePrincipalPolicy of `roleArn`'s identity policies for each action on `resourceArn`,
   * every page.
   * @param context - context key -> values, sent as `string` context entries.
   * @throws AccessDeniedError when IAM answers `AccessDenied`.
   * @throws TransientError on throttling, a 5xx, or when IAM cannot be reached.
   * @throws InternalError naming IAM's error code for any other refusal (`NoSuchEntity`, `InvalidInput`).
   */
  simulate(
    roleArn: string,
    actions: readonly string[],
    resourceArn: string,
    context: ReadonlyMap<string, readonly string[]>,
  ): Promise<SimulatedDecision[]>;
}

/** What an SDK error carries that the adapter reads. */
interface SdkError {
  name: string;
  message: string;
  $retryable?: unknown;
  $metadata?: { httpStatusCode?: number };
}

/** IAM's error as the pipeline's: see the module header. */
function adapt(error: unknown, roleArn: string): Error {
  if (error instanceof TransientError) return error;
  const e = error as SdkError;
  const status = e.$metadata?.httpStatusCode;
  const message = `iam:SimulatePrincipalPolicy ${roleArn}: ${e.name}: ${e.message}`;
  if (e.name === 'AccessDenied' || e.name === 'AccessDeniedException')
    return new AccessDeniedError('iam:SimulatePrincipalPolicy', roleArn);
  if (status === undefined || status === 429 || status >= 500 || e.$retryable || /^Throttling/.test(e.name))
    return new TransientError(message, error);
  return new InternalError(message, error);
}

/**
 * Creates the simulator over the client `iam()` resolves to.
 *
 * @param iam - loads (once) and returns the IAM client (clients.ts `iamClient`).
 */
export function createPolicySimulator(iam: () => Promise<Pick<IAMClient, 'send'>>): PolicySimulator {
  return {
    async simulate(roleArn, actions, resourceArn, context) {
      const [client, { SimulatePrincipalPolicyCommand }] = await Promise.all([
        iam(),
        import('#platform/lazy-iam.js'),
      ]);
      const entries = [...context].map(([name, values]) => ({
        ContextKeyName: name,
        ContextKeyValues: [...values],
        ContextKeyType: 'string' as const,
      }));
      const results: SimulatedDecision[] = [];
      let marker: string | undefined;
      do {
        const out = await client
          .send(
            new SimulatePrincipalPolicyCommand({
              PolicySourceArn: roleArn,
              ActionNames: [...actions],
              ResourceArns: [resourceArn],
              ...(entries.length > 0 ? { ContextEntries: entries } : {}),
              ...(marker ? { Marker: marker } : {}),
            }),
          )
          .catch((error: unknown) => {
            throw adapt(error, roleArn);
          });
        for (const r of out.EvaluationResults ?? [])
          results.push({
            action: r.EvalActionName ?? '',
            decision: r.EvalDecision ?? 'implicitDeny',
            missingContext: r.MissingContextValues ?? [],
          });
        marker = out.IsTruncated ? out.Marker : undefined;
      } while (marker);
      return results;
    },
  };
}
