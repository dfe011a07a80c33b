// Unit tests of the monthly quota window (lambdas/domain/email/quota.ts): calendar months in UTC, whatever the
// month's length (December → January, leap and common Februaries), and a Retry-After of at least one second.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quotaWindow, secondsUntilReset } from '../../lambdas/domain/email/quota';

const sec = (ms: number) => ms / 1000;

describe('quotaWindow', () => {
  it.each([
    ['mid-month', Date.UTC(2025, 3, 15, 12, 0, 0), '2025-04', Date.UTC(2025, 4, 1)],
    ['the first millisecond of a month', Date.UTC(2025, 2, 1, 0, 0, 0, 0), '2025-03', Date.UTC(2025, 3, 1)],
    [
      'the last millisecond of April (30 days)',
      Date.UTC(2025, 3, 30, 23, 59, 59, 999),
      '2025-04',
      Date.UTC(2025, 4, 1),
    ],
    ['the last millisecond of May (31 days)', Date.UTC(2025, 4, 31, 23, 59, 59, 999), '2025-05', Date.UTC(2025, 5, 1)],
    [
      'New Year’s Eve: December resets on 1 January of the next year',
      Date.UTC(2024, 11, 31, 23, 59, 59, 999),
      '2024-12',
      Date.UTC(2025, 0, 1),
    ],
    ['New Year’s Day: a new month and year', Date.UTC(2025, 0, 1, 0, 0, 0, 0), '2025-01', Date.UTC(2025, 1, 1)],
    ['29 February of a leap year', Date.UTC(2024, 1, 29, 18, 0, 0), '2024-02', Date.UTC(2024, 2, 1)],
    ['28 February of a common year', Date.UTC(2025, 1, 28, 23, 59, 59, 999), '2025-02', Date.UTC(2025, 2, 1)],
    [
      '28 February of a leap year is not the end',
      Date.UTC(2024, 1, 28, 23, 59, 59, 999),
      '2024-02',
      Date.UTC(2024, 2, 1),
    ],
    ['February 2100 (not a leap year)', Date.UTC(2100, 1, 28, 12, 0, 0), '2100-02', Date.UTC(2100, 2, 1)],
  ])('%s', (_name, now, month, nextMonthMs) => {
    expect(quotaWindow(now)).toEqual({ month, resetsAt: sec(nextMonthMs) });
  });

  it('uses UTC, not the process time zone: noon UTC on 31 January is January even at UTC+14', () => {
    // Arrange: in Kiritimati (UTC+14) that instant is already 1 February, 02:00.
    const saved = process.env.TZ;
    process.env.TZ = 'Pacific/Kiritimati';
    try {
      const now = Date.UTC(2025, 0, 31, 12, 0, 0);
      expect(new Date(now).getMonth()).toBe(1);

      // Act
      const window = quotaWindow(now);

      // Assert
      expect(window).toEqual({ month: '2025-01', resetsAt: sec(Date.UTC(2025, 1, 1)) });
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  it('always resets on the first second of the next month, after now, within 31 days', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2199, 11, 31) }), (now) => {
        const window = quotaWindow(now);
        const reset = new Date(window.resetsAt * 1000);
        expect(Number.isInteger(window.resetsAt)).toBe(true);
        expect(reset.getUTCDate()).toBe(1);
        expect(reset.getUTCHours() + reset.getUTCMinutes() + reset.getUTCSeconds()).toBe(0);
        expect(window.resetsAt * 1000).toBeGreaterThan(now);
        expect(window.resetsAt * 1000 - now).toBeLessThanOrEqual(31 * 86_400_000);
        expect(quotaWindow(window.resetsAt * 1000 - 1).month).toBe(window.month);
        expect(quotaWindow(window.resetsAt * 1000).month).not.toBe(window.month);
      }),
    );
  });
});

describe('secondsUntilReset', () => {
  it('counts whole seconds to the end of the month, rounding up', () => {
    // Arrange
    const now = Date.UTC(2025, 0, 31, 23, 59, 0, 0);
    const window = quotaWindow(now);

    // Act / Assert
    expect(secondsUntilReset(window, now)).toBe(60);
    expect(secondsUntilReset(window, now + 500)).toBe(60);
    expect(secondsUntilReset(window, now + 1_000)).toBe(59);
  });

  it('is the whole month at its first instant: 31 days for January, 29 for a leap February', () => {
    expect(secondsUntilReset(quotaWindow(Date.UTC(2025, 0, 1)), Date.UTC(2025, 0, 1))).toBe(31 * 86_400);
    expect(secondsUntilReset(quotaWindow(Date.UTC(2024, 1, 1)), Date.UTC(2024, 1, 1))).toBe(29 * 86_400);
  });

  it('is 1, never 0, in the last second and last millisecond of the month (Retry-After ≥ 1)', () => {
    // Arrange
    const reset = Date.UTC(2025, 0, 1);
    const window = quotaWindow(reset - 1);

    // Act / Assert
    expect(secondsUntilReset(window, reset - 1)).toBe(1);
    expect(secondsUntilReset(window, reset - 999)).toBe(1);
    expect(secondsUntilReset(window, reset - 1_000)).toBe(1);
    expect(secondsUntilReset(window, reset - 1_001)).toBe(2);
  });

  it('is still 1 for a window that has already ended (a stale window read just before the reset)', () => {
    // Arrange
    const window = quotaWindow(Date.UTC(2024, 11, 31, 23, 59, 59));

    // Act / Assert
    expect(secondsUntilReset(window, Date.UTC(2025, 0, 1))).toBe(1);
    expect(secondsUntilReset(window, Date.UTC(2025, 0, 1, 0, 0, 5))).toBe(1);
  });

  it('is a positive integer that lands exactly in the next month, for any instant', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2199, 11, 31) }), (now) => {
        const seconds = secondsUntilReset(quotaWindow(now), now);
        expect(Number.isInteger(seconds)).toBe(true);
        expect(seconds).toBeGreaterThanOrEqual(1);
        // Never earlier than the reset: now + Retry-After is in the next month.
        expect(quotaWindow(now + seconds * 1000).month).not.toBe(quotaWindow(now).month);
        expect(quotaWindow(now + (seconds - 1) * 1000).month).toBe(quotaWindow(now).month);
      }),
    );
  });
});
