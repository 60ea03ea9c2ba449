import { describe, expect, it } from 'vitest';
import { checkRampRates } from '#transfer/redrive-plan.js';

describe('ramp rates in a plan that did not come through ValidateInput', () => {
  it('C06 a descending or repeating ramp is refused by the pure check before any API call', () => {
    expect(checkRampRates([50, 5]).map((p) => p.message)).toEqual([
      'rampRates[1]: 5 is not above the previous rate 50 (the ramp must ascend)',
    ]);
    expect(checkRampRates([5, 5])).toHaveLength(1);
    expect(checkRampRates([5, 50, 200])).toEqual([]);
  });
});
