import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  devDependencies: Record<string, string>;
  allowScripts: Record<string, boolean>;
};

describe('the toolchain runs on the Lambda runtime major', () => {
  it('runs the tests on Node 22, the major of the nodejs22.x runtime the stack deploys', () => {
    const infra = fileURLToPath(new URL('../../infra/', import.meta.url));
    const sources = readdirSync(infra, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(join(infra, f), 'utf8'))
      .join('\n');
    const majors = new Set([...sources.matchAll(/Runtime\.NODEJS_(\d+)_X/g)].map((m) => m[1]));
    expect([...majors]).toHaveLength(1);
    const runtimeMajor = [...majors][0];
    expect(runtimeMajor).toBe('22');
    expect(process.versions.node.split('.')[0]).toBe(runtimeMajor);
  });

  it('installs that Node from the npm registry (the node package, allowed to run its install script)', () => {
    expect(pkg.devDependencies.node?.split('.')[0]).toBe('22');
    expect(pkg.allowScripts.node).toBe(true);
  });
});
