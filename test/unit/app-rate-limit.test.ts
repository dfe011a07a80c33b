// Unit tests for the rate-limit use case (lambdas/app/rate-limit.ts): the window's counter items by plan size,
// and the windows a process knows to be over their limit, refused without another write.
import { describe, expect, it } from 'vitest';
import type { RateLimitCounter } from '../../lambdas/app/ports';
import { ClosedWindows, consumeRequest } from '../../lambdas/app/rate-limit';
import type { RateWindow } from '../../lambdas/domain/rate-limit';
import { FakeClock } from '../support/fakes';

/** Counts exactly, and records every call it was asked to make. */
class RecordingCounter implements RateLimitCounter {
  readonly calls: { subject: string; start: number; shards: number | undefined }[] = [];
  private readonly counts = new Map<string, number>();

  async increment(subject: string, window: RateWindow, shards?: number): Promise<number> {
    this.calls.push({ subject, start: window.start, shards });
    const key = `${subject}#${window.start}`;
    const next = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, next);
    return next;
  }
}

describe('consumeRequest', () => {
  it("asks for 1 counter item on a 100-request window and 4 on the scale plan's 500", async () => {
    // Arrange
    const counter = new RecordingCounter();
    const clock = new FakeClock(1_735_732_800_000);

    // Act
    await consumeRequest({ counter, clock }, 'account:a', 100);
    await consumeRequest({ counter, clock }, 'account:b', 500);

    // Assert
    expect(counter.calls.map((c) => c.shards)).toEqual([1, 4]);
  });

  it('refuses a closed window without counting again, and counts afresh in the next second', async () => {
    // Arrange
    const counter = new RecordingCounter();
    const clock = new FakeClock(1_735_732_800_100);
    const deps = { counter, clock, closed: new ClosedWindows() };

    // Act: 3 within a limit of 2, then 5 more in the same second, then one in the next
    const first = [];
    for (let i = 0; i < 3; i++) first.push(await consumeRequest(deps, 'account:a', 2));
    const later = [];
    for (let i = 0; i < 5; i++) later.push(await consumeRequest(deps, 'account:a', 2));
    const otherAccount = await consumeRequest(deps, 'account:b', 2);
    clock.advance(1_000);
    const nextSecond = await consumeRequest(deps, 'account:a', 2);

    // Assert: the third was counted and refused; the five after it were refused with no call
    expect(first.map((d) => d.limited)).toEqual([false, false, true]);
    expect(later.every((d) => d.limited && d.remaining === 0 && d.reset === 1_735_732_801)).toBe(true);
    expect(later.every((d) => d.retryAfter === 1)).toBe(true);
    expect(counter.calls.filter((c) => c.subject === 'account:a')).toHaveLength(4);
    expect(otherAccount.limited).toBe(false);
    expect(nextSecond).toMatchObject({ limited: false, remaining: 1, reset: 1_735_732_802 });
  });

  it('keeps a window closed only for the limit it passed: a plan upgraded mid-second counts again', async () => {
    // Arrange
    const counter = new RecordingCounter();
    const clock = new FakeClock(1_735_732_800_100);
    const deps = { counter, clock, closed: new ClosedWindows() };
    for (let i = 0; i < 2; i++) await consumeRequest(deps, 'account:a', 1);

    // Act
    const upgraded = await consumeRequest(deps, 'account:a', 50);

    // Assert
    expect(upgraded).toMatchObject({ limited: false, remaining: 47 });
  });
});
