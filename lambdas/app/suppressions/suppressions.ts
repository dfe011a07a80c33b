// Use cases of the suppression list as the API manages it (/v1/suppressions, Resend's suppressions): read it, add
// addresses by hand, remove them. Bounces, complaints and unsubscribes add to the same list (app/events,
// app/emails/unsubscribe). While the suppressionEvents stored format is on, each change records its
// suppression.added / suppression.removed in the same write (the item's outbox) and relays it at once.
import { NotFoundError } from '../../domain/errors';
import {
  addressOfSuppressionId,
  reasonsOf,
  type SuppressionFacts,
  type SuppressionOrigin,
  suppressionEvent,
} from '../../domain/suppressions';
import type { Suppression, SuppressionList, SuppressionPage } from '../emails/ports';
import { relay } from '../outbox';
import type { Clock, RandomBytes } from '../ports';
import type { EventPublisher, Tenant } from '../webhooks/ports';

export interface SuppressionDeps {
  readonly suppressions: SuppressionList;
  readonly events: EventPublisher;
  readonly clock: Clock;
  readonly random: RandomBytes;
  /** The suppressionEvents stored format: record suppression.added / suppression.removed. Off: none. */
  readonly suppressionEvents?: boolean;
}

/** The most addresses one batch adds or removes. */
export const SUPPRESSION_BATCH_LIMIT = 100;

/** The address a path's id-or-address names (bare, lower-cased), or null when it names none. */
export function addressOf(idOrEmail: string): string | null {
  const fromId = addressOfSuppressionId(idOrEmail);
  if (fromId) return fromId;
  return idOrEmail.includes('@') ? idOrEmail.trim().toLowerCase() : null;
}

export async function getSuppression(
  deps: Pick<SuppressionDeps, 'suppressions'>,
  tenant: Tenant,
  idOrEmail: string,
): Promise<Suppression> {
  const address = addressOf(idOrEmail);
  const found = address ? (await deps.suppressions.find(tenant, [address])).get(address) : undefined;
  if (!found) throw new NotFoundError(`No suppression ${JSON.stringify(idOrEmail.slice(0, 300))}.`);
  return found;
}

export function listSuppressions(
  deps: Pick<SuppressionDeps, 'suppressions'>,
  tenant: Tenant,
  query: { limit: number; after?: string; origin?: SuppressionOrigin },
): Promise<SuppressionPage> {
  return deps.suppressions.list(tenant, {
    limit: query.limit,
    ...(query.after !== undefined ? { after: query.after } : {}),
    ...(query.origin ? { reasons: reasonsOf(query.origin) } : {}),
  });
}

/** Suppresses each address by hand (`manual`); one already suppressed keeps its reason. In order, one at a time. */
export async function addSuppressions(
  deps: SuppressionDeps,
  tenant: Tenant,
  addresses: readonly string[],
): Promise<{ address: string; added: boolean }[]> {
  const results: { address: string; added: boolean }[] = [];
  for (const address of addresses) {
    const now = deps.clock.now();
    const suppression: Suppression = { address, reason: 'manual', createdAt: new Date(now).toISOString() };
    if (!deps.suppressionEvents) {
      results.push({ address, added: await deps.suppressions.add(tenant, suppression) });
      continue;
    }
    const event = suppressionEvent('suppression.added', tenant, suppression, now, deps.random);
    const recorded = await deps.suppressions.record(tenant, suppression, [event]);
    await relay(deps, deps.suppressions.outbox, recorded);
    results.push({ address, added: recorded !== null });
  }
  return results;
}

/** Removes each address's suppression; `removed` false when it had none. In order, one at a time. */
export async function removeSuppressions(
  deps: SuppressionDeps,
  tenant: Tenant,
  addresses: readonly string[],
): Promise<{ address: string; removed: boolean }[]> {
  const found = await deps.suppressions.find(tenant, addresses);
  const results: { address: string; removed: boolean }[] = [];
  for (const address of addresses) {
    const current = found.get(address);
    if (!current) {
      results.push({ address, removed: false });
      continue;
    }
    const events = deps.suppressionEvents
      ? [suppressionEvent('suppression.removed', tenant, current as SuppressionFacts, deps.clock.now(), deps.random)]
      : [];
    const removed = await deps.suppressions.remove(tenant, address, events);
    await relay(deps, deps.suppressions.outbox, removed);
    results.push({ address, removed: removed !== null });
  }
  return results;
}
