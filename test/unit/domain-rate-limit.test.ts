// Unit tests for the fixed one-second window maths (lambdas/domain/rate-limit.ts) and its headers.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PLANS } from '../../lambdas/domain/plans';
import { counterShards, decide, rateLimitHeaders, windowAt } from '../../lambdas/domain/rate-limit';

describe('windowAt', () => {
  it.each([
    [1_000_000, 1000, 1001],
    [1_000_999, 1000, 1001],
    [1_001_000, 1001, 1002],
    [1_001_001, 1001, 1002],
    [0, 0, 1],
    [999, 0, 1],
    [1_735_732_800_000, 1_735_732_800, 1_735_732_801],
    [1_735_732_800_999, 1_735_732_800, 1_735_732_801],
  ])('at %i ms the window is [%i, %i)', (nowMs, start, reset) => {
    expect(windowAt(nowMs)).toEqual({ start, reset });
  });

  it('puts 1000.999 s and 1001.000 s in different windows', () => {
    // Act
    const before = windowAt(1_000_999);
    const after = windowAt(1_001_000);

    // Assert
    expect(before.start).toBe(1000);
    expect(after.start).toBe(1001);
    expect(before.reset).toBe(after.start);
  });

  it('contains its instant, starts on a whole second and lasts one second (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (nowMs) => {
        const window = windowAt(nowMs);
        expect(Number.isInteger(window.start)).toBe(true);
        expect(window.reset - window.start).toBe(1);
        expect(window.start * 1000).toBeLessThanOrEqual(nowMs);
        expect(nowMs).toBeLessThan(window.reset * 1000);
      }),
    );
  });
});

describe('decide', () => {
  const limit = 10;
  const nowMs = 1_000_250;
  const window = windowAt(nowMs);

  it.each(
    Array.from({ length: limit + 2 }, (_, i) => i + 1).map((count) => [
      count,
      count > limit,
      Math.max(0, limit - count),
    ]),
  )('count %i of limit 10: limited=%s, remaining=%i', (count, limited, remaining) => {
    // Act
    const decision = decide(count, limit, window, nowMs);

    // Assert
    expect(decision).toEqual({ limited, limit, remaining, reset: window.reset, retryAfter: 1 });
  });

  it('is limited exactly when count > limit, and remaining is never negative (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 1000 }), (count, max) => {
        const decision = decide(count, max, window, nowMs);
        expect(decision.limited).toBe(count > max);
        expect(decision.remaining).toBeGreaterThanOrEqual(0);
        expect(decision.remaining).toBe(count >= max ? 0 : max - count);
        expect(decision.limit).toBe(max);
      }),
    );
  });

  it.each([
    // [nowMs, window, expected retryAfter]
    ['at the window start', 1_000_000, { start: 1000, reset: 1001 }, 1],
    ['1 ms before the end', 1_000_999, { start: 1000, reset: 1001 }, 1],
    ['2.5 s before a later reset (ceil)', 1_000_500, { start: 1000, reset: 1003 }, 3],
    ['exactly 2 s before the reset', 1_001_000, { start: 1000, reset: 1003 }, 2],
    ['2.001 s before the reset (ceil)', 1_000_999, { start: 1000, reset: 1003 }, 3],
    ['at the reset itself (floor of 1)', 1_001_000, { start: 1000, reset: 1001 }, 1],
    ['after the reset (floor of 1)', 1_005_000, { start: 1000, reset: 1001 }, 1],
  ])('retryAfter %s', (_, now, win, expected) => {
    expect(decide(11, 10, win, now).retryAfter).toBe(expected);
  });

  it('retryAfter is a whole number of seconds, at least 1 (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (now) => {
        const { retryAfter } = decide(100, 1, windowAt(now), now);
        expect(Number.isInteger(retryAfter)).toBe(true);
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        // With a one-second window the wait can never exceed one second.
        expect(retryAfter).toBe(1);
      }),
    );
  });
});

describe('rateLimitHeaders', () => {
  it('names the three X-RateLimit headers with string values', () => {
    // Act
    const headers = rateLimitHeaders({ limit: 50, remaining: 0, reset: 1_735_732_801 });

    // Assert
    expect(headers).toEqual({
      'X-RateLimit-Limit': '50',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '1735732801',
    });
  });

  it('takes the values straight from a decision', () => {
    // Arrange
    const now = 1_735_732_800_400;
    const decision = decide(3, 10, windowAt(now), now);

    // Act
    const headers = rateLimitHeaders(decision);

    // Assert
    expect(headers['X-RateLimit-Limit']).toBe('10');
    expect(headers['X-RateLimit-Remaining']).toBe('7');
    expect(headers['X-RateLimit-Reset']).toBe('1735732801');
    expect(Object.keys(headers)).toHaveLength(3);
  });
});

describe('counterShards', () => {
  it.each([
    [1, 1],
    [10, 1],
    [125, 1],
    [126, 2],
    [500, 4],
    [1_000, 8],
  ])('a window of %i requests a second is counted on %i item(s)', (limit, shards) => {
    expect(counterShards(limit)).toBe(shards);
  });

  it("keeps every plan's busiest counter item under 500 writes in a usage-plan burst's first second", () => {
    for (const plan of Object.values(PLANS)) {
      // What API Gateway lets through in the first second: the full bucket (burst) plus a second's refill.
      const firstSecond = plan.burst + plan.requestsPerSecond;
      expect(firstSecond / counterShards(plan.requestsPerSecond)).toBeLessThanOrEqual(500);
    }
  });
});
