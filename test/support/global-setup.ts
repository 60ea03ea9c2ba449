/**
 * vitest global setup: one DynamoDB Local JVM for the whole test run. Every `startLocalStack()` in
 * a test file then creates a table of its own on it (a random suffix) instead of starting a JVM,
 * and deletes it on stop. SQS stays one in-process server per stack: queue names are per test
 * file, so sharing it would need every test to pick unique names.
 *
 * @see https://vitest.dev/config/#globalsetup
 */
import type { TestProject } from 'vitest/node';
import { type DynamoLocal, startDynamoLocal } from '../../local/stack.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Endpoint of the run's shared DynamoDB Local (absent when only unit tests run). */
    dynamoEndpoint: string | undefined;
  }
}

let dynamo: DynamoLocal | undefined;

/**
 * True when the command line names only files or folders that never start a local stack
 * (`vitest run test/unit`): then no JVM is started for nothing.
 */
function onlyUnitTestsSelected(argv: readonly string[]): boolean {
  const filters = argv.slice(2).filter((a) => !a.startsWith('-') && a !== 'run' && a !== 'watch');
  return filters.length > 0 && filters.every((f) => /^(\.\/)?test\/unit(\/|$)/.test(f));
}

export async function setup(project: TestProject): Promise<void> {
  if (onlyUnitTestsSelected(process.argv)) return;
  dynamo = await startDynamoLocal();
  project.provide('dynamoEndpoint', dynamo.endpoint);
}

export async function teardown(): Promise<void> {
  await dynamo?.stop();
}
