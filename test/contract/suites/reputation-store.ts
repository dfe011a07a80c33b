// Contract suite for the ReputationStore port, run against DynamoReputationStore (dynalite, DynamoDB Local) and
// InMemoryReputationStore: counts add up per day (whatever shard an event lands on), the tenant's and each domain's
// apart (the tenant's the sum of its domains'), tenants and modes apart; a range read sees every domain of its days
// and refuses past its bound; a warning or pause is noted once (its events in the outbox), a
// warning cleared only while unchanged and unpaused, a pause lifted once with its baseline kept.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { ACCOUNT, type NotedFigures, type ReputationStore, type Subject } from '../../../lambdas/app/reputation/ports';
import type { Tenant } from '../../../lambdas/app/webhooks/ports';
import { type CountField, NO_COUNTS } from '../../../lambdas/domain/email/reputation';
import type { SendflowEvent } from '../../../lambdas/domain/events';
import type { RepositoryHarness } from './harness';

const newTenant = (mode: Tenant['mode'] = 'live'): Tenant => ({
  accountId: `acct_${randomBytes(6).toString('hex')}`,
  mode,
});
const DOMAIN: Subject = { kind: 'domain', domain: 'news.example.com' };
const FIGURES: NotedFigures = {
  sent: 300,
  bounced: 15,
  complained: 0,
  bounceRate: 0.05,
  complaintRate: 0,
  breaches: ['bounce_rate'],
};
const ones = (fields: readonly CountField[]) => Object.fromEntries(fields.map((field) => [field, 1]));
const event = (tenant: Tenant, level: string): SendflowEvent => ({
  id: `evt_${randomBytes(8).toString('hex')}`,
  type: 'account.reputation_warning',
  accountId: tenant.accountId,
  mode: tenant.mode,
  timestamp: '2026-03-02T10:00:00.000Z',
  data: { level },
});

export function reputationStoreContract(harness: RepositoryHarness<ReputationStore>): void {
  const store = () => harness.shared();

  it('adds up each day’s counts, whatever the events’ shards, the tenant’s and each sending domain’s apart', async () => {
    // Arrange
    const tenant = newTenant();
    const count = (day: string, domain: string | null, fields: readonly CountField[]) =>
      store().count(tenant, { day, domain, counts: ones(fields), spread: randomBytes(8).toString('hex') });

    // Act: 12 copies sent on one day (spread over every shard), two bounces, a complaint; one on the next day.
    for (let i = 0; i < 12; i++) await count('2026-03-02', i < 9 ? 'news.example.com' : 'shop.example.com', ['sent']);
    await count('2026-03-02', 'news.example.com', ['bounced', 'bounced_permanent']);
    await count('2026-03-02', 'shop.example.com', ['bounced', 'bounced_transient']);
    await count('2026-03-02', 'news.example.com', ['complained']);
    await count('2026-03-03', null, ['sent']);
    const read = await store().countsBetween(tenant, '2026-03-02', '2026-03-03', 100);

    // Assert: the tenant's days are its domains' summed; an event without a domain counts for the tenant only.
    expect(read.account).toEqual({
      '2026-03-02': { ...NO_COUNTS, sent: 12, bounced: 2, bounced_permanent: 1, bounced_transient: 1, complained: 1 },
      '2026-03-03': { ...NO_COUNTS, sent: 1 },
    });
    expect(read.domains).toEqual({
      'news.example.com': { '2026-03-02': { ...NO_COUNTS, sent: 9, bounced: 1, bounced_permanent: 1, complained: 1 } },
      'shop.example.com': { '2026-03-02': { ...NO_COUNTS, sent: 3, bounced: 1, bounced_transient: 1 } },
    });
  });

  it('adds amounts (a batch of sends counted together), zeros left out', async () => {
    const tenant = newTenant();
    await store().count(tenant, {
      day: '2026-03-02',
      domain: 'a.example',
      counts: { sent: 10, bounced: 0 },
      spread: 'b1',
    });
    await store().count(tenant, {
      day: '2026-03-02',
      domain: 'a.example',
      counts: { sent: 5, complained: 2 },
      spread: 'b2',
    });
    await store().count(tenant, { day: '2026-03-02', domain: 'a.example', counts: {}, spread: 'b3' });

    expect((await store().countsBetween(tenant, '2026-03-02', '2026-03-02', 1000)).domains).toEqual({
      'a.example': { '2026-03-02': { ...NO_COUNTS, sent: 15, complained: 2 } },
    });
  });

  it('keeps tenants and modes apart, and a range read sees only its days', async () => {
    const live = newTenant('live');
    const test: Tenant = { ...live, mode: 'test' };
    await store().count(live, { day: '2026-03-02', domain: 'a.example', counts: { sent: 1 }, spread: 'e1' });
    await store().count(test, { day: '2026-03-02', domain: 'a.example', counts: { sent: 1 }, spread: 'e2' });
    await store().count(test, { day: '2026-03-01', domain: 'a.example', counts: { sent: 1 }, spread: 'e3' });

    const one = { '2026-03-02': { ...NO_COUNTS, sent: 1 } };
    expect(await store().countsBetween(live, '2026-03-02', '2026-03-02', 100)).toEqual({
      account: one,
      domains: { 'a.example': one },
    });
    expect(await store().countsBetween(test, '2026-03-02', '2026-03-09', 100)).toEqual({
      account: one,
      domains: { 'a.example': one },
    });
    expect(await store().countsBetween(newTenant(), '2026-03-01', '2026-03-02', 100)).toEqual({
      account: {},
      domains: {},
    });
  });

  it('reads a range with every domain of its days, both ends included, and refuses more items than its bound', async () => {
    const tenant = newTenant();
    for (const [day, domain] of [
      ['2026-02-28', 'a.example'],
      ['2026-03-01', 'a.example'],
      ['2026-03-01', 'b.example'],
      ['2026-03-02', 'b.example'],
      ['2026-03-03', 'a.example'],
    ] as const) {
      await store().count(tenant, { day, domain, counts: { sent: 1, bounced: 1 }, spread: `${day}${domain}` });
    }

    const range = await store().countsBetween(tenant, '2026-03-01', '2026-03-02', 100);

    const one = { ...NO_COUNTS, sent: 1, bounced: 1 };
    expect(range.account).toEqual({ '2026-03-01': { ...one, sent: 2, bounced: 2 }, '2026-03-02': one });
    expect(range.domains).toEqual({
      'a.example': { '2026-03-01': one },
      'b.example': { '2026-03-01': one, '2026-03-02': one },
    });
    await expect(store().countsBetween(tenant, '2026-02-01', '2026-03-31', 3)).rejects.toThrow(RangeError);
  });

  it('notes a warning once, then a pause once, each with its events in the outbox; standings list them', async () => {
    // Arrange
    const tenant = newTenant();
    const at = '2026-03-02T10:00:00.000Z';

    // Act
    const warned = await store().note(tenant, ACCOUNT, { at, warning: FIGURES }, [event(tenant, 'warning')]);
    const again = await store().note(tenant, ACCOUNT, { at, warning: FIGURES }, [event(tenant, 'warning')]);
    const paused = await store().note(tenant, ACCOUNT, { at: '2026-03-02T11:00:00.000Z', pause: FIGURES }, []);
    const domain = await store().note(tenant, DOMAIN, { at, warning: FIGURES, pause: FIGURES }, []);

    // Assert
    expect(warned?.events.map((e) => e.data.level)).toEqual(['warning']);
    expect(again).toBeNull();
    expect(paused).not.toBeNull();
    expect(domain).not.toBeNull();
    expect(await store().note(tenant, DOMAIN, { at, pause: FIGURES }, [])).toBeNull();
    const standings = await store().standings(tenant);
    expect(standings).toHaveLength(2);
    expect(standings.find((s) => s.subject.kind === 'account')).toEqual({
      subject: ACCOUNT,
      warnedAt: at,
      warning: FIGURES,
      pausedAt: '2026-03-02T11:00:00.000Z',
      pause: FIGURES,
    });
    expect(standings.find((s) => s.subject.kind === 'domain')).toMatchObject({ subject: DOMAIN, pausedAt: at });
    expect(await store().standings(newTenant())).toEqual([]);
    // The outbox holds the warning until cleared.
    const due = (await store().outbox.due(Date.parse(at) + 1, 1000)).filter((p) =>
      p.events.some((e) => e.accountId === tenant.accountId),
    );
    expect(due.flatMap((p) => p.events.map((e) => e.data.level))).toEqual(['warning']);
    if (warned) await store().outbox.clear(warned);
    expect(
      (await store().outbox.due(Date.parse(at) + 1, 1000)).filter((p) =>
        p.events.some((e) => e.accountId === tenant.accountId),
      ),
    ).toEqual([]);
  });

  it('clears a warning only while it is the one seen and no pause stands', async () => {
    const tenant = newTenant();
    const at = '2026-03-02T10:00:00.000Z';
    await store().note(tenant, DOMAIN, { at, warning: FIGURES }, []);

    await store().clearWarning(tenant, DOMAIN, '2026-03-01T00:00:00.000Z');
    expect((await store().standings(tenant))[0]?.warnedAt).toBe(at);
    await store().clearWarning(tenant, DOMAIN, at);
    expect((await store().standings(tenant))[0]?.warnedAt).toBeUndefined();

    await store().note(tenant, ACCOUNT, { at, warning: FIGURES, pause: FIGURES }, []);
    await store().clearWarning(tenant, ACCOUNT, at);
    expect((await store().standings(tenant)).find((s) => s.subject.kind === 'account')?.warnedAt).toBe(at);
  });

  it('lifts a pause once: the pause and its warning go, the note and baseline stay; nothing to lift is null', async () => {
    const tenant = newTenant();
    const at = '2026-03-02T10:00:00.000Z';
    const baseline = { '2026-03-02': { ...NO_COUNTS, sent: 300, bounced: 15, bounced_permanent: 15 } };
    expect(await store().lift(tenant, ACCOUNT, { at, note: 'nothing paused', baseline })).toBeNull();
    await store().note(tenant, ACCOUNT, { at, warning: FIGURES, pause: FIGURES }, []);

    const lifted = await store().lift(tenant, ACCOUNT, { at: '2026-03-03T09:00:00.000Z', note: 'ticket 42', baseline });

    const expected = { subject: ACCOUNT, liftedAt: '2026-03-03T09:00:00.000Z', liftNote: 'ticket 42', baseline };
    expect(lifted).toEqual(expected);
    expect(await store().standings(tenant)).toEqual([expected]);
    expect(await store().lift(tenant, ACCOUNT, { at, note: 'again', baseline })).toBeNull();
    // Warned and paused again later: a new episode on the same item.
    expect(await store().note(tenant, ACCOUNT, { at, warning: FIGURES }, [])).not.toBeNull();
  });
}
