// Unit tests for the per-email ordering rules (lambdas/domain/webhooks/ordering.ts): who holds a delivery back,
// whom a finished delivery wakes, and when a held one is looked at again without a release.
import { describe, expect, it } from 'vitest';
import { earlierThan, HOLD_RECHECK_MS, recheckAt, toRelease } from '../../lambdas/domain/webhooks/ordering';

const entry = (deliveryId: string, sequence: number) => ({ deliveryId, sequence });

describe('earlierThan', () => {
  it('holds a delivery behind the unfinished ones of a lower sequence only, never behind itself', () => {
    const lane = [entry('a', 10), entry('b', 20), entry('c', 20), entry('d', 30)];

    expect(earlierThan(lane, entry('d', 30))).toEqual([entry('a', 10), entry('b', 20), entry('c', 20)]);
    expect(earlierThan(lane, entry('b', 20))).toEqual([entry('a', 10)]);
    expect(earlierThan(lane, entry('a', 10))).toEqual([]);
  });
});

describe('toRelease', () => {
  it('wakes the next sequence after the finished one, all of its entries together', () => {
    const left = [entry('b', 20), entry('c', 20), entry('d', 30)];

    expect(toRelease(left, entry('a', 10))).toEqual([entry('b', 20), entry('c', 20)]);
  });

  it('wakes nothing when nothing later is left, and never wakes an earlier one (it is running)', () => {
    expect(toRelease([], entry('a', 10))).toEqual([]);
    expect(toRelease([entry('a', 10)], entry('b', 20))).toEqual([]);
    expect(toRelease([entry('a', 10), entry('c', 30)], entry('b', 20))).toEqual([entry('c', 30)]);
  });

  it('ignores the finished delivery itself if the lane still lists it', () => {
    expect(toRelease([entry('a', 10), entry('b', 20)], entry('a', 10))).toEqual([entry('b', 20)]);
  });
});

describe('recheckAt', () => {
  it('is the margin past now when the blocker is due now, or past its next attempt when that is later', () => {
    expect(recheckAt(1_000, [null])).toBe(1_000 + HOLD_RECHECK_MS);
    expect(recheckAt(1_000, [500])).toBe(1_000 + HOLD_RECHECK_MS);
    expect(recheckAt(1_000, [300_000, 2_000])).toBe(300_000 + HOLD_RECHECK_MS);
  });
});
