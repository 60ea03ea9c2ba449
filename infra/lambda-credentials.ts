/**
 * The AWS SDK credential provider of the Lambda bundles: the execution role's credentials from
 * the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), which Lambda
 * sets in every execution environment.
 *
 * Every SDK client's runtime config imports `defaultProvider` from
 * `@aws-sdk/credential-provider-node`, the full chain (environment, SSO, shared ini files with
 * assume-role, process, web identity, container and instance metadata). On Lambda the chain
 * always stops at its first link, the environment, but the other links bring STS, SSO OIDC and
 * Signin clients into the bundle: about 145 KB of each minified function bundle. The stack's
 * esbuild bundling aliases `@aws-sdk/credential-provider-node` to this module
 * ({@link ./bundling.ts}), so a bundle holds only the link Lambda uses. Tests, the local stack and
 * the CLI run unbundled and keep the full chain.
 *
 * A bundle run outside Lambda without those variables fails its first AWS call with the SDK's
 * `CredentialsProviderError` ("Unable to find environment variable credentials"), never with a
 * credential from somewhere else.
 *
 * @see https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime
 * @see https://docs.aws.amazon.com/sdk-for-javascript/v3/developer-guide/setting-credentials-node.html
 * @see https://esbuild.github.io/api/#alias
 */
import { type FromEnvInit, fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * Same name and call shape as `@aws-sdk/credential-provider-node`'s `defaultProvider`, which the
 * SDK clients call with their config (the logger is the field used).
 */
export const defaultProvider = (init: FromEnvInit = {}): ReturnType<typeof fromEnv> => fromEnv(init);
