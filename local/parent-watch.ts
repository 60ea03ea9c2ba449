/**
 * Children that watch their parent: a local stack started by `npm run local` (npm, a shell, tsx,
 * then this process, all of one process group) stops when any of those ancestors is gone, so a
 * `kill` of the npm process leaves nothing running under PID 1. Linux and macOS (`/proc`, else `ps`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

/** Parent and process group of `pid`, or undefined once it is gone. */
function processInfo(pid: number): { ppid: number; pgid: number } | undefined {
  try {
    if (existsSync('/proc/self/stat')) {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [ppid, pgid] = stat
        .slice(stat.lastIndexOf(')') + 2)
        .split(' ')
        .slice(1, 3)
        .map(Number);
      return ppid !== undefined && pgid !== undefined ? { ppid, pgid } : undefined;
    }
    const [ppid, pgid] = execFileSync('ps', ['-o', 'ppid=,pgid=', '-p', String(pid)], { encoding: 'utf8' })
      .trim()
      .split(/\s+/)
      .map(Number);
    return ppid !== undefined && pgid !== undefined ? { ppid, pgid } : undefined;
  } catch {
    return undefined;
  }
}

/** This process's ancestors in its own process group (the job it was started in), nearest first. */
export function jobAncestors(pid = process.pid): number[] {
  const own = processInfo(pid);
  const ancestors: number[] = [];
  for (let info = own; info && info.ppid > 1; ) {
    const parent = processInfo(info.ppid);
    if (!parent || parent.pgid !== own?.pgid) break;
    ancestors.push(info.ppid);
    info = parent;
  }
  return ancestors;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Calls `onGone` once when the parent or any ancestor of the same job has exited (checked every
 * `intervalMs`; the timer does not keep the process alive).
 */
export function whenAncestorsExit(onGone: () => void, intervalMs = 1000): void {
  const watched = [process.ppid, ...jobAncestors()].filter(
    (pid, i, all) => pid > 1 && all.indexOf(pid) === i,
  );
  const timer = setInterval(() => {
    if (watched.every(alive)) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  timer.unref();
}
