/**
 * zod for everything that runs in a Lambda function: `zod/mini` (the functional API: `z.optional(
 * z.string().check(z.minLength(1)))` instead of `z.string().min(1).optional()`), with English
 * messages. Import it as a namespace, `import * as z from '#platform/zod.js'`; Biome refuses
 * `zod` itself under `functions/`.
 *
 * Why: classic zod attaches every method to every schema, so one classic schema brings all schema
 * types and the JSON Schema generator into a bundle (about 100 KB of each minified function
 * bundle); with `zod/mini` a bundle holds the schema types it uses (about 35 KB). Parsing, error
 * shapes and messages are the same (`zod/mini` shares zod's core). `zod/mini` loads no locale on
 * its own, so this module sets the English one, the same messages classic zod gives.
 *
 * @see https://zod.dev/packages/mini
 * @see https://zod.dev/error-customization#internationalization
 */
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';

z.config(en());

export * from 'zod/mini';
/**
 * The error class of every failed parse (`zod/mini` has no `ZodError` of its own; classic zod's
 * extends this one). Imported from the core directly: `z.core.$ZodError` would keep the whole core
 * namespace, locales included, in a bundle.
 */
export { $ZodError } from 'zod/v4/core';
