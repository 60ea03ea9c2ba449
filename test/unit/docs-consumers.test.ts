import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('docs/consumers.md', () => {
  it('carries the sample consumer exactly as the tested example file has it', () => {
    const doc = read('docs/consumers.md');
    const section = doc.slice(doc.indexOf('## A sample consumer to copy'));
    const code = /```ts\n([\s\S]*?)```\n/.exec(section)?.[1];
    expect(code).toBe(read('packages/consumer-idempotency/examples/plain-handler.ts'));
  });
});
