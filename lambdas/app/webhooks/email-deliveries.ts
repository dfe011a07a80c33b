// Use case: the webhook deliveries of one email (GET /v1/emails/:id/deliveries), found without an index of their
// own. A delivery's id is derived from its event and its webhook (deliveryIdFor), so the email's events (its
// history) crossed with the tenant's webhooks are every key a delivery of it can have, read a page at a time.
import { deliveryIdFor } from '../../domain/webhooks/render';
import { type ReadEmailDeps, readEmail } from '../emails/read-email';
import type { Clock } from '../ports';
import {
  type Delivery,
  type DeliveryKey,
  type DeliveryRepository,
  sameTenant,
  type Tenant,
  type WebhookRepository,
} from './ports';

/**
 * The most keys one request derives (at most ten BatchGetItem calls): events × webhooks. The newest events are
 * taken whole until the next one would pass it; older events' deliveries are then not listed.
 */
export const EMAIL_DELIVERY_KEYS = 1000;

export interface EmailDeliveriesDeps extends ReadEmailDeps {
  readonly webhooks: Pick<WebhookRepository, 'list'>;
  readonly deliveries: Pick<DeliveryRepository, 'getMany'>;
  readonly clock: Clock;
}

/** Keys read per BatchGetItem while a page is filled (most keys of an email have a delivery). */
const KEYS_PER_READ = 100;

export interface EmailDeliveriesPage {
  /** 1–100. */
  readonly limit: number;
  /** A delivery id: only the ones that sort before it (older events; then by webhook). */
  readonly after?: string;
  /** A delivery id or a prefix of one: only the ones at or after it (a time window's lower end). */
  readonly from?: string;
  /** Only deliveries of these event types. */
  readonly eventTypes?: readonly string[];
}

export interface EmailDeliveries {
  /** Newest first by delivery id (which starts with the event's time-ordered id), `limit` at most. */
  readonly items: Delivery[];
  /** Exact: more deliveries of the events looked at come after these. */
  readonly hasMore: boolean;
  /** The last item's id (the `after` of the next page) when `hasMore`, else null. */
  readonly nextAfter: string | null;
}

/**
 * A page of the deliveries of the caller's email (404 as GET /v1/emails/:id when it is not theirs) to the caller's
 * current webhooks. Deliveries to a deleted webhook cannot be derived (the webhook id is gone) and are not listed;
 * nor are expired ones (30 days after they ended), nor events the webhook was not subscribed to (no delivery
 * exists), nor those of events older than the EMAIL_DELIVERY_KEYS bound. The derived keys past `after` are read
 * newest first, a hundred at a time, until the page (and one more) is found: at most ten reads a request.
 */
export async function listEmailDeliveries(
  deps: EmailDeliveriesDeps,
  tenant: Tenant,
  emailId: string,
  page: EmailDeliveriesPage = { limit: 20 },
): Promise<EmailDeliveries> {
  const [{ history }, webhooks] = await Promise.all([readEmail(deps, tenant, emailId), deps.webhooks.list(tenant)]);
  if (webhooks.length === 0) return { items: [], hasMore: false, nextAfter: null };
  // The filters narrow the events before the bound (a key per event and webhook): no read is spent on the others.
  const types = page.eventTypes ? new Set(page.eventTypes) : undefined;
  const wanted = types ? history.events.filter((event) => types.has(event.type)) : history.events;
  const eventsRead = Math.min(wanted.length, Math.floor(EMAIL_DELIVERY_KEYS / webhooks.length));
  // history.events is oldest first: the newest ones are at its end.
  const events = wanted.slice(wanted.length - eventsRead);
  const { after, from, limit } = page;
  const keys: DeliveryKey[] = events
    .flatMap((event) => webhooks.map((webhook) => ({ webhookId: webhook.id, id: deliveryIdFor(event.id, webhook.id) })))
    .filter((key) => (after === undefined || key.id < after) && (from === undefined || key.id >= from))
    .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const items: Delivery[] = [];
  for (let i = 0; i < keys.length && items.length <= limit; i += KEYS_PER_READ) {
    const found = await deps.deliveries.getMany(keys.slice(i, i + KEYS_PER_READ), deps.clock.now());
    // Defence in depth: the keys are the tenant's webhooks, and every row must say so too.
    items.push(
      ...found
        .filter((delivery) => sameTenant(delivery, tenant))
        .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)),
    );
  }
  if (items.length <= limit) return { items, hasMore: false, nextAfter: null };
  const shown = items.slice(0, limit);
  return { items: shown, hasMore: true, nextAfter: shown.at(-1)?.id ?? null };
}
