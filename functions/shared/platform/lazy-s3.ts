/**
 * What the pipeline uses of `@aws-sdk/client-s3`, loaded with `await import()` (clients.ts): a
 * dynamically imported module keeps every export, so importing the package itself would bring all
 * its commands; through this module esbuild keeps only these. docs/bundles.md.
 */
export { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
