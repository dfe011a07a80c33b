// Use case: the webhook deliveries of one email (GET /v1/emails/:id/deliveries), found without an index of their
// own. A delivery's id is derived from its event and its webhook (deliveryIdFor), so the email's events (its
// history) crossed with the tenant's webhooks are every key a delivery of it can have: one batch read of those keys.
import { deliveryIdFor } from '../../domain/webhooks/render';
import { type ReadEmailDeps, readEmail } from '../emails/read-email';
import type { Clock } from '../ports';
import type { Delivery, DeliveryKey, DeliveryRepository, Tenant, WebhookRepository } from './ports';

/**
 * The most keys one request reads (ten BatchGetItem calls): events × webhooks. The newest events are taken
 * whole until the next one would pass it; older events are then left out and `hasMore` says so.
 */
export const EMAIL_DELIVERY_KEYS = 1000;

export interface EmailDeliveriesDeps extends ReadEmailDeps {
  readonly webhooks: Pick<WebhookRepository, 'list'>;
  readonly deliveries: Pick<DeliveryRepository, 'getMany'>;
  readonly clock: Clock;
}

export interface EmailDeliveries {
  /** Newest first (by delivery id, which starts with the event's time-ordered id; then by webhook). */
  readonly items: Delivery[];
  /** True when older events of the email were not looked at: they may have deliveries not listed. */
  readonly hasMore: boolean;
}

/**
 * The deliveries of the caller's email (404 as GET /v1/emails/:id when it is not theirs) to the caller's current
 * webhooks. Deliveries to a deleted webhook cannot be derived (the webhook id is gone) and are not listed; nor
 * are expired ones (30 days after they ended), nor events the webhook was not subscribed to (no delivery exists).
 */
export async function listEmailDeliveries(
  deps: EmailDeliveriesDeps,
  tenant: Tenant,
  emailId: string,
): Promise<EmailDeliveries> {
  const [{ history }, webhooks] = await Promise.all([readEmail(deps, tenant, emailId), deps.webhooks.list(tenant)]);
  if (webhooks.length === 0) return { items: [], hasMore: history.truncated };
  const eventsRead = Math.min(history.events.length, Math.floor(EMAIL_DELIVERY_KEYS / webhooks.length));
  // history.events is oldest first: the newest ones are at its end.
  const events = history.events.slice(history.events.length - eventsRead);
  const keys: DeliveryKey[] = events.flatMap((event) =>
    webhooks.map((webhook) => ({ webhookId: webhook.id, id: deliveryIdFor(event.id, webhook.id) })),
  );
  const found = await deps.deliveries.getMany(keys, deps.clock.now());
  // Defence in depth: the keys are the tenant's webhooks, and every row must say so too.
  const items = found
    .filter((delivery) => delivery.accountId === tenant.accountId && delivery.mode === tenant.mode)
    .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : a.webhookId < b.webhookId ? 1 : -1));
  return { items, hasMore: history.truncated || eventsRead < history.events.length };
}
