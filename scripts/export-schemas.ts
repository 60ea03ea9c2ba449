/**
 * Writes the JSON Schemas generated from the zod schemas: `npm run schemas`.
 * `statemachines/execution-input.schema.json` is never edited by hand; a test fails when the
 * committed file differs from what {@link schemaFiles} generates.
 *
 * @see https://zod.dev/json-schema
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { ExecutionInput } from '#incident/execution-input.js';

/**
 * The execution input as JSON Schema (draft 2020-12), for the console docs and any caller that
 * wants to check an input before StartExecution. Unknown fields are refused
 * (`additionalProperties: false`); cross-field rules (ascending rampRates within maxRate, FIFO
 * matching, destination not the DLQ) exist only in the zod schema that ValidateInput runs.
 */
export function executionInputJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ExecutionInput, {
    io: 'input',
    target: 'draft-2020-12',
    // The catchall that names each unknown field is a zod custom check: JSON Schema says it as
    // additionalProperties: false.
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  closeObjects(schema);
  return {
    $schema: schema.$schema,
    $id: 'https://github.com/dlq-redrive/dlq-redrive/statemachines/execution-input.schema.json',
    title: 'ExecutionInput',
    ...schema,
    additionalProperties: false,
  };
}

/**
 * Nested strict objects (selection, transform, their conditions) name unknown keys with a zod
 * custom check, which JSON Schema says as `additionalProperties: false`.
 */
function closeObjects(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) closeObjects(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const record = node as Record<string, unknown>;
  if (record.type === 'object' && record.properties !== undefined) record.additionalProperties = false;
  for (const value of Object.values(record)) closeObjects(value);
}

/** Every generated file: path relative to the repository root, then its exact text. */
export function schemaFiles(): Record<string, string> {
  return {
    'statemachines/execution-input.schema.json': `${JSON.stringify(executionInputJsonSchema(), null, 2)}\n`,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = new URL('../', import.meta.url);
  for (const [path, text] of Object.entries(schemaFiles())) {
    writeFileSync(new URL(path, root), text);
    console.log(`wrote ${path}`);
  }
}
