// Which tracking an outgoing email gets: its sender domain's open_tracking and click_tracking, read once a
// minute at most per domain (a send worker sends many copies of many emails from the same few domains).
// A sender domain the account does not have (test mode, or deleted since) tracks nothing.
import type { Tenant } from '../webhooks/ports';
import { domainId } from './domains';
import type { DomainRepository } from './ports';

export interface Tracking {
  readonly open: boolean;
  readonly click: boolean;
}

export const NO_TRACKING: Tracking = { open: false, click: false };

/** How long a domain's flags are reused: a change applies to emails sent from then on, within this. */
export const TRACKING_CACHE_MS = 60_000;

export type TrackingLookup = (tenant: Tenant, senderDomain: string) => Promise<Tracking>;

export function trackingLookup(
  domains: Pick<DomainRepository, 'get'>,
  now: () => number,
  cacheMs = TRACKING_CACHE_MS,
): TrackingLookup {
  const cache = new Map<string, { readonly at: number; readonly tracking: Promise<Tracking> }>();
  return (tenant, senderDomain) => {
    const name = senderDomain.toLowerCase();
    const key = `${tenant.accountId}#${tenant.mode}#${name}`;
    const hit = cache.get(key);
    if (hit && now() - hit.at < cacheMs) return hit.tracking;
    const tracking = domains
      .get(tenant, domainId(tenant, name))
      .then(
        (domain): Tracking =>
          domain ? { open: domain.openTracking ?? false, click: domain.clickTracking ?? false } : NO_TRACKING,
      );
    // A failed read is not kept: the next copy asks again.
    tracking.catch(() => cache.delete(key));
    cache.set(key, { at: now(), tracking });
    return tracking;
  };
}
