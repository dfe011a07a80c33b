// Use cases for contacts (contact.created / updated / deleted / subscribed) with double opt-in: a new
// contact is pending until its signed confirmation link is used, which subscribes it (once). Each change is
// stored together with its event (the contact's outbox) and relayed right after; the reconciler sweeps the rest.
import { confirmationClaims, readConfirmation } from '../../domain/contacts/confirmation';
import { ConflictError, GoneError, NotFoundError } from '../../domain/errors';
import { type EventType, newEvent, type SendflowEvent } from '../../domain/events';
import { derivedId } from '../../domain/resources';
import { signToken, verifyToken } from '../../domain/tokens';
import type { LinkSigner } from '../emails/ports';
import { type Outbox, type PendingEvents, type Recorded, relay } from '../outbox';
import type { Clock, RandomBytes } from '../ports';
import type { EventPublisher, Tenant } from '../webhooks/ports';

export const CONTACT_STATUSES = ['pending', 'subscribed'] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];

export interface Contact extends Tenant {
  /** Derived from tenant and address: one contact per address. */
  readonly id: string;
  readonly email: string;
  readonly firstName?: string;
  readonly lastName?: string;
  readonly status: ContactStatus;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly subscribedAt?: string;
}

export type ContactChanges = { firstName?: string | null; lastName?: string | null };

/**
 * Every change that fires a contact.* event records it in the same write (the outbox). `announce` makes the
 * events from the contact as the change leaves it.
 */
export interface ContactRepository {
  readonly outbox: Outbox;
  /** Stores a new contact with its events; null when the tenant already has a contact with this address. */
  create(contact: Contact, events: readonly SendflowEvent[]): Promise<PendingEvents | null>;
  get(tenant: Tenant, id: string): Promise<Contact | null>;
  list(tenant: Tenant): Promise<Contact[]>;
  update(
    tenant: Tenant,
    id: string,
    changes: ContactChanges,
    at: string,
    announce: (updated: Contact) => SendflowEvent[],
  ): Promise<Recorded<Contact> | null>;
  /** pending → subscribed, once; null when it was not pending. */
  subscribe(
    tenant: Tenant,
    id: string,
    at: string,
    announce: (subscribed: Contact) => SendflowEvent[],
  ): Promise<Recorded<Contact> | null>;
  /** Deletes it with its events (unreadable at once; the item goes when they are relayed); null if absent. */
  delete(tenant: Tenant, id: string, at: string, events: readonly SendflowEvent[]): Promise<PendingEvents | null>;
}

export interface ContactDeps {
  readonly contacts: ContactRepository;
  readonly events: EventPublisher;
  readonly links: LinkSigner;
  readonly clock: Clock;
  readonly random: RandomBytes;
}

export async function createContact(
  deps: ContactDeps,
  tenant: Tenant,
  input: { email: string; firstName?: string; lastName?: string },
): Promise<{ contact: Contact; confirmationUrl: string }> {
  const email = input.email.trim().toLowerCase();
  const now = new Date(deps.clock.now()).toISOString();
  const contact: Contact = {
    ...tenant,
    id: derivedId('ct', tenant.accountId, tenant.mode, email),
    email,
    ...(input.firstName !== undefined ? { firstName: input.firstName } : {}),
    ...(input.lastName !== undefined ? { lastName: input.lastName } : {}),
    status: 'pending',
    createdAt: now,
    updatedAt: now,
  };
  // Read before the write: a secret that cannot be read refuses the request (503) with nothing stored.
  const secret = await deps.links.secret();
  const recorded = await deps.contacts.create(contact, announce(deps, 'contact.created', contact));
  if (!recorded) throw new ConflictError(`A contact with address ${email} exists.`, 'contact_exists');
  await relay(deps, deps.contacts.outbox, recorded);
  return { contact, confirmationUrl: confirmationUrl(deps.links, secret, contact, deps.clock.now()) };
}

/** The contact's id: ids are derived from the address, so Resend's "id or email" needs no index. */
function contactIdOf(tenant: Tenant, idOrEmail: string): string {
  if (!idOrEmail.includes('@')) return idOrEmail;
  return derivedId('ct', tenant.accountId, tenant.mode, idOrEmail.trim().toLowerCase());
}

const noContact = (idOrEmail: string) =>
  new NotFoundError(
    idOrEmail.includes('@') ? `No contact with address ${idOrEmail}.` : `No contact with id ${idOrEmail}.`,
  );

/** A contact by its id or its email address (Resend's contacts.get({ email })). */
export async function getContact(
  deps: Pick<ContactDeps, 'contacts'>,
  tenant: Tenant,
  idOrEmail: string,
): Promise<Contact> {
  const contact = await deps.contacts.get(tenant, contactIdOf(tenant, idOrEmail));
  if (!contact) throw noContact(idOrEmail);
  return contact;
}

export async function updateContact(
  deps: ContactDeps,
  tenant: Tenant,
  idOrEmail: string,
  changes: ContactChanges,
): Promise<Contact> {
  const at = new Date(deps.clock.now()).toISOString();
  const updated = await deps.contacts.update(tenant, contactIdOf(tenant, idOrEmail), changes, at, (contact) =>
    announce(deps, 'contact.updated', contact),
  );
  if (!updated) throw noContact(idOrEmail);
  await relay(deps, deps.contacts.outbox, updated.pending);
  return updated.value;
}

export async function deleteContact(deps: ContactDeps, tenant: Tenant, idOrEmail: string): Promise<Contact> {
  const contact = await getContact(deps, tenant, idOrEmail);
  const at = new Date(deps.clock.now()).toISOString();
  const recorded = await deps.contacts.delete(tenant, contact.id, at, announce(deps, 'contact.deleted', contact));
  if (!recorded) throw noContact(idOrEmail);
  await relay(deps, deps.contacts.outbox, recorded);
  return contact;
}

/**
 * The contact a confirmation link names. Forged or malformed links are a 404 that reveals nothing; a genuine
 * link is 410 once it expired (7 days) or once the contact it named is gone (deleted, or deleted and
 * re-created: the new contact has its own link).
 */
export async function resolveConfirmation(
  deps: Pick<ContactDeps, 'contacts' | 'links' | 'clock'>,
  token: string,
): Promise<Contact> {
  const claims = readConfirmation(verifyToken('confirm', token, await deps.links.secret()), deps.clock.now());
  if (claims.kind === 'invalid') throw new NotFoundError('Not found.');
  if (claims.kind === 'expired') throw new GoneError('This confirmation link has expired.', 'link_expired');
  const contact = await deps.contacts.get(
    { accountId: claims.accountId, mode: claims.mode as Tenant['mode'] },
    claims.id,
  );
  if (!contact || contact.createdAt !== claims.createdAt) {
    throw new GoneError('This confirmation link is no longer valid: the contact it named was removed.', 'link_revoked');
  }
  return contact;
}

/** The double opt-in: the first use subscribes and fires contact.subscribed; later uses change nothing. */
export async function confirmContact(deps: ContactDeps, token: string): Promise<Contact> {
  const contact = await resolveConfirmation(deps, token);
  const at = new Date(deps.clock.now()).toISOString();
  const subscribed = await deps.contacts.subscribe(contact, contact.id, at, (next) =>
    announce(deps, 'contact.subscribed', next),
  );
  if (!subscribed) return contact;
  await relay(deps, deps.contacts.outbox, subscribed.pending);
  return subscribed.value;
}

function confirmationUrl(links: LinkSigner, secret: string, contact: Contact, nowMs: number): string {
  const token = signToken('confirm', confirmationClaims(contact, nowMs), secret);
  return `${links.baseUrl()}/contacts/confirm/${token}`;
}

/** The event of a change, made before the write that records it (so its id is fixed from then on). */
function announce(deps: Pick<ContactDeps, 'clock' | 'random'>, type: EventType, contact: Contact): SendflowEvent[] {
  const at = deps.clock.now();
  return [
    newEvent(
      { type, accountId: contact.accountId, mode: contact.mode, at, data: contactEventData(contact) },
      deps.random,
    ),
  ];
}

export function contactData(contact: Contact) {
  return {
    id: contact.id,
    email: contact.email,
    first_name: contact.firstName ?? null,
    last_name: contact.lastName ?? null,
    status: contact.status,
  };
}

/** A contact event's data: the contact, and Resend's fields (Sendflow has no unsubscribed contacts: an opt-out is
 * a suppression). */
export function contactEventData(contact: Contact) {
  return { ...contactData(contact), created_at: contact.createdAt, updated_at: contact.updatedAt, unsubscribed: false };
}
