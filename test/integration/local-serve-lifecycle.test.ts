import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { SHARED_DYNAMODB_ENV } from '../../local/shared-dynamo-env.js';
import { scaled } from '../support/timeouts.js';

/** Every process below `root` (from /proc), with its command name. */
function descendants(root: number): Map<number, string> {
  const parentOf = new Map<number, { ppid: number; comm: string }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parentOf.set(Number(entry), { ppid, comm });
    } catch {
      // Exited while listed.
    }
  }
  const found = new Map<number, string>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, { ppid, comm }] of parentOf)
      if (!found.has(pid) && (ppid === root || found.has(ppid))) {
        found.set(pid, comm);
        grew = true;
      }
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function servedBy(npm: ChildProcess): Promise<void> {
  let out = '';
  for await (const chunk of npm.stdout ?? []) {
    out += String(chunk);
    if (out.includes('AWS_ENDPOINT_URL_DYNAMODB')) return;
  }
  throw new Error('npm run local ended before printing its environment');
}

describe.skipIf(process.platform !== 'linux')('npm run local and its children', () => {
  it('a SIGKILL of the npm process leaves no node, shell or java process of the stack behind', async () => {
    // Its own DynamoDB Local (a JVM), not the test run's shared one.
    const { [SHARED_DYNAMODB_ENV]: _shared, ...env } = process.env;
    const npm = spawn('npm', ['run', 'local', '--', '--json'], {
      stdio: ['ignore', 'pipe', 'ignore'],
      detached: true,
      env,
    });
    await servedBy(npm);
    const tree = descendants(npm.pid as number);
    expect([...tree.values()]).toContain('java');
    expect([...tree.values()].filter((c) => c.startsWith('node')).length).toBeGreaterThanOrEqual(2);
    npm.kill('SIGKILL');
    const deadline = Date.now() + scaled(20_000);
    while ([...tree.keys()].some(alive) && Date.now() < deadline) await sleep(250);
    const left = [...tree].filter(([pid]) => alive(pid)).map(([pid, comm]) => `${pid} ${comm}`);
    for (const [pid] of tree) if (alive(pid)) process.kill(pid, 'SIGKILL');
    expect(left).toEqual([]);
  });
});
