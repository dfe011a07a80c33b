// Unit tests for HeldWrites (lambdas/app/held-writes.ts): counts merged per key, written once per key when the
// oldest is due, on a timer where asked, and waited for by settle() and flush().
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HeldWrites } from '../../lambdas/app/held-writes';
import { FakeClock } from '../support/fakes';

const sum = (a: { key: string; n: number }, b: { key: string; n: number }) => ({ key: a.key, n: a.n + b.n });

function held(clock: FakeClock, options: { timer?: boolean; fail?: boolean } = {}) {
  const written: { key: string; n: number }[] = [];
  let pending = 0;
  const writes = new HeldWrites<{ key: string; n: number }>(clock, {
    maxHoldMs: 1_000,
    ...(options.timer ? { timer: true } : {}),
    write: async (counts) => {
      pending += 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
      pending -= 1;
      written.push(counts);
    },
  });
  const add = (key: string, n = 1) => writes.add(key, { key, n }, sum);
  return { writes, written, add, pending: () => pending };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('HeldWrites', () => {
  it('merges what shares a key and writes nothing before the oldest is due', async () => {
    const clock = new FakeClock(0);
    const { writes, written, add } = held(clock);
    add('a');
    add('a', 2);
    add('b');
    clock.advance(999);
    add('a');
    await writes.settle();
    expect(written).toEqual([]);
  });

  it('writes one merged write per key once the oldest has been held maxHoldMs, and settle() waits for them', async () => {
    const clock = new FakeClock(0);
    const { writes, written, add, pending } = held(clock);
    add('a');
    add('b', 5);
    clock.advance(1_000);
    add('a', 2);
    expect(pending()).toBe(2);
    await writes.settle();
    expect(pending()).toBe(0);
    expect(written).toEqual([
      { key: 'a', n: 3 },
      { key: 'b', n: 5 },
    ]);
    // A fresh hold starts with the next add.
    add('a');
    await writes.settle();
    expect(written).toHaveLength(2);
    await writes.flush();
    expect(written.at(-1)).toEqual({ key: 'a', n: 1 });
  });

  it('with a timer, writes what a quiet process holds once it is due', async () => {
    vi.useFakeTimers();
    const clock = new FakeClock(0);
    const { writes, written, add } = held(clock, { timer: true });
    add('a', 4);
    await vi.advanceTimersByTimeAsync(1_010);
    expect(written).toEqual([{ key: 'a', n: 4 }]);
    await writes.settle();
  });
});
