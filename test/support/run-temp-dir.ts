/**
 * vitest global setup: the run's temporary files (CDK's `cdk.out*` assemblies, bundles, the S3
 * stand-in's buckets) go under one directory of the run's own, set as `TMPDIR` before the workers
 * start (Node's `os.tmpdir()` reads it), and removed when the run ends.
 *
 * @see https://nodejs.org/api/os.html#ostmpdir
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const OWNER = 'DLQ_REDRIVE_TEST_TMPDIR';
let created: { dir: string; previous: string | undefined } | undefined;

export function setup(): void {
  if (process.env[OWNER]) return;
  const dir = mkdtempSync(join(tmpdir(), 'dlq-redrive-test-'));
  created = { dir, previous: process.env.TMPDIR };
  process.env[OWNER] = dir;
  process.env.TMPDIR = dir;
}

export function teardown(): void {
  if (!created) return;
  rmSync(created.dir, { recursive: true, force: true });
  if (created.previous === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = created.previous;
  delete process.env[OWNER];
  created = undefined;
}
