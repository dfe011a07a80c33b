// Contract suite for the ContactRepository port, run against DynamoContactRepository (dynalite, DynamoDB Local)
// and InMemoryContactRepository: create refuses a duplicate (false) and keeps the first; update sets names,
// clears them with null and leaves undefined ones alone; subscribe moves pending → subscribed once; tenants
// (accounts and modes) are apart.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { Contact, ContactRepository } from '../../../lambdas/app/contacts/contacts';
import type { Tenant } from '../../../lambdas/app/webhooks/ports';
import type { RepositoryHarness } from './harness';

const AT = '2025-04-01T10:00:00.000Z';
const LATER = '2025-04-02T08:30:00.000Z';
/** No events: these cases are about the stored contact (the outbox has its own suite). */
const none = () => [];

const newTenant = (mode: Tenant['mode'] = 'test'): Tenant => ({
  accountId: `acct_${randomBytes(6).toString('hex')}`,
  mode,
});

function newContact(tenant: Tenant, overrides: Partial<Contact> = {}): Contact {
  const tag = randomBytes(4).toString('hex');
  return {
    ...tenant,
    id: `ct_${tag}`,
    email: `ada.${tag}@example.com`,
    firstName: 'Ada',
    lastName: 'Lovelace',
    status: 'pending',
    createdAt: AT,
    updatedAt: AT,
    ...overrides,
  };
}

export function contactRepositoryContract(harness: RepositoryHarness<ContactRepository>): void {
  const repo = () => harness.shared();

  it('creates a contact and reads it back exactly, with and without names; null for an unknown id', async () => {
    // Arrange
    const tenant = newTenant();
    const named = newContact(tenant);
    const { firstName: _f, lastName: _l, ...bare } = newContact(tenant);

    // Act
    const created = [await repo().create(named, []), await repo().create(bare, [])];

    // Assert
    expect(created.map((c) => c !== null)).toEqual([true, true]);
    expect(await repo().get(tenant, named.id)).toEqual(named);
    expect(await repo().get(tenant, bare.id)).toEqual(bare);
    expect(await repo().get(tenant, 'ct_unknown')).toBeNull();
  });

  it('create() of an id the tenant has is false and keeps the first', async () => {
    // Arrange
    const tenant = newTenant();
    const contact = newContact(tenant);
    await repo().create(contact, []);

    // Act
    const again = await repo().create({ ...contact, firstName: 'Eve', status: 'subscribed' }, []);

    // Assert
    expect(again).toBeNull();
    expect(await repo().get(tenant, contact.id)).toEqual(contact);
  });

  it('keeps tenants apart: the same id in the other mode or another account is not found, and can be created', async () => {
    // Arrange
    const tenant = newTenant('live');
    const contact = newContact(tenant);
    await repo().create(contact, []);
    const test: Tenant = { accountId: tenant.accountId, mode: 'test' };

    // Act
    const inTest = await repo().get(test, contact.id);
    const inOther = await repo().get(newTenant('live'), contact.id);
    const createdInTest = await repo().create({ ...contact, ...test }, []);

    // Assert
    expect(inTest).toBeNull();
    expect(inOther).toBeNull();
    expect(createdInTest).not.toBeNull();
    expect(await repo().list(tenant)).toEqual([contact]);
  });

  it('list() gives all of a tenant’s contacts and no one else’s', async () => {
    // Arrange
    const tenant = newTenant();
    const contacts = Array.from({ length: 4 }, () => newContact(tenant));
    for (const contact of contacts) await repo().create(contact, []);
    await repo().create(newContact(newTenant()), []);

    // Act
    const listed = await repo().list(tenant);

    // Assert
    const byId = (a: Contact, b: Contact) => a.id.localeCompare(b.id);
    expect([...listed].sort(byId)).toEqual([...contacts].sort(byId));
  });

  it('update() sets a name, clears the other with null, stamps updatedAt, and returns the contact as stored', async () => {
    // Arrange
    const tenant = newTenant();
    const contact = newContact(tenant);
    await repo().create(contact, []);

    // Act
    const updated = await repo().update(tenant, contact.id, { firstName: 'Augusta', lastName: null }, LATER, none);

    // Assert
    const { lastName: _cleared, ...rest } = contact;
    const expected = { ...rest, firstName: 'Augusta', updatedAt: LATER };
    expect(updated?.value).toEqual(expected);
    expect(await repo().get(tenant, contact.id)).toEqual(expected);
  });

  it('update() leaves a name given as undefined unchanged, and can clear both', async () => {
    // Arrange
    const tenant = newTenant();
    const contact = newContact(tenant);
    await repo().create(contact, []);

    // Act
    const onlyLast = await repo().update(tenant, contact.id, { lastName: 'King' }, LATER, none);
    const cleared = await repo().update(tenant, contact.id, { firstName: null, lastName: null }, LATER, none);

    // Assert
    expect(onlyLast?.value).toMatchObject({ firstName: 'Ada', lastName: 'King' });
    expect(cleared?.value).not.toHaveProperty('firstName');
    expect(cleared?.value).not.toHaveProperty('lastName');
    expect(await repo().get(tenant, contact.id)).toEqual(cleared?.value);
  });

  it('update() of an unknown id, or of another tenant’s contact, is null and creates nothing', async () => {
    // Arrange
    const tenant = newTenant();
    const contact = newContact(tenant);
    await repo().create(contact, []);
    const other = newTenant();

    // Act
    const unknown = await repo().update(tenant, 'ct_missing', { firstName: 'X' }, LATER, none);
    const foreign = await repo().update(other, contact.id, { firstName: 'X' }, LATER, none);

    // Assert
    expect(unknown).toBeNull();
    expect(foreign).toBeNull();
    expect(await repo().get(tenant, 'ct_missing')).toBeNull();
    expect(await repo().get(other, contact.id)).toBeNull();
    expect(await repo().get(tenant, contact.id)).toEqual(contact);
  });

  it('subscribe() moves pending → subscribed once, with subscribedAt and updatedAt; a second is null', async () => {
    // Arrange
    const tenant = newTenant();
    const contact = newContact(tenant);
    await repo().create(contact, []);

    // Act
    const first = await repo().subscribe(tenant, contact.id, LATER, none);
    const second = await repo().subscribe(tenant, contact.id, '2025-04-03T00:00:00.000Z', none);

    // Assert
    const expected = { ...contact, status: 'subscribed', subscribedAt: LATER, updatedAt: LATER };
    expect(first?.value).toEqual(expected);
    expect(second).toBeNull();
    expect(await repo().get(tenant, contact.id)).toEqual(expected);
  });

  it('subscribe() of an unknown id is null and creates nothing', async () => {
    // Arrange
    const tenant = newTenant();

    // Act
    const result = await repo().subscribe(tenant, 'ct_missing', LATER, none);

    // Assert
    expect(result).toBeNull();
    expect(await repo().get(tenant, 'ct_missing')).toBeNull();
  });

  it('of five parallel subscribe() calls exactly one succeeds', async () => {
    // Arrange
    const tenant = newTenant();
    const contact = newContact(tenant);
    await repo().create(contact, []);

    // Act
    const results = await Promise.all(
      Array.from({ length: 5 }, () => repo().subscribe(tenant, contact.id, LATER, none)),
    );

    // Assert
    expect(results.filter((r) => r !== null)).toHaveLength(1);
  });

  it('delete() is true once, then false; another tenant cannot delete it', async () => {
    // Arrange
    const tenant = newTenant();
    const contact = newContact(tenant);
    await repo().create(contact, []);

    // Act
    const foreign = await repo().delete(newTenant(), contact.id, LATER, []);
    const first = await repo().delete(tenant, contact.id, LATER, []);
    const second = await repo().delete(tenant, contact.id, LATER, []);

    // Assert
    expect([foreign, first, second].map((r) => r !== null)).toEqual([false, true, false]);
    expect(await repo().get(tenant, contact.id)).toBeNull();
  });
}
