// Contract suite for the DomainRepository port, run against DynamoDomainRepository (dynalite, DynamoDB Local)
// and InMemoryDomainRepository: create refuses a duplicate (false) and keeps the first; setStatus changes the
// status only from the expected one; listPending spans every tenant, holds only pending domains, and a domain
// leaves it once verified (or failed) and comes back when set pending again.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { Domain, DomainRepository } from '../../../lambdas/app/domains/ports';
import type { Tenant } from '../../../lambdas/app/webhooks/ports';
import type { RepositoryHarness } from './harness';

const AT = '2025-04-01T10:00:00.000Z';
const LATER = '2025-04-01T10:05:00.000Z';

const newTenant = (mode: Tenant['mode'] = 'live'): Tenant => ({
  accountId: `acct_${randomBytes(6).toString('hex')}`,
  mode,
});

function newDomain(tenant: Tenant, overrides: Partial<Domain> = {}): Domain {
  const name = `${randomBytes(4).toString('hex')}.example.com`;
  return {
    ...tenant,
    id: `dom_${randomBytes(10).toString('hex')}`,
    name,
    status: 'pending',
    records: [
      { type: 'CNAME', name: `a1._domainkey.${name}`, value: 'a1.dkim.amazonses.com' },
      { type: 'CNAME', name: `b2._domainkey.${name}`, value: 'b2.dkim.amazonses.com' },
    ],
    openTracking: false,
    clickTracking: false,
    capabilities: { sending: 'enabled', receiving: 'disabled' },
    createdAt: AT,
    updatedAt: AT,
    ...overrides,
  };
}

export function domainRepositoryContract(harness: RepositoryHarness<DomainRepository>): void {
  const repo = () => harness.shared();

  it('creates a domain and reads it back exactly; null for an unknown id', async () => {
    // Arrange
    const tenant = newTenant();
    const domain = newDomain(tenant);

    // Act
    const created = await repo().create(domain, []);

    // Assert
    expect(created).not.toBeNull();
    expect(await repo().get(tenant, domain.id)).toEqual(domain);
    expect(await repo().get(tenant, 'dom_unknown')).toBeNull();
  });

  it('reads a domain stored without capabilities as sending and not receiving (domains from before them)', async () => {
    // Arrange
    const tenant = newTenant();
    const { capabilities: _none, ...old } = newDomain(tenant);

    // Act
    await repo().create(old, []);

    // Assert
    expect((await repo().get(tenant, old.id))?.capabilities).toEqual({ sending: 'enabled', receiving: 'disabled' });
  });

  it('setCapabilities() stores the capabilities and records (an MX record with its priority) with its events; null for a missing or deleted domain', async () => {
    // Arrange
    const tenant = newTenant();
    const domain = newDomain(tenant, { status: 'verified' });
    await repo().create(domain, []);
    const gone = newDomain(tenant);
    await repo().create(gone, []);
    await repo().delete(tenant, gone.id, LATER, []);
    const records = [
      ...domain.records,
      { type: 'MX' as const, name: domain.name, value: 'mx.example.net', priority: 10 },
    ];
    const capabilities = { sending: 'disabled', receiving: 'enabled' } as const;

    // Act
    const changed = await repo().setCapabilities(tenant, domain.id, { capabilities, records }, LATER, []);
    const missing = await repo().setCapabilities(tenant, 'dom_unknown', { capabilities, records }, LATER, []);
    const deleted = await repo().setCapabilities(tenant, gone.id, { capabilities, records }, LATER, []);

    // Assert
    const expected = { ...domain, capabilities, records, updatedAt: LATER };
    expect(changed?.value).toEqual(expected);
    expect(await repo().get(tenant, domain.id)).toEqual(expected);
    expect(missing).toBeNull();
    expect(deleted).toBeNull();
    expect(await repo().get(tenant, 'dom_unknown')).toBeNull();
  });

  it('nameHolder() names the account holding a live name, null when none does or it was released', async () => {
    // Arrange
    const name = `${randomBytes(4).toString('hex')}.example.org`;
    const free = `${randomBytes(4).toString('hex')}.example.org`;
    const first = newTenant();
    const second = newTenant();

    // Act
    await repo().claimName(name, first.accountId);
    const taken = await repo().claimName(name, second.accountId);
    const holder = await repo().nameHolder(name);
    await repo().releaseName(name, first.accountId);

    // Assert
    expect(taken).toBe(false);
    expect(holder).toBe(first.accountId);
    expect(await repo().nameHolder(name)).toBeNull();
    expect(await repo().nameHolder(free)).toBeNull();
  });

  it('stores open and click tracking with the domain, each on its own', async () => {
    // Arrange
    const tenant = newTenant();
    const opens = newDomain(tenant, { openTracking: true });
    const clicks = newDomain(tenant, { clickTracking: true });

    // Act
    await repo().create(opens, []);
    await repo().create(clicks, []);

    // Assert
    expect(await repo().get(tenant, opens.id)).toMatchObject({ openTracking: true, clickTracking: false });
    expect(await repo().get(tenant, clicks.id)).toMatchObject({ openTracking: false, clickTracking: true });
  });

  it('setTracking() changes only the flags it is given, with its events; null for a missing or deleted domain', async () => {
    // Arrange
    const tenant = newTenant();
    const domain = newDomain(tenant, { status: 'verified' });
    await repo().create(domain, []);
    const gone = newDomain(tenant);
    await repo().create(gone, []);
    await repo().delete(tenant, gone.id, LATER, []);

    // Act
    const clicks = await repo().setTracking(tenant, domain.id, { clickTracking: true }, LATER, []);
    const both = await repo().setTracking(tenant, domain.id, { openTracking: true, clickTracking: false }, LATER, []);
    const missing = await repo().setTracking(tenant, 'dom_unknown', { openTracking: true }, LATER, []);
    const deleted = await repo().setTracking(tenant, gone.id, { openTracking: true }, LATER, []);

    // Assert
    expect(clicks?.value).toEqual({ ...domain, clickTracking: true, updatedAt: LATER });
    expect(both?.value).toEqual({ ...domain, openTracking: true, clickTracking: false, updatedAt: LATER });
    expect(await repo().get(tenant, domain.id)).toEqual(both?.value);
    expect(missing).toBeNull();
    expect(deleted).toBeNull();
  });

  it('create() of an id the tenant has is false and keeps the first', async () => {
    // Arrange
    const tenant = newTenant();
    const domain = newDomain(tenant);
    await repo().create(domain, []);

    // Act
    const again = await repo().create({ ...domain, status: 'verified', records: [] }, []);

    // Assert
    expect(again).toBeNull();
    expect(await repo().get(tenant, domain.id)).toEqual(domain);
  });

  it('keeps tenants apart: the same id in another account or mode is another domain', async () => {
    // Arrange
    const live = newTenant('live');
    const domain = newDomain(live);
    await repo().create(domain, []);
    const test: Tenant = { accountId: live.accountId, mode: 'test' };

    // Act
    const inTest = await repo().get(test, domain.id);
    const inOther = await repo().get(newTenant('live'), domain.id);
    const createdInTest = await repo().create({ ...domain, ...test }, []);

    // Assert
    expect(inTest).toBeNull();
    expect(inOther).toBeNull();
    expect(createdInTest).not.toBeNull();
    expect(await repo().list(live)).toEqual([domain]);
  });

  it('list() gives all of a tenant’s domains and no one else’s', async () => {
    // Arrange
    const tenant = newTenant();
    const domains = [newDomain(tenant), newDomain(tenant), newDomain(tenant, { status: 'verified' })];
    for (const domain of domains) await repo().create(domain, []);
    await repo().create(newDomain(newTenant()), []);

    // Act
    const listed = await repo().list(tenant);

    // Assert
    expect([...listed].sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      [...domains].sort((a, b) => a.id.localeCompare(b.id)),
    );
  });

  it('setStatus() moves from the expected status, stamps updatedAt and returns the domain as stored', async () => {
    // Arrange
    const tenant = newTenant();
    const domain = newDomain(tenant);
    await repo().create(domain, []);

    // Act
    const updated = await repo().setStatus(tenant, domain.id, { from: 'pending', to: 'verified', at: LATER }, []);

    // Assert
    const expected = { ...domain, status: 'verified', updatedAt: LATER };
    expect(updated?.value).toEqual(expected);
    expect(await repo().get(tenant, domain.id)).toEqual(expected);
  });

  it('setStatus() from a status the domain no longer has is null and changes nothing (the race is lost once)', async () => {
    // Arrange
    const tenant = newTenant();
    const domain = newDomain(tenant);
    await repo().create(domain, []);
    await repo().setStatus(tenant, domain.id, { from: 'pending', to: 'verified', at: LATER }, []);

    // Act
    const stale = await repo().setStatus(
      tenant,
      domain.id,
      { from: 'pending', to: 'failed', at: '2025-04-01T11:00:00.000Z' },
      [],
    );

    // Assert
    expect(stale).toBeNull();
    expect(await repo().get(tenant, domain.id)).toEqual({ ...domain, status: 'verified', updatedAt: LATER });
  });

  it('setStatus() of an unknown id, or of another tenant’s domain, is null and creates nothing', async () => {
    // Arrange
    const tenant = newTenant();
    const domain = newDomain(tenant);
    await repo().create(domain, []);
    const other = newTenant();

    // Act
    const unknown = await repo().setStatus(tenant, 'dom_missing', { from: 'pending', to: 'verified', at: LATER }, []);
    const foreign = await repo().setStatus(other, domain.id, { from: 'pending', to: 'verified', at: LATER }, []);

    // Assert
    expect(unknown).toBeNull();
    expect(foreign).toBeNull();
    expect(await repo().get(tenant, 'dom_missing')).toBeNull();
    expect(await repo().get(other, domain.id)).toBeNull();
    expect(await repo().get(tenant, domain.id)).toEqual(domain);
  });

  it('of two parallel setStatus() calls from pending exactly one wins', async () => {
    // Arrange
    const tenant = newTenant();
    const domain = newDomain(tenant);
    await repo().create(domain, []);

    // Act
    const results = await Promise.all([
      repo().setStatus(tenant, domain.id, { from: 'pending', to: 'verified', at: LATER }, []),
      repo().setStatus(tenant, domain.id, { from: 'pending', to: 'failed', at: LATER }, []),
    ]);

    // Assert
    expect(results.filter((r) => r !== null)).toHaveLength(1);
  });

  it('delete() is true once, then false; the domain is gone', async () => {
    // Arrange
    const tenant = newTenant();
    const domain = newDomain(tenant);
    await repo().create(domain, []);

    // Act
    const first = await repo().delete(tenant, domain.id, LATER, []);
    const second = await repo().delete(tenant, domain.id, LATER, []);

    // Assert
    expect(first).not.toBeNull();
    expect(second).toBeNull();
    expect(await repo().get(tenant, domain.id)).toBeNull();
  });

  it('delete() of another tenant’s domain is false and leaves it', async () => {
    // Arrange
    const tenant = newTenant();
    const domain = newDomain(tenant);
    await repo().create(domain, []);

    // Act
    const foreign = await repo().delete({ accountId: tenant.accountId, mode: 'test' }, domain.id, LATER, []);

    // Assert
    expect(foreign).toBeNull();
    expect(await repo().get(tenant, domain.id)).toEqual(domain);
  });

  it('listPending() spans tenants and holds only pending domains; verifying or failing one takes it out', async () => {
    // Arrange: fresh storage, since the listing spans every tenant.
    const fresh = await harness.fresh();
    const a = newTenant('live');
    const b = newTenant('test');
    const pendingA = newDomain(a);
    const pendingB = newDomain(b);
    const toVerify = newDomain(a);
    const toFail = newDomain(b);
    for (const domain of [pendingA, pendingB, toVerify, toFail, newDomain(a, { status: 'verified' })]) {
      await fresh.create(domain, []);
    }
    const before = await fresh.listPending(100);

    // Act
    await fresh.setStatus(a, toVerify.id, { from: 'pending', to: 'verified', at: LATER }, []);
    await fresh.setStatus(b, toFail.id, { from: 'pending', to: 'failed', at: LATER }, []);
    const after = await fresh.listPending(100);

    // Assert
    const ids = (domains: Domain[]) => domains.map((d) => d.id).sort();
    expect(ids(before)).toEqual([pendingA.id, pendingB.id, toVerify.id, toFail.id].sort());
    expect(ids(after)).toEqual([pendingA.id, pendingB.id].sort());
    expect(after.find((d) => d.id === pendingB.id)).toEqual(pendingB);
  });

  it('listPending() takes a domain set back to pending, and drops a deleted one', async () => {
    // Arrange
    const fresh = await harness.fresh();
    const tenant = newTenant();
    const back = newDomain(tenant, { status: 'failed' });
    const gone = newDomain(tenant);
    await fresh.create(back, []);
    await fresh.create(gone, []);

    // Act
    await fresh.setStatus(tenant, back.id, { from: 'failed', to: 'pending', at: LATER }, []);
    await fresh.delete(tenant, gone.id, LATER, []);
    const pending = await fresh.listPending(100);

    // Assert
    expect(pending).toEqual([{ ...back, status: 'pending', updatedAt: LATER }]);
  });

  it('listPending(limit) returns at most limit domains', async () => {
    // Arrange
    const fresh = await harness.fresh();
    const tenant = newTenant();
    for (let i = 0; i < 5; i++) await fresh.create(newDomain(tenant), []);

    // Act
    const two = await fresh.listPending(2);

    // Assert
    expect(two).toHaveLength(2);
    expect(two.every((d) => d.status === 'pending')).toBe(true);
  });
}
