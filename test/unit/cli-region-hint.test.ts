import { describe, expect, it } from 'vitest';
import type { CliContext } from '../../cli/context.js';
import { runCli } from '../../cli/main.js';

/** A context whose store fails the way the SDK does when no Region is configured. */
function contextFailing(message: string): CliContext {
  const fail = async () => {
    throw new Error(message);
  };
  return { now: () => 0, incidents: { listIncidents: fail } } as unknown as CliContext;
}

async function run(message: string): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const io = { stdout: { write: () => undefined }, stderr: { write: (t: string) => (stderr += t) } };
  const ctx = { ...contextFailing(message), io } as CliContext;
  const code = await runCli(['incidents'], io, ctx);
  return { code, stderr };
}

describe('dlq without a Region', () => {
  it('says what to do, not only "Region is missing"', async () => {
    const { code, stderr } = await run('Region is missing');
    expect(code).toBe(1);
    expect(stderr).toMatch(/^dlq: Region is missing \(set AWS_REGION/);
    expect(stderr).toContain('npm run local');
    expect(stderr).toContain('export');
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });

  it('adds nothing to another error', async () => {
    const { stderr } = await run('AccessDeniedException: nope');
    expect(stderr).toBe('dlq: AccessDeniedException: nope\n');
  });
});
