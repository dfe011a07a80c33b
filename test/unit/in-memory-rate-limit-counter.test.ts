// The in-memory per-IP counter of requests without a valid key (adapters/in-process/rate-limit-counter.ts):
// counts per subject within a window, starts afresh with the next window, keeps only the current window.
import { describe, expect, it } from 'vitest';
import { InMemoryRateLimitCounter } from '../../lambdas/adapters/in-process/rate-limit-counter';
import { windowAt } from '../../lambdas/domain/rate-limit';

const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);

describe('InMemoryRateLimitCounter', () => {
  it('counts each subject apart within one window', async () => {
    // Arrange
    const counter = new InMemoryRateLimitCounter();
    const window = windowAt(T0 + 100);

    // Act
    const a = [await counter.increment('ip:1.2.3.4', window), await counter.increment('ip:1.2.3.4', window)];
    const b = await counter.increment('ip:5.6.7.8', window);

    // Assert
    expect(a).toEqual([1, 2]);
    expect(b).toBe(1);
  });

  it('starts again from one in the next window', async () => {
    const counter = new InMemoryRateLimitCounter();
    await counter.increment('ip:1.2.3.4', windowAt(T0));
    await counter.increment('ip:1.2.3.4', windowAt(T0 + 999));
    expect(await counter.increment('ip:1.2.3.4', windowAt(T0 + 1000))).toBe(1);
  });

  it('counts a late request of a past window in the current one, never reviving the old counts', async () => {
    const counter = new InMemoryRateLimitCounter();
    await counter.increment('ip:1.2.3.4', windowAt(T0));
    await counter.increment('ip:1.2.3.4', windowAt(T0 + 1000));
    expect(await counter.increment('ip:1.2.3.4', windowAt(T0 + 500))).toBe(2);
    expect(await counter.increment('ip:1.2.3.4', windowAt(T0 + 1001))).toBe(3);
  });
});
