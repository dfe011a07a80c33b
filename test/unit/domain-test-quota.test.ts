// Unit tests for the test-mode quota window (lambdas/domain/email/test-quota.ts): one UTC day, its own key.
import { describe, expect, it } from 'vitest';
import { quotaWindow, secondsUntilReset } from '../../lambdas/domain/email/quota';
import { testQuotaWindow } from '../../lambdas/domain/email/test-quota';

describe('testQuotaWindow', () => {
  it('is the UTC day, resetting at the next midnight UTC', () => {
    const now = Date.parse('2026-03-31T23:59:30.500Z');
    expect(testQuotaWindow(now)).toEqual({
      month: 'test#2026-03-31',
      resetsAt: Date.parse('2026-04-01T00:00:00Z') / 1000,
    });
    expect(secondsUntilReset(testQuotaWindow(now), now)).toBe(30);
  });

  it('never shares its counter key with the live month', () => {
    const now = Date.parse('2026-12-31T12:00:00Z');
    expect(testQuotaWindow(now).month).not.toBe(quotaWindow(now).month);
    expect(testQuotaWindow(Date.parse('2027-01-01T00:00:00Z')).month).toBe('test#2027-01-01');
  });
});
