import { FUNCTION_ACCESS } from '@dlq-redrive/cdk/function-catalog';
import { describe, expect, it } from 'vitest';
import {
  PARK_MAX_MESSAGES,
  PARK_TIMEOUT_SECONDS,
  parkVisibilityTimeoutSeconds,
} from '../../functions/park/park.js';
import { DEFAULT_HOLD_LIMIT } from '../../functions/shared/inventory/inventory-session.js';

describe("Park's scan budget on a deep DLQ", () => {
  it('receives up to the inventory hold limit, so a do-not-redrive message anywhere in an inventoried DLQ is reached', () => {
    expect(PARK_MAX_MESSAGES).toBe(DEFAULT_HOLD_LIMIT);
    expect(PARK_MAX_MESSAGES).toBeGreaterThanOrEqual(100_000);
  });

  it('keeps the 30 s visibility timeout on a small DLQ and grows it with the depth, so what Park holds stays hidden for its whole scan', () => {
    expect(parkVisibilityTimeoutSeconds(0)).toBe(30);
    expect(parkVisibilityTimeoutSeconds(3_000)).toBe(30);
    expect(parkVisibilityTimeoutSeconds(10_000)).toBe(80);
    expect(parkVisibilityTimeoutSeconds(100_000)).toBe(800);
    expect(parkVisibilityTimeoutSeconds(Number.NaN)).toBe(30);
  });

  it('keeps a configured visibility timeout where it covers the scan and raises it where the depth needs longer (a 5 s timeout on 100,000 messages re-received what Park held)', () => {
    expect(parkVisibilityTimeoutSeconds(600, 5)).toBe(5);
    expect(parkVisibilityTimeoutSeconds(30, 2)).toBe(2);
    expect(parkVisibilityTimeoutSeconds(10_000, 5)).toBe(80);
    expect(parkVisibilityTimeoutSeconds(100_000, 5)).toBe(800);
    expect(parkVisibilityTimeoutSeconds(100_000, 5_000)).toBe(PARK_TIMEOUT_SECONDS);
    expect(parkVisibilityTimeoutSeconds(Number.NaN, 5)).toBe(5);
  });

  it("never hides a message longer than Park's function can run, and the function's timeout is the one the catalog deploys", () => {
    expect(parkVisibilityTimeoutSeconds(DEFAULT_HOLD_LIMIT * 10)).toBe(PARK_TIMEOUT_SECONDS);
    expect(FUNCTION_ACCESS.park.timeoutSeconds).toBe(PARK_TIMEOUT_SECONDS);
  });
});
