// The send-rate rule (lambdas/domain/email/send-rate.ts) on a fake clock: by default copies go evenly spaced
// from the first, one per 1/rate seconds, whatever the rate's fraction, so no second holds more than ⌈rate⌉;
// a larger burst goes at once first; idle time refills up to the burst, no further; a reservation that would
// wait past its limit takes nothing.
import { describe, expect, it } from 'vitest';
import {
  fullBucket,
  rateRule,
  reserve,
  type SendBucket,
  type SendRateRule,
} from '../../lambdas/domain/email/send-rate';

/** Reserves `n` copies at `now` one after the other; the wait each was given. */
function reserveMany(bucket: SendBucket, rule: SendRateRule, now: number, n: number) {
  const waits: number[] = [];
  let current = bucket;
  for (let i = 0; i < n; i++) {
    const taken = reserve(current, rule, now);
    if (!taken) throw new Error('refused without a limit');
    waits.push(taken.waitMs);
    current = taken.bucket;
  }
  return { waits, bucket: current };
}

/** The most copies starting within any one second. */
function busiestSecond(starts: readonly number[]): number {
  return Math.max(...starts.map((t) => starts.filter((u) => u >= t && u < t + 1000).length));
}

describe('send-rate rule', () => {
  it('spaces copies evenly from the first by default: no second holds more than ⌈rate⌉', () => {
    // Arrange
    const rule = rateRule(14);

    // Act
    const { waits } = reserveMany(fullBucket(rule, 0), rule, 0, 50);

    // Assert
    expect(waits.slice(0, 4)).toEqual([0, 72, 143, 215]);
    expect(busiestSecond(waits)).toBe(14);
  });

  it('lets a burst go at once, then one copy per 1/rate seconds', () => {
    // Arrange
    const rule = rateRule(14, 5);

    // Act
    const { waits } = reserveMany(fullBucket(rule, 0), rule, 0, 8);

    // Assert
    expect(waits).toEqual([0, 0, 0, 0, 0, 72, 143, 215]);
  });

  it('keeps the steady state: N copies at rate R end no sooner than (N - burst) / R seconds', () => {
    for (const [rate, burst, n] of [
      [14, 1, 100],
      [2, 1, 9],
      [50, 10, 500],
      [1.4, 1, 50],
    ] as const) {
      const rule = rateRule(rate, burst);
      const { waits } = reserveMany(fullBucket(rule, 0), rule, 0, n);
      const bound = ((n - burst) / rate) * 1000;
      expect(waits.at(-1)).toBeGreaterThanOrEqual(bound);
      expect(waits.at(-1)).toBeLessThan(bound + 1);
    }
  });

  it('paces fractional rates: 1.4/s is one copy every 714.3 ms', () => {
    // Arrange
    const rule = rateRule(1.4);

    // Act
    const { waits } = reserveMany(fullBucket(rule, 0), rule, 0, 5);

    // Assert
    expect(waits).toEqual([0, 715, 1429, 2143, 2858]);
  });

  it('paces rates below one copy a second', () => {
    // Arrange
    const rule = rateRule(0.25);

    // Act
    const { waits } = reserveMany(fullBucket(rule, 0), rule, 0, 3);

    // Assert
    expect(waits).toEqual([0, 4000, 8000]);
  });

  it('refills with idle time, up to the burst and no further', () => {
    // Arrange
    const rule = rateRule(10, 10);
    const drained = reserveMany(fullBucket(rule, 0), rule, 0, 10).bucket;

    // Act: half a second idle refills 5 tokens; an hour idle refills only the burst.
    const afterHalf = reserveMany(drained, rule, 500, 6).waits;
    const afterHour = reserveMany(drained, rule, 3_600_000, 11).waits;

    // Assert
    expect(afterHalf).toEqual([0, 0, 0, 0, 0, 100]);
    expect(afterHour).toEqual([...Array(10).fill(0), 100]);
  });

  it('counts reservations still waiting: a copy reserved later queues behind them', () => {
    // Arrange: two reserved at 0 (the second waits until 500).
    const rule = rateRule(2);
    const { bucket } = reserveMany(fullBucket(rule, 0), rule, 0, 2);

    // Act: one more at 200 ms.
    const third = reserve(bucket, rule, 200);

    // Assert: its token comes at 1000 ms, 800 ms from now.
    expect(third?.waitMs).toBe(800);
  });

  it('refuses, taking nothing, a reservation that would wait longer than allowed', () => {
    // Arrange
    const rule = rateRule(2);
    const { bucket } = reserveMany(fullBucket(rule, 0), rule, 0, 1);

    // Act
    const refused = reserve(bucket, rule, 0, 499);
    const allowed = reserve(bucket, rule, 0, 500);

    // Assert
    expect(refused).toBeNull();
    expect(allowed?.waitMs).toBe(500);
  });

  it('refuses rates that are not positive and finite, and bursts under one copy', () => {
    for (const rate of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => rateRule(rate)).toThrow(/positive/);
    }
    expect(() => rateRule(14, 0.5)).toThrow(/at least 1/);
  });
});
