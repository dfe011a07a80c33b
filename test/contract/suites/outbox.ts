// Contract suite for the transactional outbox, run against the DynamoDB repositories (DynamoOutbox on
// dynalite, DynamoDB Local) and the in-memory fakes: a state change records its events in the same write;
// due() lists them by age; clear() removes exactly the events it names; a deleted item is unreadable at once
// but keeps its events until relayed (and a re-created one keeps them too); the sweep relays each event once.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { Contact, ContactRepository } from '../../../lambdas/app/contacts/contacts';
import { DEFAULT_CAPABILITIES, type Domain, type DomainRepository } from '../../../lambdas/app/domains/ports';
import type { SuppressionList } from '../../../lambdas/app/emails/ports';
import { sweepOutboxes } from '../../../lambdas/app/outbox';
import type { Tenant } from '../../../lambdas/app/webhooks/ports';
import { newEvent, type SendflowEvent } from '../../../lambdas/domain/events';
import { RecordingEventPublisher } from '../../support/fakes';
import type { RepositoryHarness } from './harness';

export interface OutboxRepositories {
  readonly domains: DomainRepository;
  readonly contacts: ContactRepository;
  readonly suppressions: SuppressionList;
}

const T0 = Date.UTC(2025, 3, 1, 10, 0, 0);
const AT = new Date(T0).toISOString();
const MINUTE = 60_000;

const newTenant = (): Tenant => ({ accountId: `acct_${randomBytes(6).toString('hex')}`, mode: 'live' });

function newDomain(tenant: Tenant): Domain {
  const name = `${randomBytes(4).toString('hex')}.example.com`;
  const tracking = { openTracking: false, clickTracking: false, capabilities: DEFAULT_CAPABILITIES };
  return {
    ...tenant,
    id: `dom_${name}`,
    name,
    status: 'pending',
    records: [],
    ...tracking,
    createdAt: AT,
    updatedAt: AT,
  };
}

function event(tenant: Tenant, type: SendflowEvent['type'], at = T0, data: Record<string, unknown> = {}) {
  return newEvent({ type, accountId: tenant.accountId, mode: tenant.mode, at, data }, randomBytes);
}

const ids = (events: readonly SendflowEvent[]) => events.map((e) => e.id).sort();

export function outboxContract(harness: RepositoryHarness<OutboxRepositories>): void {
  it('records a change’s events with it; due() lists them once they are older than the cut-off', async () => {
    // Arrange
    const { domains } = await harness.fresh();
    const tenant = newTenant();
    const created = event(tenant, 'domain.created');

    // Act
    const pending = await domains.create(newDomain(tenant), [created]);

    // Assert
    expect(pending?.events).toEqual([created]);
    expect(await domains.outbox.due(T0 - 1, 10)).toEqual([]);
    const due = await domains.outbox.due(T0, 10);
    expect(due).toHaveLength(1);
    expect(due[0]?.events).toEqual([created]);
    expect(due[0]?.ref).toEqual(pending?.ref);
  });

  it('a change that does not happen records nothing (a duplicate create, a lost status race)', async () => {
    // Arrange
    const { domains } = await harness.fresh();
    const tenant = newTenant();
    const domain = newDomain(tenant);
    const first = await domains.create(domain, []);

    // Act
    const again = await domains.create(domain, [event(tenant, 'domain.created')]);
    const stale = await domains.setStatus(tenant, domain.id, { from: 'verified', to: 'failed', at: AT }, [
      event(tenant, 'domain.updated'),
    ]);

    // Assert
    expect(first).not.toBeNull();
    expect(again).toBeNull();
    expect(stale).toBeNull();
    expect(await domains.outbox.due(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
  });

  it('clear() removes exactly the events it names; those recorded meanwhile stay; clearing twice is harmless', async () => {
    // Arrange
    const { domains } = await harness.fresh();
    const tenant = newTenant();
    const domain = newDomain(tenant);
    const created = event(tenant, 'domain.created');
    const updated = event(tenant, 'domain.updated', T0 + MINUTE);
    const first = await domains.create(domain, [created]);
    const second = await domains.setStatus(tenant, domain.id, { from: 'pending', to: 'verified', at: AT }, [updated]);

    // Act
    if (first) await domains.outbox.clear(first);
    const afterFirst = await domains.outbox.due(Number.MAX_SAFE_INTEGER, 10);
    if (first) await domains.outbox.clear(first);
    if (second) await domains.outbox.clear(second.pending);
    const afterBoth = await domains.outbox.due(Number.MAX_SAFE_INTEGER, 10);

    // Assert
    expect(afterFirst.flatMap((p) => p.events)).toEqual([updated]);
    expect(afterBoth).toEqual([]);
    expect(await domains.get(tenant, domain.id)).toMatchObject({ status: 'verified' });
  });

  it('a deleted item is gone for readers at once, keeps its events until they are cleared, then is gone', async () => {
    // Arrange
    const { domains } = await harness.fresh();
    const tenant = newTenant();
    const domain = newDomain(tenant);
    await domains.create(domain, []);
    const deleted = event(tenant, 'domain.deleted');

    // Act
    const pending = await domains.delete(tenant, domain.id, AT, [deleted]);
    const again = await domains.delete(tenant, domain.id, AT, [event(tenant, 'domain.deleted')]);

    // Assert
    expect(again).toBeNull();
    expect(await domains.get(tenant, domain.id)).toBeNull();
    expect(await domains.list(tenant)).toEqual([]);
    expect(await domains.listPending(10)).toEqual([]);
    expect((await domains.outbox.due(T0, 10)).flatMap((p) => p.events)).toEqual([deleted]);
    if (pending) await domains.outbox.clear(pending);
    expect(await domains.outbox.due(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
    expect(await domains.create(domain, [])).not.toBeNull();
  });

  it('re-creating a deleted item before its events are relayed keeps them, with the new ones', async () => {
    // Arrange
    const { domains } = await harness.fresh();
    const tenant = newTenant();
    const domain = newDomain(tenant);
    await domains.create(domain, []);
    const deleted = event(tenant, 'domain.deleted');
    await domains.delete(tenant, domain.id, AT, [deleted]);
    const created = event(tenant, 'domain.created', T0 + MINUTE);

    // Act
    const recreated = await domains.create(domain, [created]);

    // Assert
    expect(recreated).not.toBeNull();
    expect(await domains.get(tenant, domain.id)).toEqual(domain);
    expect(ids((await domains.outbox.due(Number.MAX_SAFE_INTEGER, 10)).flatMap((p) => p.events))).toEqual(
      ids([deleted, created]),
    );
  });

  it('a contact change records the events made from the contact as the change leaves it', async () => {
    // Arrange
    const { contacts } = await harness.fresh();
    const tenant = newTenant();
    const contact: Contact = {
      ...tenant,
      id: `ct_${randomBytes(4).toString('hex')}`,
      email: 'ada@example.com',
      firstName: 'Ada',
      status: 'pending',
      createdAt: AT,
      updatedAt: AT,
    };
    await contacts.create(contact, []);

    // Act
    const updated = await contacts.update(tenant, contact.id, { lastName: 'King' }, AT, (next) => [
      event(tenant, 'contact.updated', T0, { last_name: next.lastName ?? null }),
    ]);
    const subscribed = await contacts.subscribe(tenant, contact.id, AT, (next) => [
      event(tenant, 'contact.subscribed', T0, { status: next.status }),
    ]);

    // Assert
    const waiting = (await contacts.outbox.due(T0, 10)).flatMap((p) => p.events);
    expect(waiting.map((e) => [e.type, e.data])).toEqual(
      expect.arrayContaining([
        ['contact.updated', { last_name: 'King' }],
        ['contact.subscribed', { status: 'subscribed' }],
      ]),
    );
    expect(waiting).toHaveLength(2);
    expect(updated?.pending.events).toHaveLength(1);
    expect(subscribed?.value.status).toBe('subscribed');
  });

  it('a one-click unsubscribe suppresses and records its event once per email; the first reason stays', async () => {
    // Arrange
    const { suppressions } = await harness.fresh();
    const tenant = newTenant();
    await suppressions.add(tenant, { address: 'bob@example.com', reason: 'hard_bounce', createdAt: AT });
    const unsubscribe = (address: string, emailId: string) =>
      suppressions.unsubscribe(tenant, { address, reason: 'unsubscribe', createdAt: AT, emailId }, [
        event(tenant, 'email.unsubscribed'),
      ]);

    // Act
    const first = await unsubscribe('ada@example.com', 'email_1');
    const repeat = await unsubscribe('ada@example.com', 'email_1');
    const otherEmail = await unsubscribe('ada@example.com', 'email_2');
    const bounced = await unsubscribe('bob@example.com', 'email_1');

    // Assert
    expect([first, repeat, otherEmail, bounced].map((r) => r !== null)).toEqual([true, false, true, true]);
    const found = await suppressions.find(tenant, ['ada@example.com', 'bob@example.com']);
    expect(found.get('ada@example.com')).toMatchObject({ reason: 'unsubscribe', emailId: 'email_1' });
    expect(found.get('bob@example.com')?.reason).toBe('hard_bounce');
    expect((await suppressions.outbox.due(T0, 10)).flatMap((p) => p.events)).toHaveLength(3);
  });

  it('the sweep relays every waiting event once, across tables, and leaves nothing behind', async () => {
    // Arrange
    const repos = await harness.fresh();
    const tenant = newTenant();
    const domain = newDomain(tenant);
    const events = [event(tenant, 'domain.created'), event(tenant, 'contact.deleted'), event(tenant, 'domain.deleted')];
    await repos.domains.create(domain, [events[0] as SendflowEvent]);
    const contact: Contact = {
      ...tenant,
      id: 'ct_1',
      email: 'c@example.com',
      status: 'pending',
      createdAt: AT,
      updatedAt: AT,
    };
    await repos.contacts.create(contact, []);
    await repos.contacts.delete(tenant, contact.id, AT, [events[1] as SendflowEvent]);
    await repos.domains.delete(tenant, domain.id, AT, [events[2] as SendflowEvent]);
    const publisher = new RecordingEventPublisher();
    const outboxes = [repos.domains.outbox, repos.contacts.outbox, repos.suppressions.outbox];

    // Act
    const relayed = await sweepOutboxes({ events: publisher, outboxes }, T0 + MINUTE);
    const again = await sweepOutboxes({ events: publisher, outboxes }, T0 + MINUTE);

    // Assert
    expect(relayed).toBe(3);
    expect(again).toBe(0);
    expect(ids(publisher.published.flatMap((p) => p.events))).toEqual(ids(events));
    expect(await repos.contacts.get(tenant, contact.id)).toBeNull();
    expect(await repos.domains.get(tenant, domain.id)).toBeNull();
  });
}
