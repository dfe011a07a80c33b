// FairTurns (lambdas/runtime/local/fair-turns.ts): at most `limit` tasks at once across all keys; a freed turn
// goes to the waiting key served least recently, so a key with one call waits for at most one turn however
// many calls another key has queued; one key's tasks start in the order they were asked for; a task asked for
// while its caller holds a turn runs at once (no deadlock at limit 1).
import { describe, expect, it } from 'vitest';
import { FairTurns } from '../../lambdas/runtime/local/fair-turns';

const tick = () => new Promise((resolve) => setImmediate(resolve));

function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe('FairTurns', () => {
  it('serves a quiet key at the next free turn while another key has a hundred queued', async () => {
    // Arrange: A holds both turns and queues 98 more; then B asks for one.
    const turns = new FairTurns(2);
    const started: string[] = [];
    const gates = Array.from({ length: 100 }, gate);
    const a = gates.map((g, i) =>
      turns.run('a', async () => {
        started.push(`a${i}`);
        await g.opened;
      }),
    );
    const bGate = gate();
    const b = turns.run('b', async () => {
      started.push('b0');
      await bGate.opened;
    });
    await tick();
    expect(started).toEqual(['a0', 'a1']);
    expect(turns.inFlight).toBe(2);
    expect(turns.waiting).toBe(99);

    // Act: one of A's calls ends.
    gates[0]?.open();
    await tick();

    // Assert: B goes before A's 98, and A's next turn goes to its oldest call.
    expect(started).toEqual(['a0', 'a1', 'b0']);
    gates[1]?.open();
    await tick();
    expect(started).toEqual(['a0', 'a1', 'b0', 'a2']);
    bGate.open();
    for (const g of gates) g.open();
    await Promise.all([...a, b]);
    expect(started.filter((s) => s.startsWith('a'))).toEqual(gates.map((_, i) => `a${i}`));
    expect(turns.inFlight).toBe(0);
    expect(turns.waiting).toBe(0);
  });

  it('rotates freed turns across the waiting keys, one each, least recently served first', async () => {
    // Arrange: one turn, held by A; A queues 3 more, then B and C queue 2 each.
    const turns = new FairTurns(1);
    const order: string[] = [];
    const hold = gate();
    const first = turns.run('a', async () => {
      order.push('a');
      await hold.opened;
    });
    const queued = ['a', 'a', 'a', 'b', 'b', 'c', 'c'].map((key) => turns.run(key, async () => order.push(key)));

    // Act
    hold.open();
    await Promise.all([first, ...queued]);

    // Assert
    expect(order).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'a', 'a']);
  });

  it('runs a call made while holding a turn at once, even at limit 1', async () => {
    // Arrange: A's task holds the only turn; B queues behind it.
    const turns = new FairTurns(1);
    const queued = gate();
    const outer = turns.run('a', async () => {
      await queued.opened;
      // Act: the holder asks for another turn (of its own key, then of another).
      const own = await turns.run('a', async () => 'own');
      const another = await turns.run('c', async () => 'another');
      return { own, another, waiting: turns.waiting };
    });
    const b = turns.run('b', async () => 'b');
    queued.open();

    // Assert: both inner calls ran while B still waited; then B ran.
    expect(await outer).toEqual({ own: 'own', another: 'another', waiting: 1 });
    expect(await b).toBe('b');
    expect(turns.inFlight).toBe(0);
  });

  it('frees the turn when a task throws, and passes the error on', async () => {
    const turns = new FairTurns(1);
    await expect(turns.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await turns.run('a', async () => 'next')).toBe('next');
    expect(turns.inFlight).toBe(0);
  });

  it('refuses a limit below 1', () => {
    expect(() => new FairTurns(0)).toThrow(RangeError);
  });
});
