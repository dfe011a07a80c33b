// Unit tests of the contact use cases (lambdas/app/contacts/contacts.ts) on in-memory fakes with a fake clock:
// create (pending, normalized address, signed confirmation URL, contact.created; 409 contact_exists on the same
// address in any case), double opt-in confirmation (once, contact.subscribed once; forged or foreign links 404),
// update (null clears, contact.updated) and delete (contact.deleted; 404 after).
import { beforeEach, describe, expect, it } from 'vitest';
import {
  type ContactDeps,
  confirmContact,
  createContact,
  deleteContact,
  getContact,
  resolveConfirmation,
  updateContact,
} from '../../lambdas/app/contacts/contacts';
import type { Tenant } from '../../lambdas/app/webhooks/ports';
import { ConflictError, GoneError, NotFoundError, ServiceUnavailableError } from '../../lambdas/domain/errors';
import { derivedId } from '../../lambdas/domain/resources';
import { signToken, verifyToken } from '../../lambdas/domain/tokens';
import {
  FakeClock,
  fixedLinks,
  InMemoryContactRepository,
  RecordingEventPublisher,
  seededRandom,
  unreadableLinks,
} from '../support/fakes';

const T0 = Date.UTC(2025, 5, 10, 9, 0, 0);
const SECRET = 'contact-link-secret';
const BASE = 'https://api.sendflow.test/v1';
const TENANT: Tenant = { accountId: 'acct_contacts', mode: 'test' };

function setup() {
  const clock = new FakeClock(T0);
  const contacts = new InMemoryContactRepository();
  const events = new RecordingEventPublisher();
  const deps: ContactDeps = {
    contacts,
    events,
    links: fixedLinks(SECRET, BASE),
    clock,
    random: seededRandom('contacts'),
  };
  const published = () => events.published.flatMap((p) => p.events);
  return { clock, contacts, events, deps, published };
}

const tokenOf = (url: string) => url.slice(`${BASE}/contacts/confirm/`.length);

describe('contacts', () => {
  let s: ReturnType<typeof setup>;
  beforeEach(() => {
    s = setup();
  });

  describe('createContact', () => {
    it('stores a pending contact under an id derived from the trimmed, lower-cased address, and fires contact.created', async () => {
      // Act
      const { contact } = await createContact(s.deps, TENANT, {
        email: '  Ada.Lovelace@Example.COM ',
        firstName: 'Ada',
        lastName: 'Lovelace',
      });

      // Assert
      const at = new Date(T0).toISOString();
      const expected = {
        ...TENANT,
        id: derivedId('ct', TENANT.accountId, 'test', 'ada.lovelace@example.com'),
        email: 'ada.lovelace@example.com',
        firstName: 'Ada',
        lastName: 'Lovelace',
        status: 'pending',
        createdAt: at,
        updatedAt: at,
      };
      expect(contact).toEqual(expected);
      expect(await s.contacts.get(TENANT, contact.id)).toEqual(expected);
      expect(s.published()).toEqual([
        {
          id: expect.stringMatching(/^evt_[0-9a-z]{26}$/),
          type: 'contact.created',
          ...TENANT,
          timestamp: at,
          data: {
            id: contact.id,
            email: 'ada.lovelace@example.com',
            first_name: 'Ada',
            last_name: 'Lovelace',
            status: 'pending',
            // Resend's fields of a contact event.
            created_at: at,
            updated_at: at,
            unsubscribed: false,
          },
        },
      ]);
    });

    it('gives a confirmation URL whose token names account, mode, contact, its creation, and expires in 7 days', async () => {
      // Act
      const { contact, confirmationUrl } = await createContact(s.deps, TENANT, { email: 'ada@example.com' });

      // Assert
      expect(confirmationUrl.startsWith(`${BASE}/contacts/confirm/`)).toBe(true);
      expect(verifyToken('confirm', tokenOf(confirmationUrl), SECRET)).toEqual({
        a: TENANT.accountId,
        m: 'test',
        c: contact.id,
        i: contact.createdAt,
        x: String(Math.floor(T0 / 1000) + 7 * 86_400),
      });
      expect(verifyToken('unsubscribe', tokenOf(confirmationUrl), SECRET)).toBeNull();
    });

    it('stores nothing and fires nothing when the signing secret cannot be read (503, the caller may retry)', async () => {
      // Arrange
      const deps = { ...s.deps, links: unreadableLinks(BASE) };
      const id = derivedId('ct', TENANT.accountId, 'test', 'ada@example.com');

      // Act
      const created = createContact(deps, TENANT, { email: 'ada@example.com' });

      // Assert
      await expect(created).rejects.toBeInstanceOf(ServiceUnavailableError);
      expect(await s.contacts.get(TENANT, id)).toBeNull();
      expect(s.published()).toEqual([]);
      // The retry with the secret back succeeds, not 409.
      await expect(createContact(s.deps, TENANT, { email: 'ada@example.com' })).resolves.toMatchObject({
        contact: { id },
      });
    });

    it('leaves names out when not given, and the event shows them as null', async () => {
      // Act
      const { contact } = await createContact(s.deps, TENANT, { email: 'ada@example.com' });

      // Assert
      expect(contact).not.toHaveProperty('firstName');
      expect(contact).not.toHaveProperty('lastName');
      expect(s.published()[0]?.data).toMatchObject({ first_name: null, last_name: null });
    });

    it('refuses the same address again — in any case — with 409 contact_exists, keeping the first and firing nothing', async () => {
      // Arrange
      const { contact } = await createContact(s.deps, TENANT, { email: 'ada@example.com', firstName: 'Ada' });

      // Act
      const error = await createContact(s.deps, TENANT, { email: 'ADA@Example.com', firstName: 'Eve' }).catch(
        (e: unknown) => e,
      );

      // Assert
      expect(error).toBeInstanceOf(ConflictError);
      expect(error).toMatchObject({ status: 409, code: 'contact_exists' });
      expect(await s.contacts.list(TENANT)).toEqual([contact]);
      expect(s.published()).toHaveLength(1);
    });

    it('lets the other mode and another account have the same address', async () => {
      // Arrange
      await createContact(s.deps, TENANT, { email: 'ada@example.com' });

      // Act
      const live = await createContact(s.deps, { ...TENANT, mode: 'live' }, { email: 'ada@example.com' });
      const other = await createContact(
        s.deps,
        { accountId: 'acct_other', mode: 'test' },
        { email: 'ada@example.com' },
      );

      // Assert
      expect(live.contact.mode).toBe('live');
      expect(other.contact.accountId).toBe('acct_other');
    });
  });

  describe('confirmContact (double opt-in)', () => {
    it('subscribes a pending contact and fires contact.subscribed, once; later uses change nothing', async () => {
      // Arrange
      const { contact, confirmationUrl } = await createContact(s.deps, TENANT, { email: 'ada@example.com' });
      s.clock.advance(3_600_000);
      const at = new Date(T0 + 3_600_000).toISOString();

      // Act
      const first = await confirmContact(s.deps, tokenOf(confirmationUrl));
      s.clock.advance(60_000);
      const second = await confirmContact(s.deps, tokenOf(confirmationUrl));

      // Assert
      const subscribed = { ...contact, status: 'subscribed', subscribedAt: at, updatedAt: at };
      expect(first).toEqual(subscribed);
      expect(second).toEqual(subscribed);
      expect(await s.contacts.get(TENANT, contact.id)).toEqual(subscribed);
      const events = s.published().filter((e) => e.type === 'contact.subscribed');
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ ...TENANT, timestamp: at, data: { id: contact.id, status: 'subscribed' } });
    });

    it('resolveConfirmation names the contact without subscribing it (the GET page)', async () => {
      // Arrange
      const { contact, confirmationUrl } = await createContact(s.deps, TENANT, { email: 'ada@example.com' });

      // Act
      const resolved = await resolveConfirmation(s.deps, tokenOf(confirmationUrl));

      // Assert
      expect(resolved).toEqual(contact);
      expect((await s.contacts.get(TENANT, contact.id))?.status).toBe('pending');
    });

    it.each([
      ['a forged contact id with a genuine signature', 'forged'],
      ['an unsubscribe token with the same claims', 'kind'],
      ['a token signed with another secret', 'secret'],
      ['a malformed token', 'malformed'],
      ['a token without the contact claim', 'missing'],
    ])('is 404 for %s, and subscribes nothing', async (_name, variant) => {
      // Arrange
      const { contact, confirmationUrl } = await createContact(s.deps, TENANT, { email: 'ada@example.com' });
      const genuine = tokenOf(confirmationUrl);
      const claims = verifyToken('confirm', genuine, SECRET) as Record<string, string>;
      const { c: _contact, ...withoutContact } = claims;
      const tokens: Record<string, string> = {
        forged: `${Buffer.from(JSON.stringify({ ...claims, c: 'ct_other' })).toString('base64url')}.${genuine.split('.')[1]}`,
        kind: signToken('unsubscribe', claims, SECRET),
        secret: signToken('confirm', claims, `${SECRET}-old`),
        malformed: 'abc.def',
        missing: signToken('confirm', withoutContact, SECRET),
      };

      // Act
      const error = await confirmContact(s.deps, tokens[variant] as string).catch((e: unknown) => e);

      // Assert
      expect(error).toBeInstanceOf(NotFoundError);
      expect((await s.contacts.get(TENANT, contact.id))?.status).toBe('pending');
      expect(s.published().map((e) => e.type)).toEqual(['contact.created']);
    });

    it.each([
      ['another account', { a: 'acct_other' }],
      ['the other mode', { m: 'live' }],
    ])('is 410 link_revoked for a genuine link naming a contact of %s that does not exist', async (_name, change) => {
      // Arrange
      const { confirmationUrl } = await createContact(s.deps, TENANT, { email: 'ada@example.com' });
      const claims = verifyToken('confirm', tokenOf(confirmationUrl), SECRET) as Record<string, string>;

      // Act
      const error = await confirmContact(s.deps, signToken('confirm', { ...claims, ...change }, SECRET)).catch(
        (e: unknown) => e,
      );

      // Assert
      expect(error).toBeInstanceOf(GoneError);
      expect(error).toMatchObject({ status: 410, code: 'link_revoked' });
    });

    it('is 410 link_revoked for the link of a deleted contact', async () => {
      // Arrange
      const { contact, confirmationUrl } = await createContact(s.deps, TENANT, { email: 'ada@example.com' });
      await deleteContact(s.deps, TENANT, contact.id);

      // Act / Assert
      await expect(confirmContact(s.deps, tokenOf(confirmationUrl))).rejects.toMatchObject({
        status: 410,
        code: 'link_revoked',
      });
    });

    it('dies with the contact it named: after delete and re-create, the old link is 410 and subscribes nothing', async () => {
      // Arrange: the same address re-created later gets the same id, but is another contact.
      const first = await createContact(s.deps, TENANT, { email: 'ada@example.com' });
      await deleteContact(s.deps, TENANT, first.contact.id);
      s.clock.advance(60_000);
      const again = await createContact(s.deps, TENANT, { email: 'ada@example.com' });
      expect(again.contact.id).toBe(first.contact.id);
      expect(again.confirmationUrl).not.toBe(first.confirmationUrl);

      // Act
      const old = await confirmContact(s.deps, tokenOf(first.confirmationUrl)).catch((e: unknown) => e);
      const page = await resolveConfirmation(s.deps, tokenOf(first.confirmationUrl)).catch((e: unknown) => e);

      // Assert
      expect(old).toMatchObject({ status: 410, code: 'link_revoked' });
      expect(page).toMatchObject({ status: 410, code: 'link_revoked' });
      expect((await s.contacts.get(TENANT, again.contact.id))?.status).toBe('pending');
      expect(s.published().filter((e) => e.type === 'contact.subscribed')).toEqual([]);
      expect(await confirmContact(s.deps, tokenOf(again.confirmationUrl))).toMatchObject({ status: 'subscribed' });
    });

    it('expires 7 days after it was issued: 410 link_expired, and nothing is subscribed', async () => {
      // Arrange
      const { contact, confirmationUrl } = await createContact(s.deps, TENANT, { email: 'ada@example.com' });
      s.clock.advance(7 * 86_400_000 - 1);
      expect(await resolveConfirmation(s.deps, tokenOf(confirmationUrl))).toEqual(contact);

      // Act
      s.clock.advance(1);
      const error = await confirmContact(s.deps, tokenOf(confirmationUrl)).catch((e: unknown) => e);

      // Assert
      expect(error).toBeInstanceOf(GoneError);
      expect(error).toMatchObject({ status: 410, code: 'link_expired' });
      expect((await s.contacts.get(TENANT, contact.id))?.status).toBe('pending');
      expect(s.published().map((e) => e.type)).toEqual(['contact.created']);
    });

    it('treats a link issued without an expiry (before links expired) as expired', async () => {
      // Arrange
      const { contact } = await createContact(s.deps, TENANT, { email: 'ada@example.com' });
      const legacy = signToken('confirm', { a: TENANT.accountId, m: TENANT.mode, c: contact.id }, SECRET);

      // Act / Assert
      await expect(confirmContact(s.deps, legacy)).rejects.toMatchObject({ status: 410, code: 'link_expired' });
      expect((await s.contacts.get(TENANT, contact.id))?.status).toBe('pending');
    });
  });

  describe('updateContact', () => {
    it('sets and clears names (null clears), stamps updatedAt, and fires contact.updated with the result', async () => {
      // Arrange
      const { contact } = await createContact(s.deps, TENANT, {
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: 'Byron',
      });
      s.clock.advance(60_000);

      // Act
      const updated = await updateContact(s.deps, TENANT, contact.id, { firstName: 'Augusta', lastName: null });

      // Assert
      const at = new Date(T0 + 60_000).toISOString();
      const { lastName: _cleared, ...rest } = contact;
      expect(updated).toEqual({ ...rest, firstName: 'Augusta', updatedAt: at });
      expect(await s.contacts.get(TENANT, contact.id)).toEqual(updated);
      expect(s.published().at(-1)).toMatchObject({
        type: 'contact.updated',
        timestamp: at,
        data: { id: contact.id, email: 'ada@example.com', first_name: 'Augusta', last_name: null, status: 'pending' },
      });
    });

    it('is 404 for an unknown id and for another tenant’s contact, firing nothing and changing nothing', async () => {
      // Arrange
      const { contact } = await createContact(s.deps, TENANT, { email: 'ada@example.com', firstName: 'Ada' });

      // Act
      const unknown = updateContact(s.deps, TENANT, 'ct_unknown', { firstName: 'X' });
      const foreign = updateContact(s.deps, { ...TENANT, mode: 'live' }, contact.id, { firstName: 'X' });

      // Assert
      await expect(unknown).rejects.toBeInstanceOf(NotFoundError);
      await expect(foreign).rejects.toBeInstanceOf(NotFoundError);
      expect(await s.contacts.get(TENANT, contact.id)).toEqual(contact);
      expect(s.published().map((e) => e.type)).toEqual(['contact.created']);
    });
  });

  describe('deleteContact', () => {
    it('deletes the contact and fires contact.deleted with it; a second delete and a get are 404', async () => {
      // Arrange
      const { contact } = await createContact(s.deps, TENANT, { email: 'ada@example.com', firstName: 'Ada' });
      s.clock.advance(60_000);

      // Act
      const deleted = await deleteContact(s.deps, TENANT, contact.id);

      // Assert
      expect(deleted).toEqual(contact);
      expect(s.published().at(-1)).toMatchObject({
        type: 'contact.deleted',
        ...TENANT,
        timestamp: new Date(T0 + 60_000).toISOString(),
        data: { id: contact.id, email: 'ada@example.com', first_name: 'Ada', last_name: null, status: 'pending' },
      });
      await expect(deleteContact(s.deps, TENANT, contact.id)).rejects.toBeInstanceOf(NotFoundError);
      await expect(getContact(s.deps, TENANT, contact.id)).rejects.toBeInstanceOf(NotFoundError);
      expect(s.published().filter((e) => e.type === 'contact.deleted')).toHaveLength(1);
    });

    it('is 404 for another tenant’s contact, which stays', async () => {
      // Arrange
      const { contact } = await createContact(s.deps, TENANT, { email: 'ada@example.com' });

      // Act
      const foreign = deleteContact(s.deps, { accountId: 'acct_other', mode: 'test' }, contact.id);

      // Assert
      await expect(foreign).rejects.toBeInstanceOf(NotFoundError);
      expect(await s.contacts.get(TENANT, contact.id)).toEqual(contact);
    });
  });
});
