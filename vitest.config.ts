import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration suites each start their own local stack (a JVM for DynamoDB Local);
    // two cores run at most two at once without starving them.
    maxWorkers: 2,
    // Handlers log JSON lines; tests that expect failures would fill the output with ERROR lines.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_LOG_LEVEL: 'SILENT' },
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
