// POST /v1/webhooks/:id/signature-check: why a receiver's signature check fails. The webhook's secret never
// leaves Sendflow: the caller sends what its endpoint received, and gets a verdict and the first problem found.
import { deliveryIdFor } from '../../domain/webhooks/render';
import { retiredSecret, secretSetOf } from '../../domain/webhooks/secret-set';
import { liveSecrets } from '../../domain/webhooks/signature';
import { checkSignature, type SignatureDiagnosis } from '../../domain/webhooks/signature-check';
import type { Clock } from '../ports';
import { getWebhook } from './manage-webhooks';
import type { DeliveryRepository, Tenant, WebhookRepository } from './ports';

export interface SignatureCheckDeps {
  readonly webhooks: WebhookRepository;
  readonly deliveries: DeliveryRepository;
  readonly clock: Clock;
}

export interface ReceivedRequest {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * Checks the request against the webhook's secret. When the headers name an event (webhook-id) whose delivery
 * to this webhook is still in the log, its stored body tells a changed body from a wrong secret.
 */
export async function checkWebhookSignature(
  deps: SignatureCheckDeps,
  tenant: Tenant,
  webhookId: string,
  received: ReceivedRequest,
): Promise<SignatureDiagnosis> {
  const webhook = await getWebhook(deps, tenant, webhookId);
  const nowMs = deps.clock.now();
  const eventId = Object.entries(received.headers).find(([name]) => name.toLowerCase() === 'webhook-id')?.[1];
  const delivery = eventId ? await deps.deliveries.get(webhook.id, deliveryIdFor(eventId, webhook.id), nowMs) : null;
  const secrets = liveSecrets(webhook, nowMs);
  const retired = retiredSecret(secretSetOf(webhook), nowMs);
  return checkSignature({
    headers: received.headers,
    body: received.body,
    secrets,
    ...(retired ? { retiredSecret: retired } : {}),
    nowMs,
    ...(delivery ? { sentBody: delivery.payload } : {}),
  });
}
