/**
 * The local stack of a crash test file (vitest): started before its tests with the crash matrix's
 * short visibility timeouts (test/crash/env.ts has the script's), stopped after them.
 */
import { afterAll, beforeAll } from 'vitest';
import { type LocalStack, startLocalStack } from '../../local/stack.js';

/** Registers the file's beforeAll / afterAll hooks for one local stack. */
export function useCrashStack(): void {
  let stack: LocalStack | undefined;
  beforeAll(async () => {
    process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS = '3';
    process.env.TRIAGE_SAFETY_MARGIN_MS = '3000';
    stack = await startLocalStack();
  });
  afterAll(async () => {
    delete process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS;
    delete process.env.TRIAGE_SAFETY_MARGIN_MS;
    await stack?.stop();
  });
}
