// Unit tests of SingleFlight (lambdas/app/reputation/single-flight.ts): one run per key at a time; calls made
// meanwhile share one more run after it (so the last call's state is always seen); other keys run at once.
import { describe, expect, it } from 'vitest';
import { SingleFlight } from '../../lambdas/app/reputation/single-flight';

describe('SingleFlight', () => {
  it('runs once per key at a time, then once more for every call made meanwhile, other keys at once', async () => {
    const flight = new SingleFlight();
    const runs: string[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const work = (key: string) => async () => {
      runs.push(key);
      if (runs.length === 1) await gate;
    };

    const first = flight.run('a', work('a'));
    const joined = [flight.run('a', work('a')), flight.run('a', work('a')), flight.run('a', work('a'))];
    const other = flight.run('b', work('b'));
    await other;
    expect(runs).toEqual(['a', 'b']);
    release();
    await Promise.all([first, ...joined]);

    expect(runs).toEqual(['a', 'b', 'a']);
    await flight.run('a', work('a'));
    expect(runs).toEqual(['a', 'b', 'a', 'a']);
  });

  it('passes a failed run’s error to its callers, and the next call runs afresh', async () => {
    const flight = new SingleFlight();
    await expect(flight.run('a', () => Promise.reject(new Error('throttled')))).rejects.toThrow('throttled');
    await expect(flight.run('a', async () => {})).resolves.toBeUndefined();
  });
});
