import { describe, expect, it } from 'vitest';
import { applyLocalRunEnv } from '../../local/demo/env.js';

describe('local run env (npm start, npm run local)', () => {
  it("silences the handlers' JSON logs, ERROR and WARN too, without --verbose", () => {
    const env: NodeJS.ProcessEnv = {};
    applyLocalRunEnv(['node', 'local/main.ts', '--scenario', 'crash-after-send'], env);
    expect(env.POWERTOOLS_LOG_LEVEL).toBe('SILENT');
  });

  it('keeps them with --verbose', () => {
    const env: NodeJS.ProcessEnv = {};
    applyLocalRunEnv(['node', 'local/main.ts', '--verbose'], env);
    expect(env.POWERTOOLS_LOG_LEVEL).toBeUndefined();
  });

  it('leaves a level set by the caller alone', () => {
    const env: NodeJS.ProcessEnv = { POWERTOOLS_LOG_LEVEL: 'DEBUG' };
    applyLocalRunEnv(['node', 'local/main.ts'], env);
    expect(env.POWERTOOLS_LOG_LEVEL).toBe('DEBUG');
  });
});
