// Use cases for sending domains (domain.created / updated / deleted): add, list, read, verify, delete, and
// the reconciler's re-check of pending ones. Verification state lives with the provider (SES); every change
// we observe is stored once and announced once: the conditional write that stores it records its event in the
// domain's outbox, relayed right after (and swept by the reconciler if that fails).
import { ConflictError, LimitExceededError, NotFoundError } from '../../domain/errors';
import { type EventType, newEvent, type SendflowEvent } from '../../domain/events';
import { invalidRequest, problem } from '../../domain/field-problems';
import { derivedId, isDomainName } from '../../domain/resources';
import { relay } from '../outbox';
import type { Clock, RandomBytes } from '../ports';
import type { EventPublisher, Tenant } from '../webhooks/ports';
import {
  DEFAULT_CAPABILITIES,
  type DnsRecord,
  type Domain,
  type DomainCapabilities,
  type DomainProvider,
  type DomainRepository,
  IdentityUnavailableError,
} from './ports';

export interface DomainDeps {
  readonly domains: DomainRepository;
  /** The identity provider of a mode: SES for live mode on AWS; test mode is always simulated. */
  readonly domainProviderFor: (mode: Tenant['mode']) => DomainProvider;
  readonly events: EventPublisher;
  readonly clock: Clock;
  readonly random: RandomBytes;
  /**
   * The host a receiving domain's MX record names: SES's inbound endpoint of the stage's region on AWS
   * (inbound-smtp.<region>.amazonaws.com), the local SMTP server's host locally. Absent: no MX record is shown.
   */
  readonly receivingMx?: string;
}

/** The MX record's preference (SES documents 10). */
export const RECEIVING_MX_PRIORITY = 10;

export const domainId = (tenant: Tenant, name: string) => derivedId('dom', tenant.accountId, tenant.mode, name);

/**
 * Adds a domain. A live-mode name is claimed for the account first: live sending identities are shared by
 * name, so a name another account holds is 409 domain_taken (else it could send as that account's verified
 * domain). An identity the provider already has and Sendflow did not create for this account (the operator's
 * own domain, another deployment's) is 409 domain_unavailable, and nothing is stored or claimed. Test mode
 * never touches the provider, so a test-mode name claims nothing and never blocks anyone's live domain.
 * `limit`: the plan's domains per account and mode (422 limit_exceeded when reached; checked before the
 * claim, so concurrent requests can pass it by their number: it bounds growth, not an exact count).
 */
export async function createDomain(
  deps: DomainDeps,
  tenant: Tenant,
  name: string,
  options: {
    limit?: number;
    openTracking?: boolean;
    clickTracking?: boolean;
    capabilities?: Partial<DomainCapabilities>;
  } = {},
): Promise<Domain> {
  const { limit } = options;
  const capabilities = { ...DEFAULT_CAPABILITIES, ...options.capabilities };
  checkCapabilities(deps, tenant, capabilities);
  if (limit !== undefined && (await deps.domains.list(tenant)).length >= limit) {
    throw new LimitExceededError(`This plan allows ${limit} domains per mode; delete one first.`);
  }
  const claims = tenant.mode === 'live';
  if (claims && !(await deps.domains.claimName(name, tenant.accountId))) {
    throw new ConflictError(`The domain ${name} belongs to another account.`, 'domain_taken');
  }
  let records: Domain['records'];
  try {
    records = await deps.domainProviderFor(tenant.mode).register(name, tenant.accountId);
  } catch (error) {
    // Nothing is stored for a name that could not be registered: the claim goes too (unless an earlier
    // request of this account already stored the domain).
    if (claims && !(await deps.domains.get(tenant, domainId(tenant, name)))) {
      await deps.domains.releaseName(name, tenant.accountId);
    }
    if (error instanceof IdentityUnavailableError) {
      throw new ConflictError(
        `The domain ${name} is not available for sending through Sendflow.`,
        'domain_unavailable',
      );
    }
    throw error;
  }
  const now = new Date(deps.clock.now()).toISOString();
  const domain: Domain = {
    ...tenant,
    id: domainId(tenant, name),
    name,
    status: 'pending',
    records: withReceivingRecord(deps, name, records, capabilities),
    capabilities,
    // Off unless asked for: SES would otherwise add a pixel and rewrite every link of every email.
    openTracking: options.openTracking ?? false,
    clickTracking: options.clickTracking ?? false,
    createdAt: now,
    updatedAt: now,
  };
  const recorded = await deps.domains.create(domain, announce(deps, 'domain.created', domain));
  if (!recorded) throw new ConflictError(`The domain ${name} is already added.`, 'domain_exists');
  await relay(deps, deps.domains.outbox, recorded);
  return domain;
}

export async function getDomain(deps: Pick<DomainDeps, 'domains'>, tenant: Tenant, id: string): Promise<Domain> {
  const domain = await deps.domains.get(tenant, id);
  if (!domain) throw new NotFoundError(`No domain with id ${id}.`);
  return domain;
}

/** POST /v1/domains/:id/verify: asks the provider now; a change of state is stored and fires domain.updated. */
export async function verifyDomain(deps: DomainDeps, tenant: Tenant, id: string): Promise<Domain> {
  return refresh(deps, await getDomain(deps, tenant, id));
}

/**
 * Deletes a domain, then its identity (the provider deletes only an identity it created for this account) and,
 * in live mode, the account's claim on the name.
 */
export async function deleteDomain(deps: DomainDeps, tenant: Tenant, id: string): Promise<Domain> {
  const domain = await getDomain(deps, tenant, id);
  const now = new Date(deps.clock.now()).toISOString();
  const recorded = await deps.domains.delete(tenant, id, now, announce(deps, 'domain.deleted', domain));
  if (!recorded) throw new NotFoundError(`No domain with id ${id}.`);
  await relay(deps, deps.domains.outbox, recorded);
  await deps.domainProviderFor(tenant.mode).remove(domain.name, tenant.accountId);
  if (tenant.mode === 'live') await deps.domains.releaseName(domain.name, tenant.accountId);
  return domain;
}

/** PATCH /v1/domains/:id: turns open or click tracking on or off (domain.updated when either changes). */
export async function updateDomainTracking(
  deps: DomainDeps,
  tenant: Tenant,
  id: string,
  tracking: { openTracking?: boolean; clickTracking?: boolean },
): Promise<Domain> {
  const domain = await getDomain(deps, tenant, id);
  const changed = (['openTracking', 'clickTracking'] as const).some(
    (flag) => tracking[flag] !== undefined && tracking[flag] !== (domain[flag] ?? false),
  );
  if (!changed) return domain;
  const at = new Date(deps.clock.now()).toISOString();
  const events = announce(deps, 'domain.updated', { ...domain, ...tracking });
  const updated = await deps.domains.setTracking(tenant, id, tracking, at, events);
  if (!updated) throw new NotFoundError(`No domain with id ${id}.`);
  await relay(deps, deps.domains.outbox, updated.pending);
  return updated.value;
}

/**
 * PATCH /v1/domains/:id with `capabilities`: turns sending or receiving on or off (domain.updated when either
 * changes). Receiving adds the MX record to the domain's records, and takes mail once the domain is verified.
 */
export async function updateDomainCapabilities(
  deps: DomainDeps,
  tenant: Tenant,
  id: string,
  change: Partial<DomainCapabilities>,
): Promise<Domain> {
  const domain = await getDomain(deps, tenant, id);
  const current = domain.capabilities ?? DEFAULT_CAPABILITIES;
  const capabilities = { ...current, ...change };
  if (capabilities.sending === current.sending && capabilities.receiving === current.receiving) return domain;
  checkCapabilities(deps, tenant, capabilities);
  const records = withReceivingRecord(deps, domain.name, domain.records, capabilities);
  const at = new Date(deps.clock.now()).toISOString();
  const events = announce(deps, 'domain.updated', { ...domain, capabilities, records });
  const updated = await deps.domains.setCapabilities(tenant, id, { capabilities, records }, at, events);
  if (!updated) throw new NotFoundError(`No domain with id ${id}.`);
  await relay(deps, deps.domains.outbox, updated.pending);
  return updated.value;
}

/**
 * The domain that receives mail sent to `name`: the live-mode domain of the account holding the name's claim,
 * if it is verified and receiving is enabled; null otherwise (the mail is refused). Live names are held by one
 * account at a time (createDomain claims them), so there is never a choice between accounts; test-mode domains
 * never receive (they prove nothing in DNS, and any number of accounts may add the same test-mode name).
 * Two reads by key, whatever the number of accounts and domains.
 */
export async function receivingDomain(
  deps: { readonly domains: Pick<DomainRepository, 'nameHolder' | 'get'> },
  name: string,
): Promise<Domain | null> {
  const lower = name.toLowerCase();
  // Not a domain name (an address without one, a literal): nobody receives there, and no key may be empty.
  if (!isDomainName(lower)) return null;
  const accountId = await deps.domains.nameHolder(lower);
  if (!accountId) return null;
  const tenant: Tenant = { accountId, mode: 'live' };
  const domain = await deps.domains.get(tenant, domainId(tenant, lower));
  const receives = domain?.status === 'verified' && domain.capabilities?.receiving === 'enabled';
  return receives ? domain : null;
}

/** Receiving is for live-mode domains only (see receivingDomain): asking for it in test mode is an error. */
function checkCapabilities(
  deps: Pick<DomainDeps, 'receivingMx'>,
  tenant: Tenant,
  capabilities: DomainCapabilities,
): void {
  if (capabilities.receiving !== 'enabled') return;
  if (tenant.mode === 'test') {
    throw invalidRequest([
      problem(
        ['capabilities', 'receiving'],
        'can be "enabled" only on a live-mode domain: a test-mode domain never proves its DNS, so it cannot take mail. Use a live-mode key.',
      ),
    ]);
  }
  // On AWS a stage receives only where its operator turned SES receiving on (sendflow:inbound): elsewhere no
  // MX record exists to publish and nothing would ever arrive.
  if (!deps.receivingMx) {
    throw invalidRequest([
      problem(
        ['capabilities', 'receiving'],
        'cannot be "enabled" here: this deployment does not receive email (its operator has not turned inbound mail on).',
      ),
    ]);
  }
}

/** The records without any MX record, plus the receiving MX record when receiving is on. */
function withReceivingRecord(
  deps: Pick<DomainDeps, 'receivingMx'>,
  name: string,
  records: readonly DnsRecord[],
  capabilities: DomainCapabilities,
): DnsRecord[] {
  const others = records.filter((record) => record.type !== 'MX');
  if (capabilities.receiving !== 'enabled' || !deps.receivingMx) return others;
  return [...others, { type: 'MX', name, value: deps.receivingMx, priority: RECEIVING_MX_PRIORITY }];
}

/** The reconciler: re-checks pending domains, so verification is noticed without anyone asking. */
export async function checkPendingDomains(deps: DomainDeps, limit = 100): Promise<number> {
  const pending = await deps.domains.listPending(limit);
  // One domain SES will not answer for (an identity from before tagging: AccessDenied) must not stop the others.
  const failures: unknown[] = [];
  for (const domain of pending) await refresh(deps, domain).catch((error: unknown) => failures.push(error));
  if (failures.length) {
    throw new AggregateError(failures, `${failures.length} of ${pending.length} pending domains could not be checked`);
  }
  return pending.length;
}

/** Live-mode sends must come from a verified domain of the account with sending enabled (422 otherwise). */
export async function isVerifiedSender(
  deps: Pick<DomainDeps, 'domains'>,
  tenant: Tenant,
  name: string,
): Promise<boolean> {
  const domain = await deps.domains.get(tenant, domainId(tenant, name));
  return domain?.status === 'verified' && (domain.capabilities ?? DEFAULT_CAPABILITIES).sending === 'enabled';
}

async function refresh(deps: DomainDeps, domain: Domain): Promise<Domain> {
  const status = await deps.domainProviderFor(domain.mode).status(domain);
  if (status === domain.status) return domain;
  const change = { from: domain.status, to: status, at: new Date(deps.clock.now()).toISOString() };
  const events = announce(deps, 'domain.updated', { ...domain, status });
  const updated = await deps.domains.setStatus(domain, domain.id, change, events);
  if (!updated) return (await deps.domains.get(domain, domain.id)) ?? domain;
  await relay(deps, deps.domains.outbox, updated.pending);
  return updated.value;
}

/** The event of a change, made before the write that records it (so its id is fixed from then on). */
function announce(deps: Pick<DomainDeps, 'clock' | 'random'>, type: EventType, domain: Domain): SendflowEvent[] {
  const data = { id: domain.id, name: domain.name, status: domain.status, created_at: domain.createdAt };
  return [newEvent({ type, accountId: domain.accountId, mode: domain.mode, at: deps.clock.now(), data }, deps.random)];
}
