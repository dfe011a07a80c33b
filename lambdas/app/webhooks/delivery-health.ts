// Use case: a webhook's delivery health (domain/webhooks/delivery-health.ts) from one bounded read, the newest
// HEALTH_SAMPLE deliveries of its log: the figures the dashboard shows, for the webhook object to carry later
// (`success_rate_24h`, `last_failure_at`).
import { isSuccess } from '../../domain/webhooks/delivery';
import {
  type DeliveryHealth,
  deliveryHealth,
  HEALTH_SAMPLE,
  type HealthDelivery,
} from '../../domain/webhooks/delivery-health';
import { errorClassOf } from '../../domain/webhooks/error-class';
import type { Clock } from '../ports';
import { getWebhook, type ManageWebhookDeps } from './manage-webhooks';
import type { Delivery, DeliveryRepository, Tenant } from './ports';

export interface DeliveryHealthDeps extends Pick<ManageWebhookDeps, 'webhooks'> {
  readonly deliveries: Pick<DeliveryRepository, 'list'>;
  readonly clock: Clock;
}

export async function webhookDeliveryHealth(
  deps: DeliveryHealthDeps,
  tenant: Tenant,
  webhookId: string,
): Promise<DeliveryHealth> {
  const webhook = await getWebhook(deps, tenant, webhookId);
  const now = deps.clock.now();
  const page = await deps.deliveries.list(webhook.id, { limit: HEALTH_SAMPLE }, now);
  return deliveryHealth(page.items.map(healthOf), now);
}

/** A stored delivery as the health rules read it. */
export function healthOf(delivery: Delivery): HealthDelivery {
  return {
    createdAt: delivery.createdAt,
    attempts: delivery.attemptLog.map((a) => ({
      at: a.at,
      ok: isSuccess(a),
      errorClass: errorClassOf(a),
    })),
  };
}
