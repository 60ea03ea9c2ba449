/**
 * vitest global setup: one DynamoDB Local JVM for the whole test run. Every `startLocalStack()` in
 * a test file then creates a table of its own on it (a random suffix) instead of starting a JVM,
 * and deletes it on stop. SQS stays one in-process server per stack: queue names are per test
 * file, so sharing it would need every test to pick unique names.
 *
 * The JVM is launched, not awaited: test files start at once, and only those of a project that
 * uses DynamoDB wait for it to answer (test/support/dynamo-ready.ts), so unit and infra files run
 * while it starts. This module loads local/dynamo-local.ts only (no SDK, no stand-ins).
 *
 * @see https://vitest.dev/config/#globalsetup
 */
import type { TestProject } from 'vitest/node';
import { type LaunchedDynamoLocal, launchDynamoLocal } from '../../local/dynamo-local.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Endpoint of the run's shared DynamoDB Local (absent when only unit tests run). */
    dynamoEndpoint: string | undefined;
  }
}

let dynamo: LaunchedDynamoLocal | undefined;

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
  dynamo ??= await launchDynamoLocal();
  project.provide('dynamoEndpoint', dynamo.endpoint);
}

export async function teardown(): Promise<void> {
  await dynamo?.stop();
}
