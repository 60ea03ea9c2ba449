/**
 * IAM `SimulatePrincipalPolicy` as one signed request (platform/signed-fetch.ts) per page, not
 * through `@aws-sdk/client-iam`: that client registers every IAM error class and operation
 * schema at import and brings the awsQuery/XML protocol, about 40 KB of preflight's bundle for
 * one call, which took it over the 500 KB every function is held to (docs/bundles.md). The
 * request is the one the client sends (awsQuery, version 2010-05-08: a form-encoded POST to `/`
 * with `Action`, `Version` and the members flattened as `ActionNames.member.1`...), so any endpoint that
 * answers the SDK client answers it too, and the IAM action is the
 * same `iam:SimulatePrincipalPolicy`. The XML answer is read with the SDK's own parser
 * (`parseXML` of `@aws-sdk/xml-builder`, the one its XML protocols use).
 *
 * Endpoint: `AWS_ENDPOINT_URL_IAM` (or `AWS_ENDPOINT_URL`, config `iamEndpoint`), else the global
 * endpoint of the role's partition, signed for that partition's IAM Region.
 *
 * @see https://docs.aws.amazon.com/IAM/latest/APIReference/API_SimulatePrincipalPolicy.html
 * @see https://docs.aws.amazon.com/IAM/latest/APIReference/CommonErrors.html
 * @see https://docs.aws.amazon.com/general/latest/gr/iam-service.html
 */
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { parseXML } from '@aws-sdk/xml-builder';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider, Provider } from '@smithy/types';
import { AccessDeniedError, InternalError, TransientError } from '#platform/errors.js';
import { awsSigner, signedFetch } from '#platform/signed-fetch.js';

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

/** Options of {@link createPolicySimulator}. */
export interface PolicySimulatorOptions {
  /** @default the SDK's default credential chain */
  credentials?: AwsCredentialIdentityProvider | Provider<AwsCredentialIdentity>;
  /** IAM's endpoint (config `iamEndpoint`). @default the global endpoint of the role's partition */
  endpoint?: string | undefined;
  /** Per request, milliseconds. @default 10000 */
  timeoutMs?: number;
}

/** IAM's global endpoint and signing Region per partition. */
const PARTITIONS: Readonly<Record<string, { endpoint: string; region: string }>> = {
  aws: { endpoint: 'https://iam.amazonaws.com', region: 'us-east-1' },
  'aws-us-gov': { endpoint: 'https://iam.us-gov.amazonaws.com', region: 'us-gov-west-1' },
  'aws-cn': { endpoint: 'https://iam.cn-north-1.amazonaws.com.cn', region: 'cn-north-1' },
};

/** The request body: awsQuery form encoding of the input members. */
export function simulateForm(
  roleArn: string,
  actions: readonly string[],
  resourceArn: string,
  context: ReadonlyMap<string, readonly string[]>,
  marker: string | undefined,
): string {
  const form = new URLSearchParams({ Action: 'SimulatePrincipalPolicy', Version: '2010-05-08' });
  form.set('PolicySourceArn', roleArn);
  for (const [i, action] of actions.entries()) form.set(`ActionNames.member.${i + 1}`, action);
  form.set('ResourceArns.member.1', resourceArn);
  for (const [i, [name, values]] of [...context].entries()) {
    const entry = `ContextEntries.member.${i + 1}`;
    form.set(`${entry}.ContextKeyName`, name);
    for (const [j, value] of values.entries()) form.set(`${entry}.ContextKeyValues.member.${j + 1}`, value);
    form.set(`${entry}.ContextKeyType`, 'string');
  }
  if (marker) form.set('Marker', marker);
  return form.toString();
}

/** The items of an awsQuery list (`<X><member>..</member>...</X>`; one member parses as an object). */
function members<T>(list: unknown): T[] {
  const member = (list as { member?: T | T[] } | undefined)?.member;
  return member === undefined ? [] : Array.isArray(member) ? member : [member];
}

/** The parsed answer; `{}` for an empty or non-XML body (a proxy's 502 page): the status decides then. */
function readXml(text: string): Record<string, unknown> {
  try {
    return text.trim() === '' ? {} : (parseXML(text) as Record<string, unknown>);
  } catch {
    return {};
  }
}

interface ResultXml {
  EvalActionName?: string;
  EvalDecision?: string;
  MissingContextValues?: unknown;
}

/** Creates the simulator. */
export function createPolicySimulator(options: PolicySimulatorOptions): PolicySimulator {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const credentials = options.credentials ?? defaultProvider();
  return {
    async simulate(roleArn, actions, resourceArn, context) {
      const action = `iam:SimulatePrincipalPolicy ${roleArn}`;
      const partition = PARTITIONS[roleArn.split(':')[1] ?? ''];
      if (!partition && !options.endpoint)
        throw new InternalError(`${action}: no IAM endpoint known for the role's partition`);
      const signer = awsSigner({
        service: 'iam',
        region: partition?.region ?? 'us-east-1',
        credentials,
      });
      const url = new URL(options.endpoint ?? (partition as { endpoint: string }).endpoint);
      const results: SimulatedDecision[] = [];
      let marker: string | undefined;
      do {
        const response = await signedFetch(
          signer,
          {
            method: 'POST',
            url,
            headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
            body: simulateForm(roleArn, actions, resourceArn, context, marker),
            timeoutMs,
          },
          action,
        );
        const text = await response.text();
        const xml = readXml(text);
        if (!response.ok) {
          const error = (xml.ErrorResponse as { Error?: { Code?: string; Message?: string } } | undefined)
            ?.Error;
          const code = error?.Code ?? `HTTP${response.status}`;
          const message = `${action}: ${code}: ${error?.Message ?? text.slice(0, 500)}`;
          if (code === 'AccessDenied' || code === 'AccessDeniedException')
            throw new AccessDeniedError('iam:SimulatePrincipalPolicy', roleArn);
          if (response.status === 429 || response.status >= 500 || /^Throttling/.test(code))
            throw new TransientError(message);
          throw new InternalError(message);
        }
        const result = (
          xml.SimulatePrincipalPolicyResponse as { SimulatePrincipalPolicyResult?: Record<string, unknown> }
        )?.SimulatePrincipalPolicyResult;
        for (const r of members<ResultXml>(result?.EvaluationResults))
          results.push({
            action: r.EvalActionName ?? '',
            decision: r.EvalDecision ?? 'implicitDeny',
            missingContext: members<string>(r.MissingContextValues),
          });
        marker = result?.IsTruncated === 'true' ? (result.Marker as string | undefined) : undefined;
      } while (marker);
      return results;
    },
  };
}
