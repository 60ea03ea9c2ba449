import { describe, expect, it } from 'vitest';
import { nextSteps } from '../../local/demo/next-steps.js';

describe("npm start's what to do next", () => {
  it('names the dlq commands for the incident, in aligned columns, and says whether the stack is still up', () => {
    const id = 'inc-e612e523053c6fbb1b6a2b58';
    const shared = nextSteps(id, true).split('\n');
    expect(shared[0]).toBe('What next (this stack stays up under npm run local):');
    const commands = shared.slice(1);
    expect(commands.map((l) => l.trim().split(/\s{2,}/)[0])).toEqual([
      `npx dlq show ${id}`,
      `npx dlq envelopes ${id} --export ${id}.jsonl`,
      `npx dlq redrive ${id} --dry-run`,
      'npx dlq incidents',
    ]);
    // Commands and descriptions hold no double space: the last one is the gap before the description.
    const column = commands.map((l) => l.lastIndexOf('  ') + 2);
    expect(new Set(commands.map((l) => l.length - l.trimStart().length))).toEqual(new Set([2]));
    expect(new Set(column).size).toBe(1);
    expect(nextSteps(null, false)).toMatch(/^What next: this run's local stack is gone now\./);
    expect(nextSteps(null, false)).toContain('npx dlq show <incident>');
  });
});
