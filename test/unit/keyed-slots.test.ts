// KeyedSlots (lambdas/adapters/in-process/keyed-slots.ts): at most `perKey` tasks of a key at once, the rest in
// arrival order; other keys never wait for it.
import { describe, expect, it } from 'vitest';
import { KeyedSlots } from '../../lambdas/adapters/in-process/keyed-slots';

const tick = () => new Promise((resolve) => setImmediate(resolve));

function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe('KeyedSlots', () => {
  it('runs at most perKey tasks of a key at once, the others in arrival order; another key at once', async () => {
    // Arrange
    const slots = new KeyedSlots(2);
    const gates = Array.from({ length: 5 }, gate);
    const started: string[] = [];
    const tasks = gates.map((g, i) =>
      slots.run('a', async () => {
        started.push(`a${i}`);
        await g.opened;
      }),
    );
    const other = slots.run('b', async () => started.push('b0'));

    // Act / Assert
    await tick();
    await other;
    expect(started).toEqual(['a0', 'a1', 'b0']);
    expect(slots.inFlight('a')).toBe(2);
    gates[1]?.open();
    await tick();
    await tick();
    expect(started).toEqual(['a0', 'a1', 'b0', 'a2']);
    // A newcomer while full waits behind those already waiting.
    const late = slots.run('a', async () => started.push('late'));
    for (const g of gates) g.open();
    await Promise.all([...tasks, late]);
    expect(started).toEqual(['a0', 'a1', 'b0', 'a2', 'a3', 'a4', 'late']);
    expect(slots.inFlight('a')).toBe(0);
  });

  it('frees the slot when a task throws', async () => {
    const slots = new KeyedSlots(1);
    await expect(slots.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await slots.run('a', async () => 'next')).toBe('next');
    expect(slots.inFlight('a')).toBe(0);
  });

  it('outside: a task gives its slot back while it waits elsewhere, then takes one again in turn', async () => {
    // Arrange: one slot; a task holding it steps outside.
    const slots = new KeyedSlots(1);
    const away = gate();
    const steps: string[] = [];
    const holder = slots.run('a', async () => {
      steps.push('holder in');
      await slots.outside('a', () => away.opened);
      steps.push('holder back');
    });
    await tick();

    // Act: another task of the key runs meanwhile and holds the slot when the first comes back.
    const other = gate();
    const second = slots.run('a', async () => {
      steps.push('second in');
      await other.opened;
      steps.push('second out');
    });
    await tick();
    away.open();
    await tick();

    // Assert: the holder waits for its turn (never two at once), then goes on.
    expect(steps).toEqual(['holder in', 'second in']);
    expect(slots.inFlight('a')).toBe(1);
    other.open();
    await Promise.all([holder, second]);
    expect(steps).toEqual(['holder in', 'second in', 'second out', 'holder back']);
    expect(slots.inFlight('a')).toBe(0);
    // Outside any slot of the key, it just runs.
    await expect(slots.outside('a', async () => 'ran')).resolves.toBe('ran');
    expect(slots.inFlight('a')).toBe(0);
  });
});
