// Use case: webhooks with the health their object carries (GET /v1/webhooks and /v1/webhooks/:id):
// success_rate_24h and last_failure_at from one bounded read per webhook, the newest HEALTH_SAMPLE deliveries
// of its log (domain/webhooks/delivery-health.ts), a few webhooks at a time.
import { isSuccess } from '../../domain/webhooks/delivery';
import {
  type DeliveryHealth,
  deliveryHealth,
  HEALTH_SAMPLE,
  type HealthDelivery,
} from '../../domain/webhooks/delivery-health';
import { errorClassOf } from '../../domain/webhooks/error-class';
import { mapWithLimit } from '../pool';
import type { Clock } from '../ports';
import type { Delivery, DeliveryRepository, Webhook } from './ports';

export interface WebhookHealthViewDeps {
  readonly deliveries: Pick<DeliveryRepository, 'list'>;
  readonly clock: Clock;
}

/** Reads in flight at once for a listing (an account has at most WEBHOOKS_PER_MODE webhooks). */
const READS_AT_ONCE = 4;

export interface WebhookWithHealth {
  readonly webhook: Webhook;
  readonly health: DeliveryHealth;
}

export function withHealth(deps: WebhookHealthViewDeps, webhooks: readonly Webhook[]): Promise<WebhookWithHealth[]> {
  const now = deps.clock.now();
  return mapWithLimit(webhooks, READS_AT_ONCE, async (webhook) => {
    const page = await deps.deliveries.list(webhook.id, { limit: HEALTH_SAMPLE, examine: HEALTH_SAMPLE }, now);
    const disabled = Boolean(webhook.disabledReason);
    return { webhook, health: deliveryHealth(page.items.map(healthOf), now, { disabled }) };
  });
}

/** A stored delivery as the health rules read it. */
function healthOf(delivery: Delivery): HealthDelivery {
  return {
    createdAt: delivery.createdAt,
    attempts: delivery.attemptLog.map((a) => ({ at: a.at, ok: isSuccess(a), errorClass: errorClassOf(a) })),
  };
}
