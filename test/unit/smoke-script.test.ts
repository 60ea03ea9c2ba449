/**
 * scripts/smoke-aws.sh cannot run here (it deploys to a real account): its test is that bash
 * parses it and that its dry listing names a step for each permission only it exercises on AWS
 * (park, un-park, a failed run, a move task cancel), each of which the script runs.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const SCRIPT = new URL('../../scripts/smoke-aws.sh', import.meta.url).pathname;

describe('scripts/smoke-aws.sh', () => {
  it('parses (bash -n) and lists its steps without credentials: park, un-park, a failed sample, a cancelled move task', () => {
    execFileSync('bash', ['-n', SCRIPT]);
    const listed = execFileSync('bash', [SCRIPT, '--list'], { env: { PATH: process.env.PATH ?? '' } })
      .toString()
      .trim()
      .split('\n');
    const index = (pattern: RegExp) => listed.findIndex((line) => pattern.test(line));

    expect(listed.map((line) => Number(line.split('.')[0]))).toEqual(listed.map((_, i) => i + 1));
    const park = index(/Park parks the poison/);
    const unpark = index(/un-park the poison/);
    const sample = index(/fail a sample/);
    const cancel = index(/cancel a running move task/);
    expect([park, unpark, sample, cancel].every((i) => i > 0)).toBe(true);
    expect(park).toBeLessThan(unpark);
    expect(listed.at(-1)).toMatch(/tear down/);
  });

  it('runs every listed step, in order', () => {
    const text = readFileSync(SCRIPT, 'utf8');
    const listed = execFileSync('bash', [SCRIPT, '--list']).toString().trim().split('\n').length;
    const called = [...text.matchAll(/^\s*step (\d+)$/gm)].map((m) => Number(m[1]));

    expect(called).toEqual(Array.from({ length: listed - 1 }, (_, i) => i + 1));
    expect(text).toMatch(/^\s*step \$\{#STEPS\[@\]\}$/m);
  });
});
