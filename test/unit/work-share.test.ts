// The work-share rule (lambdas/domain/work-share.ts) and its keyed, in-process keeper
// (lambdas/adapters/in-process/work-shares.ts): one account's heavy reads (its email listings, on the local runtime
// where every tenant shares one process and one store thread) take at most `share` of the time after a burst, however
// fast they are asked for; another account's are not held by them (issue 28: A's filtered lists, B's latency).
import { describe, expect, it } from 'vitest';
import { KeyedWorkShares } from '../../lambdas/adapters/in-process/work-shares';
import { charged, freshShare, shareRule, waitBefore } from '../../lambdas/domain/work-share';
import { FakeClock } from '../support/fakes';

const T0 = Date.UTC(2026, 0, 1);

describe('work share (rule)', () => {
  it('lets a burst of work go at once, then one ms of work per 1/share ms of time', () => {
    // Arrange: a quarter of the time, after a burst of 1 s of work.
    const rule = shareRule(0.25, 1_000);
    let state = freshShare(rule, T0);

    // Act + Assert: 1 s of work spends the burst (no more: it was whole while the work ran), and still goes on.
    expect(waitBefore(state, rule, T0)).toBe(0);
    state = charged(state, rule, T0 + 1_000, 1_000);
    expect(waitBefore(state, rule, T0 + 1_000)).toBe(0);
    // 200 ms more work is a debt of 200 ms: 800 ms of time repays it.
    state = charged(state, rule, T0 + 1_000, 200);
    expect(waitBefore(state, rule, T0 + 1_000)).toBe(800);
    expect(waitBefore(state, rule, T0 + 1_500)).toBe(300);
    expect(waitBefore(state, rule, T0 + 1_800)).toBe(0);
  });

  it('never keeps more than the burst, however long the account was idle', () => {
    const rule = shareRule(0.5, 300);
    const state = charged(freshShare(rule, T0), rule, T0 + 86_400_000, 400);
    expect(waitBefore(state, rule, T0 + 86_400_000)).toBe(200);
  });

  it('refuses a share outside (0, 1] and a negative burst', () => {
    expect(() => shareRule(0, 100)).toThrow(RangeError);
    expect(() => shareRule(1.5, 100)).toThrow(RangeError);
    expect(() => shareRule(0.5, -1)).toThrow(RangeError);
  });
});

describe('KeyedWorkShares', () => {
  /** Work that takes `ms` of the fake clock; the keeper's waits advance it too. */
  function keeper(share: number, burstMs: number) {
    const clock = new FakeClock(T0);
    const waits: { key: string; ms: number }[] = [];
    let waiting = '';
    const shares = new KeyedWorkShares(shareRule(share, burstMs), {
      clock,
      sleep: async (ms) => {
        waits.push({ key: waiting, ms });
        clock.advance(ms);
      },
    });
    const work = (key: string, ms: number) => {
      waiting = key;
      return shares.run(key, async () => {
        clock.advance(ms);
        return ms;
      });
    };
    return { clock, waits, work, shares };
  }

  it("keeps one key's work in a loop to its share of the time after the burst", async () => {
    // Arrange: a quarter, a burst of 500 ms; listings of 250 ms each, one after another (as listSlots runs them).
    const { clock, work } = keeper(0.25, 500);

    // Act: 12 listings, 3 s of work.
    for (let i = 0; i < 12; i++) await work('acct_a', 250);

    // Assert: the 2.5 s past the burst took 4× their time: at least 10 s of the clock in all.
    expect(clock.now() - T0).toBeGreaterThanOrEqual(500 + (3_000 - 500) / 0.25 - 250 / 0.25);
    expect(clock.now() - T0).toBeLessThanOrEqual(500 + (3_000 - 500) / 0.25);
  });

  it("never makes another key wait for one key's spent share", async () => {
    const { waits, work } = keeper(0.25, 500);
    for (let i = 0; i < 6; i++) await work('acct_a', 250);
    const before = waits.length;

    await work('acct_b', 250);

    expect(waits.slice(before)).toEqual([]);
  });

  it('charges work that fails, and forgets a key whose share has refilled', async () => {
    const { clock, shares } = keeper(0.5, 100);
    await expect(
      shares.run('acct_a', async () => {
        clock.advance(300);
        throw new Error('store failed');
      }),
    ).rejects.toThrow('store failed');
    expect(shares.size()).toBe(1);
    clock.advance(10_000);
    await shares.run('acct_c', async () => clock.advance(50));
    expect(shares.size()).toBe(1); // acct_a refilled and forgotten; acct_c, 50 ms short of its burst, kept
  });
});
