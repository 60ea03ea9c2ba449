import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
const REPO_ROOT = join(PACKAGE_DIR, '..', '..');
const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  peerDependencies: Record<string, string>;
  dependencies?: Record<string, string>;
};

describe('the package entry points', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'consumer-idempotency-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('reach only the package sources, Node built-ins and the declared dependencies', async () => {
    const result = await build({
      entryPoints: [join(PACKAGE_DIR, 'src/index.ts'), join(PACKAGE_DIR, 'src/key.ts')],
      bundle: true,
      write: false,
      metafile: true,
      outdir: scratch,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      minify: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs).map((p) => relative(PACKAGE_DIR, join(REPO_ROOT, p)));
    expect(inputs.filter((p) => !p.startsWith('src/'))).toEqual([]);
    const external = new Set(
      Object.values(result.metafile.outputs).flatMap((o) =>
        o.imports.filter((i) => i.external).map((i) => i.path),
      ),
    );
    const undeclared = [...external].filter(
      (p) =>
        !p.startsWith('node:') && !(p in manifest.peerDependencies) && !(p in (manifest.dependencies ?? {})),
    );
    expect(undeclared).toEqual([]);
    expect(external.has('@aws-sdk/client-dynamodb')).toBe(true);
  });

  it('pack into a tarball whose built JavaScript runs on plain Node.js', () => {
    const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', scratch], {
      cwd: PACKAGE_DIR,
      encoding: 'utf8',
    }).trim();
    expect(tarball).toBe(`dlq-redrive-consumer-idempotency-${manifest.version}.tgz`);
    const installed = join(scratch, 'app', 'node_modules', '@dlq-redrive', 'consumer-idempotency');
    mkdirSync(installed, { recursive: true });
    execFileSync('tar', ['-xzf', join(scratch, tarball), '-C', installed, '--strip-components=1']);
    for (const dependency of ['@aws-sdk', ...Object.keys(manifest.dependencies ?? {})])
      symlinkSync(
        join(REPO_ROOT, 'node_modules', dependency),
        join(scratch, 'app', 'node_modules', dependency),
      );
    const script = `
      import { consumerIdempotency, recordKey } from '@dlq-redrive/consumer-idempotency';
      import { hashKey } from '@dlq-redrive/consumer-idempotency/key';
      const record = { messageId: 'm-1', body: '{"orderId":"o-1"}', eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:orders' };
      let refused = '';
      try { consumerIdempotency({ consumer: 'a#b', tableName: 't', recordTtlSeconds: 60 }); }
      catch (e) { refused = e.name + ': ' + e.problems.length; }
      const big = { ...record, body: '{"orderId":1234567890123456789}' };
      console.log(JSON.stringify({ key: recordKey(record, { jsonPath: '$.orderId' }).key,
        big: recordKey(big, { jsonPath: '$.orderId' }).key,
        hash: recordKey(record).key === hashKey(record.eventSourceARN, record.body, {}), refused }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: join(scratch, 'app'),
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual({
      key: 'o-1',
      big: '1234567890123456789',
      hash: true,
      refused: 'InvalidOptionsError: 2',
    });
    const files = execFileSync('tar', ['-tzf', join(scratch, tarball)], { encoding: 'utf8' }).split('\n');
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    expect(files).toContain('package/README.md');
  });
});
