/**
 * The variable that names an already-running DynamoDB Local for `startLocalStack()` (stack.ts) to
 * share (the test run's global setup starts one JVM and sets it; `npm run local` may too).
 *
 * A module of its own, with no imports, so the per-file vitest setup
 * (test/support/shared-dynamo.ts) can set it without loading the local stack, the SDK clients and
 * the stand-ins into every test file, unit tests included.
 */
export const SHARED_DYNAMODB_ENV = 'LOCAL_DYNAMODB_ENDPOINT';
