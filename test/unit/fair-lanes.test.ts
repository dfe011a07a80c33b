// FairLanes (lambdas/adapters/in-process/fair-lanes.ts): at most maxInFlight tasks at once, the waiting ones handed
// a slot round-robin across lanes, so a lane with a thousand tasks waiting does not hold back another lane's next
// one for more than a turn (issue 28: one tenant's store calls, another tenant's request).
import { describe, expect, it } from 'vitest';
import { FairLanes } from '../../lambdas/adapters/in-process/fair-lanes';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('FairLanes', () => {
  it("bounds the tasks in flight and hands slots round-robin: a newly arrived lane waits one turn, not behind a busy lane's backlog", async () => {
    // Arrange: lane a fills the slots and queues 20 more.
    const lanes = new FairLanes(2);
    const order: string[] = [];
    const release: (() => void)[] = [];
    const task = (name: string) => async () => {
      order.push(name);
      await new Promise<void>((resolve) => release.push(resolve));
    };
    const all = Array.from({ length: 22 }, (_, i) => lanes.run('a', task(`a${i}`)));
    await tick();
    expect(order).toEqual(['a0', 'a1']);
    expect(lanes.counts).toEqual({ inFlight: 2, waiting: 20 });

    // Act: lane b arrives behind the backlog, with two tasks; then a's tasks end one by one.
    all.push(lanes.run('b', task('b0')), lanes.run('b', task('b1')));
    const step = async () => {
      release.shift()?.();
      await tick();
      await tick();
    };
    for (let i = 0; i < 4; i++) await step();

    // Assert: b waited one turn, not 20: turns alternate between the lanes while both wait.
    expect(order).toEqual(['a0', 'a1', 'a2', 'b0', 'a3', 'b1']);
    expect(lanes.counts.inFlight).toBe(2);
    while (release.length) {
      release.shift()?.();
      await tick();
      await tick();
    }
    await Promise.all(all);
    expect(lanes.counts).toEqual({ inFlight: 0, waiting: 0 });
    expect(order).toHaveLength(24);
    expect(order.slice(6)).toEqual(Array.from({ length: 18 }, (_, i) => `a${i + 4}`));
  });

  it('runs at once while slots are free, and frees the slot when a task fails', async () => {
    const lanes = new FairLanes(1);
    await expect(lanes.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(lanes.run('b', async () => 'ok')).resolves.toBe('ok');
    expect(lanes.counts).toEqual({ inFlight: 0, waiting: 0 });
  });
});
