import { describe, expect, it } from 'vitest';
import { createRedriveHistory } from '../../functions/park/redrive-history.js';

describe('redrive history per idempotency key (N08)', () => {
  it('counts each REDRIVEN envelope of a key once, ignores other states and other keys, and takes the larger of history and redrive-count', () => {
    const history = createRedriveHistory();
    history.add({ idempotencyKey: 'k', messageId: 'm1', state: 'REDRIVEN' });
    history.add({ idempotencyKey: 'k', messageId: 'm1', state: 'REDRIVEN' }); // listed twice
    history.add({ idempotencyKey: 'k', messageId: 'm2', state: 'REDRIVEN' });
    history.add({ idempotencyKey: 'k', messageId: 'm3', state: 'PARKED' });
    history.add({ idempotencyKey: 'k', messageId: 'm4', state: 'IN_DLQ' });
    history.add({ idempotencyKey: 'other', messageId: 'm5', state: 'REDRIVEN' });
    expect(history.redrivesOf({ idempotencyKey: 'k', redriveCount: 0 })).toBe(2);
    // A sample copy carries redrive-count and its envelope is REDRIVEN: the same redrive, not two.
    expect(history.redrivesOf({ idempotencyKey: 'k', redriveCount: 1 })).toBe(2);
    expect(history.redrivesOf({ idempotencyKey: 'k', redriveCount: 5 })).toBe(5);
    expect(history.redrivesOf({ idempotencyKey: 'new', redriveCount: 0 })).toBe(0);
  });
});
