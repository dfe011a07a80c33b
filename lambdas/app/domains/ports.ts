// Ports of sending domains: their storage and the identity provider (SES Easy DKIM on AWS, a simulator
// locally that verifies after a configurable delay).
import type { SendflowEvent } from '../../domain/events';
import type { Outbox, PendingEvents, Recorded } from '../outbox';
import type { Tenant } from '../webhooks/ports';

export const DOMAIN_STATUSES = ['pending', 'verified', 'failed'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

/** A DNS record the customer publishes to verify the domain (Easy DKIM CNAMEs on SES). */
export interface DnsRecord {
  readonly type: 'CNAME' | 'TXT' | 'MX';
  readonly name: string;
  readonly value: string;
  /** MX records only: the preference (lower first). */
  readonly priority?: number;
}

export const CAPABILITY_STATES = ['enabled', 'disabled'] as const;
export type CapabilityState = (typeof CAPABILITY_STATES)[number];

/** What a domain is used for (Resend's `capabilities`). */
export interface DomainCapabilities {
  readonly sending: CapabilityState;
  readonly receiving: CapabilityState;
}

/** A domain's capabilities when none were stored (every domain from before them): it sends and does not receive. */
export const DEFAULT_CAPABILITIES: DomainCapabilities = { sending: 'enabled', receiving: 'disabled' };

export interface Domain extends Tenant {
  /** Derived from tenant and name, so one tenant cannot add a name twice. */
  readonly id: string;
  readonly name: string;
  readonly status: DomainStatus;
  readonly records: readonly DnsRecord[];
  /**
   * SES adds a tracking pixel to emails from this domain (open events). Off unless the customer turns it on;
   * stored domains always carry it (false when they predate it), absent means off.
   */
  readonly openTracking?: boolean;
  /** SES rewrites the links of emails from this domain (click events). Off unless turned on; absent means off. */
  readonly clickTracking?: boolean;
  /** Absent on domains stored before capabilities: DEFAULT_CAPABILITIES. */
  readonly capabilities?: DomainCapabilities;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** Every change that fires a domain.* event records it in the same write (its outbox), to be relayed. */
export interface DomainRepository {
  readonly outbox: Outbox;
  /** Stores a new domain with its events; null when the tenant already has this domain. */
  create(domain: Domain, events: readonly SendflowEvent[]): Promise<PendingEvents | null>;
  get(tenant: Tenant, id: string): Promise<Domain | null>;
  list(tenant: Tenant): Promise<Domain[]>;
  /** Sets the status, only if it is still `from`, with its events; null when it changed meanwhile. */
  setStatus(
    tenant: Tenant,
    id: string,
    change: { from: DomainStatus; to: DomainStatus; at: string },
    events: readonly SendflowEvent[],
  ): Promise<Recorded<Domain> | null>;
  /** Sets the tracking flags given (the others stay), with its events; null when there is no such live domain. */
  setTracking(
    tenant: Tenant,
    id: string,
    tracking: Partial<Pick<Domain, 'openTracking' | 'clickTracking'>>,
    at: string,
    events: readonly SendflowEvent[],
  ): Promise<Recorded<Domain> | null>;
  /**
   * Sets the capabilities and the DNS records (the MX record comes and goes with receiving), with its events;
   * null when there is no such live domain.
   */
  setCapabilities(
    tenant: Tenant,
    id: string,
    change: Pick<Domain, 'capabilities' | 'records'>,
    at: string,
    events: readonly SendflowEvent[],
  ): Promise<Recorded<Domain> | null>;
  /**
   * Deletes the domain and records its events (the item stays, unreadable, until they are relayed); null
   * when there was no such domain.
   */
  delete(tenant: Tenant, id: string, at: string, events: readonly SendflowEvent[]): Promise<PendingEvents | null>;
  /**
   * Claims a live-mode domain name for an account across all accounts (live sending identities are shared by
   * name): true when the account holds it (now or already), false when another account does. Test mode never
   * claims: it never touches the provider.
   */
  claimName(name: string, accountId: string): Promise<boolean>;
  /** The account holding a live-mode name's claim, or null (inbound mail finds its account through it). */
  nameHolder(name: string): Promise<string | null>;
  /** Frees the account's claim on a name. */
  releaseName(name: string, accountId: string): Promise<void>;
  /** Pending domains of every tenant (the reconciler re-checks them). */
  listPending(limit: number): Promise<Domain[]>;
}

/**
 * The name exists with the provider as an identity Sendflow did not create for this account (the operator's
 * own, another deployment's, another account's): it must not be used, reported on, or deleted.
 */
export class IdentityUnavailableError extends Error {
  constructor(readonly domain: string) {
    super(`The identity ${domain} exists and was not created by Sendflow for this account`);
    this.name = 'IdentityUnavailableError';
  }
}

/** The sending identity behind a domain, created for one account. */
export interface DomainProvider {
  /**
   * Creates the identity for `accountId`; returns the records to publish. Idempotent for a name already
   * registered for that account; IdentityUnavailableError for an identity that is not.
   */
  register(name: string, accountId: string): Promise<readonly DnsRecord[]>;
  /** The provider's current verification state of the account's identity (failed when it is not theirs). */
  status(domain: Pick<Domain, 'name' | 'createdAt' | 'accountId'>): Promise<DomainStatus>;
  /** Deletes the identity if it is the account's; nothing to do when it is gone already or not theirs. */
  remove(name: string, accountId: string): Promise<void>;
}
