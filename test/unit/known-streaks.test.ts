// The process's memory of the failure streaks it counted (lambdas/adapters/in-process/known-streaks.ts): kept for
// its maximum age, then forgotten (the webhook item rules again); deleted on a success.
import { describe, expect, it } from 'vitest';
import { InProcessKnownStreaks } from '../../lambdas/adapters/in-process/known-streaks';

const T0 = Date.UTC(2026, 10, 26, 5, 0, 0);
const streak = { since: T0, failures: 10, failingNotified: false };

describe('InProcessKnownStreaks', () => {
  it('returns a streak until it is maxAgeMs old, then forgets it', () => {
    const known = new InProcessKnownStreaks(60_000);
    known.set('acct#test#wh_1', streak, T0);
    expect(known.get('acct#test#wh_1', T0 + 59_999)).toEqual(streak);
    expect(known.get('acct#test#wh_1', T0 + 60_000)).toBeUndefined();
    expect(known.get('acct#test#wh_1', T0)).toBeUndefined();
  });

  it('forgets a deleted streak, and keeps webhooks apart', () => {
    const known = new InProcessKnownStreaks();
    known.set('acct#test#wh_1', streak, T0);
    known.set('acct#test#wh_2', { ...streak, failures: 3 }, T0);
    known.delete('acct#test#wh_1');
    expect(known.get('acct#test#wh_1', T0)).toBeUndefined();
    expect(known.get('acct#test#wh_2', T0)?.failures).toBe(3);
  });
});
