// Use cases for sending domains (domain.created / updated / deleted): add, list, read, verify, delete, and
// the reconciler's re-check of pending ones. Verification state lives with the provider (SES); every change
// we observe is stored once and announced once (a conditional status update).
import { ConflictError, NotFoundError } from '../../domain/errors';
import type { EventType } from '../../domain/events';
import { timeOrderedId } from '../../domain/ids';
import { derivedId } from '../../domain/resources';
import type { Clock, RandomBytes } from '../ports';
import type { EventPublisher, Tenant } from '../webhooks/ports';
import type { Domain, DomainProvider, DomainRepository } from './ports';

export interface DomainDeps {
  readonly domains: DomainRepository;
  readonly domainProvider: DomainProvider;
  readonly events: EventPublisher;
  readonly clock: Clock;
  readonly random: RandomBytes;
}

export const domainId = (tenant: Tenant, name: string) => derivedId('dom', tenant.accountId, tenant.mode, name);

export async function createDomain(deps: DomainDeps, tenant: Tenant, name: string): Promise<Domain> {
  const records = await deps.domainProvider.register(name);
  const now = new Date(deps.clock.now()).toISOString();
  const domain: Domain = {
    ...tenant,
    id: domainId(tenant, name),
    name,
    status: 'pending',
    records,
    createdAt: now,
    updatedAt: now,
  };
  if (!(await deps.domains.create(domain)))
    throw new ConflictError(`The domain ${name} is already added.`, 'domain_exists');
  await announce(deps, 'domain.created', domain);
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

export async function deleteDomain(deps: DomainDeps, tenant: Tenant, id: string): Promise<Domain> {
  const domain = await getDomain(deps, tenant, id);
  await deps.domainProvider.remove(domain.name);
  if (!(await deps.domains.delete(tenant, id))) throw new NotFoundError(`No domain with id ${id}.`);
  await announce(deps, 'domain.deleted', domain);
  return domain;
}

/** The reconciler: re-checks pending domains, so verification is noticed without anyone asking. */
export async function checkPendingDomains(deps: DomainDeps, limit = 100): Promise<number> {
  const pending = await deps.domains.listPending(limit);
  for (const domain of pending) await refresh(deps, domain);
  return pending.length;
}

/** Live-mode sends must come from a verified domain of the account (422 otherwise). */
export async function isVerifiedSender(
  deps: Pick<DomainDeps, 'domains'>,
  tenant: Tenant,
  name: string,
): Promise<boolean> {
  return (await deps.domains.get(tenant, domainId(tenant, name)))?.status === 'verified';
}

async function refresh(deps: DomainDeps, domain: Domain): Promise<Domain> {
  const status = await deps.domainProvider.status(domain);
  if (status === domain.status) return domain;
  const updated = await deps.domains.setStatus(
    domain,
    domain.id,
    domain.status,
    status,
    new Date(deps.clock.now()).toISOString(),
  );
  if (!updated) return (await deps.domains.get(domain, domain.id)) ?? domain;
  await announce(deps, 'domain.updated', updated);
  return updated;
}

async function announce(
  deps: Pick<DomainDeps, 'events' | 'clock' | 'random'>,
  type: EventType,
  domain: Domain,
): Promise<void> {
  const now = deps.clock.now();
  await deps.events.publish([
    {
      id: timeOrderedId('evt', now, deps.random),
      type,
      accountId: domain.accountId,
      mode: domain.mode,
      timestamp: new Date(now).toISOString(),
      data: { id: domain.id, name: domain.name, status: domain.status },
    },
  ]);
}
