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
    /** Endpoint of the run's shared DynamoDB Local. */
    dynamoEndpoint: string;
  }
}

let dynamo: DynamoLocal | undefined;

export async function setup(project: TestProject): Promise<void> {
  dynamo = await startDynamoLocal();
  project.provide('dynamoEndpoint', dynamo.endpoint);
}

export async function teardown(): Promise<void> {
  await dynamo?.stop();
}
