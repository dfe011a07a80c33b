// Unit tests of a batch's gathered reputation counts (lambdas/app/reputation/gathered-counts.ts): held until every
// member of the batch counted or finished, then one write per tenant, day and sending domain with the amounts
// summed; each member's count resolves (or rejects) with its group's write; a count after the flush is written alone.
import { describe, expect, it } from 'vitest';
import { GatheredCounts } from '../../lambdas/app/reputation/gathered-counts';
import type { CountEntry } from '../../lambdas/app/reputation/ports';
import type { Tenant } from '../../lambdas/app/webhooks/ports';

const A: Tenant = { accountId: 'acct_a', mode: 'live' };
const B: Tenant = { accountId: 'acct_b', mode: 'live' };
const entry = (domain: string, counts: CountEntry['counts'], day = '2026-03-02'): CountEntry => ({
  day,
  domain,
  counts,
  spread: `${domain}-${JSON.stringify(counts)}`,
});

function recordingStore(fail?: (tenant: Tenant, entry: CountEntry) => boolean) {
  const writes: { tenant: string; domain: string | null; day: string; counts: CountEntry['counts'] }[] = [];
  return {
    writes,
    async count(tenant: Tenant, e: CountEntry) {
      if (fail?.(tenant, e)) throw new Error('throttled');
      writes.push({ tenant: tenant.accountId, domain: e.domain, day: e.day, counts: e.counts });
    },
  };
}

describe('GatheredCounts', () => {
  it('writes once per tenant, day and domain, after every member counted or finished, amounts summed', async () => {
    // Arrange: four members; one never counts.
    const store = recordingStore();
    const gathered = new GatheredCounts(store, 4);
    const [m1, m2, m3, m4] = [gathered.member(), gathered.member(), gathered.member(), gathered.member()];

    // Act
    const counted = [
      m1.count(A, entry('a.example', { sent: 1 })),
      m2.count(A, entry('a.example', { sent: 1, delivered: 1 })),
      m3.count(B, entry('a.example', { bounced: 1, bounced_permanent: 1 })),
    ];
    await Promise.resolve();
    const before = store.writes.length;
    m4.done();
    await Promise.all(counted);

    // Assert
    expect(before).toBe(0);
    expect(store.writes).toEqual([
      { tenant: 'acct_a', domain: 'a.example', day: '2026-03-02', counts: { sent: 2, delivered: 1 } },
      { tenant: 'acct_b', domain: 'a.example', day: '2026-03-02', counts: { bounced: 1, bounced_permanent: 1 } },
    ]);
  });

  it('rejects the members of a group whose write failed, and only those', async () => {
    const store = recordingStore((tenant) => tenant === B);
    const gathered = new GatheredCounts(store, 2);
    const a = gathered.member().count(A, entry('a.example', { sent: 1 }));
    const b = gathered.member().count(B, entry('b.example', { sent: 1 }));

    await expect(a).resolves.toBeUndefined();
    await expect(b).rejects.toThrow('throttled');
  });

  it('writes a count made after the flush (or a second count of a member) on its own', async () => {
    const store = recordingStore();
    const gathered = new GatheredCounts(store, 1);
    const member = gathered.member();
    await member.count(A, entry('a.example', { sent: 1 }));

    await member.count(A, entry('a.example', { delivered: 1 }));
    await new GatheredCounts(store, 0).member().count(A, entry('a.example', { complained: 1 }));

    expect(store.writes.map((w) => w.counts)).toEqual([{ sent: 1 }, { delivered: 1 }, { complained: 1 }]);
  });
});
