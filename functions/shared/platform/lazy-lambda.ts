/**
 * What the pipeline uses of `@aws-sdk/client-lambda`, loaded with `await import()` (clients.ts): a
 * dynamically imported module keeps every export, so importing the package itself would bring all
 * its commands; through this module esbuild keeps only these. docs/bundles.md.
 */
export { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
