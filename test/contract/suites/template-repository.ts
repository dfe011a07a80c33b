// Contract suite for the TemplateRepository port, run against DynamoTemplateRepository (dynalite, DynamoDB Local)
// and InMemoryTemplateRepository: records are created once and replaced only over the revision read; listing is
// newest first with after/before cursors and counts only records; versions are kept apart per template; an alias
// has one claim, taken over only from the owner named; tenants (accounts and modes) are apart.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { TemplateRecord, TemplateRepository, TemplateVersion } from '../../../lambdas/app/templates/ports';
import type { Tenant } from '../../../lambdas/app/webhooks/ports';
import { timeOrderedId } from '../../../lambdas/domain/ids';
import type { RepositoryHarness } from './harness';

const AT = '2026-04-01T10:00:00.000Z';

const newTenant = (mode: Tenant['mode'] = 'test'): Tenant => ({
  accountId: `acct_${randomBytes(6).toString('hex')}`,
  mode,
});

function newRecord(tenant: Tenant, ms: number, overrides: Partial<TemplateRecord> = {}): TemplateRecord {
  return {
    ...tenant,
    id: timeOrderedId('tpl', ms, randomBytes),
    name: 'Welcome',
    createdAt: AT,
    updatedAt: AT,
    rev: 1,
    draftVersionId: 'tplv_1',
    ...overrides,
  };
}

const version = (id: string, overrides: Partial<TemplateVersion> = {}): TemplateVersion => ({
  id,
  createdAt: AT,
  subject: 'Hi {{{NAME}}}',
  html: '<p>Hi {{{NAME}}}</p>',
  text: 'Hi {{{NAME}}}',
  from: 'Acme <hi@acme.example>',
  replyTo: ['help@acme.example'],
  variables: [
    { key: 'NAME', type: 'string', fallback: 'there', createdAt: AT, updatedAt: AT },
    { key: 'TOTAL', type: 'number', fallback: 25, createdAt: AT, updatedAt: AT },
    { key: 'BODY', type: 'string', unescaped: true, createdAt: AT, updatedAt: AT },
  ],
  ...overrides,
});

export function templateRepositoryContract(harness: RepositoryHarness<TemplateRepository>): void {
  const repo = () => harness.shared();

  it('creates a record once and reads it back exactly (optional fields too); null for unknown ids', async () => {
    // Arrange
    const tenant = newTenant();
    const plain = newRecord(tenant, 1_000);
    const full = newRecord(tenant, 2_000, { alias: 'welcome', publishedVersionId: 'tplv_0', publishedAt: AT });

    // Act
    const created = [await repo().create(plain), await repo().create(full), await repo().create(plain)];

    // Assert
    expect(created).toEqual([true, true, false]);
    expect(await repo().get(tenant, plain.id)).toEqual(plain);
    expect(await repo().get(tenant, full.id, { consistent: true })).toEqual(full);
    expect(await repo().get(tenant, 'tpl_00000000000000000000000000')).toBeNull();
    expect(await repo().get(newTenant(), plain.id)).toBeNull();
    expect(await repo().get({ ...tenant, mode: 'live' }, plain.id)).toBeNull();
  });

  it('replace() writes only over the revision read, and can drop optional fields', async () => {
    // Arrange
    const tenant = newTenant();
    const record = newRecord(tenant, 1_000, { alias: 'a' });
    await repo().create(record);
    const { alias: _alias, ...withoutAlias } = record;

    // Act
    const stale = await repo().replace({ ...record, name: 'Stale', rev: 2 }, 7);
    const fresh = await repo().replace({ ...withoutAlias, name: 'Fresh', rev: 2 }, 1);
    const again = await repo().replace({ ...withoutAlias, name: 'Again', rev: 2 }, 1);

    // Assert
    expect([stale, fresh, again]).toEqual([false, true, false]);
    expect(await repo().get(tenant, record.id)).toEqual({ ...withoutAlias, name: 'Fresh', rev: 2 });
  });

  it('lists records only, newest first, in pages with after and before; counts them', async () => {
    // Arrange
    const tenant = newTenant();
    const records = [1_000, 2_000, 3_000, 4_000, 5_000].map((ms) => newRecord(tenant, ms));
    for (const record of records) await repo().create(record);
    await repo().claimAlias(tenant, 'some-alias', records[0]?.id as string);
    await repo().putVersion(tenant, records[0]?.id as string, version('tplv_x'));
    const ids = records.map((r) => r.id).reverse();

    // Act
    const first = await repo().list(tenant, { limit: 2 });
    const second = await repo().list(tenant, { limit: 2, after: first.items.at(-1)?.id as string });
    const last = await repo().list(tenant, { limit: 2, after: second.items.at(-1)?.id as string });
    const back = await repo().list(tenant, { limit: 2, before: last.items[0]?.id as string });
    const all = await repo().list(tenant, { limit: 100 });

    // Assert
    expect(first.items.map((r) => r.id)).toEqual(ids.slice(0, 2));
    expect(first.hasMore).toBe(true);
    expect(second.items.map((r) => r.id)).toEqual(ids.slice(2, 4));
    expect(last.items.map((r) => r.id)).toEqual(ids.slice(4));
    expect(last.hasMore).toBe(false);
    expect(back.items.map((r) => r.id)).toEqual(ids.slice(2, 4));
    expect(back.hasMore).toBe(true);
    expect(all.items.map((r) => r.id)).toEqual(ids);
    expect(await repo().count(tenant)).toBe(5);
    expect(await repo().count({ ...tenant, mode: 'live' })).toBe(0);
    expect((await repo().list(newTenant(), { limit: 10 })).items).toEqual([]);
  });

  it('stores versions per template, exactly, and deletes one or all of them', async () => {
    // Arrange
    const tenant = newTenant();
    const a = newRecord(tenant, 1_000);
    const b = newRecord(tenant, 2_000);
    const bare: TemplateVersion = { id: 'tplv_bare', createdAt: AT, html: '<p>x</p>', replyTo: [], variables: [] };

    // Act
    await repo().putVersion(tenant, a.id, version('tplv_1'));
    await repo().putVersion(tenant, a.id, version('tplv_2', { subject: 'Two' }));
    await repo().putVersion(tenant, a.id, bare);
    await repo().putVersion(tenant, b.id, version('tplv_1', { html: '<p>b</p>' }));
    await repo().deleteVersion(tenant, a.id, 'tplv_2');
    await repo().deleteVersion(tenant, a.id, 'tplv_missing');

    // Assert
    expect(await repo().getVersion(tenant, a.id, 'tplv_1')).toEqual(version('tplv_1'));
    expect(await repo().getVersion(tenant, a.id, 'tplv_bare')).toEqual(bare);
    expect(await repo().getVersion(tenant, a.id, 'tplv_2')).toBeNull();
    expect((await repo().getVersion(tenant, b.id, 'tplv_1'))?.html).toBe('<p>b</p>');
    expect(await repo().getVersion(newTenant(), a.id, 'tplv_1')).toBeNull();
    await repo().deleteVersions(tenant, a.id);
    expect(await repo().getVersion(tenant, a.id, 'tplv_1')).toBeNull();
    expect(await repo().getVersion(tenant, b.id, 'tplv_1')).not.toBeNull();
  });

  it('an alias has one claim: taken when free or from the owner named, released only by its owner', async () => {
    // Arrange
    const tenant = newTenant();

    // Act / Assert
    expect(await repo().claimAlias(tenant, 'welcome', 'tpl_a')).toBe(true);
    expect(await repo().claimAlias(tenant, 'welcome', 'tpl_b')).toBe(false);
    expect(await repo().claimAlias(tenant, 'welcome', 'tpl_b', 'tpl_c')).toBe(false);
    expect(await repo().aliasOwner(tenant, 'welcome')).toBe('tpl_a');
    expect(await repo().aliasOwner({ ...tenant, mode: 'live' }, 'welcome')).toBeNull();
    expect(await repo().claimAlias({ ...tenant, mode: 'live' }, 'welcome', 'tpl_z')).toBe(true);
    await repo().releaseAlias(tenant, 'welcome', 'tpl_b');
    expect(await repo().aliasOwner(tenant, 'welcome')).toBe('tpl_a');
    expect(await repo().claimAlias(tenant, 'welcome', 'tpl_b', 'tpl_a')).toBe(true);
    expect(await repo().aliasOwner(tenant, 'welcome')).toBe('tpl_b');
    await repo().releaseAlias(tenant, 'welcome', 'tpl_b');
    expect(await repo().aliasOwner(tenant, 'welcome')).toBeNull();
  });

  it('delete() removes a record once', async () => {
    // Arrange
    const tenant = newTenant();
    const record = newRecord(tenant, 1_000);
    await repo().create(record);

    // Act
    const first = await repo().delete(tenant, record.id);
    const second = await repo().delete(tenant, record.id);

    // Assert
    expect([first, second]).toEqual([true, false]);
    expect(await repo().get(tenant, record.id)).toBeNull();
    expect(await repo().count(tenant)).toBe(0);
  });
}
