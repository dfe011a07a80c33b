// Use case: fan one event out to the active webhooks of its account and mode that subscribe to it and whose payload
// filter (domain/webhooks/filter.ts) it matches.
import type { SendflowEvent } from '../../domain/events';
import { evaluateFilter, filterInput, isEmptyFilter } from '../../domain/webhooks/filter';
import type { WebhookFormat } from '../../domain/webhooks/format';
import { deliveryIdFor, renderPayload } from '../../domain/webhooks/render';
import type { Clock } from '../ports';
import type { OrderLanes } from './order-lanes';
import { enterAtFanOut, orderOf } from './ordering';
import type { DeliveryJob, DeliveryQueue, WebhookRepository } from './ports';

export interface DispatchDeps {
  readonly webhooks: Pick<WebhookRepository, 'list'>;
  readonly deliveryQueue: DeliveryQueue;
  readonly clock: Clock;
  /** Per-email ordering's lanes: an ordered webhook's delivery enters its lane before its job is queued. */
  readonly orderLanes?: OrderLanes;
  /** How long a lane is kept (the deliveries' retention, seconds); needed with `orderLanes`. */
  readonly retentionSeconds?: number;
  /** Told of each webhook whose filter kept this event from it (filtered_24h: app/webhooks/filtered-tally). */
  readonly filtered?: { note(webhookId: string): void };
}

/** Returns how many deliveries were queued. Re-dispatching the same event yields the same delivery ids. */
export async function dispatchEvent(deps: DispatchDeps, event: SendflowEvent): Promise<number> {
  const subscribed = (await deps.webhooks.list(event)).filter(
    (webhook) => webhook.active && (webhook.events as readonly string[]).includes(event.type),
  );
  // After the subscription check, so an unsubscribed event costs no match; the view is built once per event.
  let input: Record<string, unknown> | undefined;
  const targets = subscribed.filter((webhook) => {
    if (isEmptyFilter(webhook.filter)) return true;
    input ??= filterInput(event);
    if (evaluateFilter(webhook.filter, input).matches) return true;
    deps.filtered?.note(webhook.id);
    return false;
  });
  const bodies = new Map<WebhookFormat, string>();
  const render = (format: WebhookFormat) =>
    bodies.get(format) ?? bodies.set(format, renderPayload(event, format)).get(format) ?? '';
  const createdAt = deps.clock.now();
  const eventAt = Date.parse(event.timestamp);
  // Only a `per_email` webhook's rows carry the email and sequence (its lane); others keep their size.
  const order = orderOf(event);
  const jobs: DeliveryJob[] = targets.map((webhook) => ({
    deliveryId: deliveryIdFor(event.id, webhook.id),
    webhookId: webhook.id,
    attempt: 1,
    ...(Number.isFinite(eventAt) ? { eventAt } : {}),
    ...(webhook.rateLimitPerSecond ? { ratePerSecond: webhook.rateLimitPerSecond } : {}),
    seed: {
      accountId: event.accountId,
      mode: event.mode,
      eventId: event.id,
      event: event.type,
      format: webhook.format,
      payload: render(webhook.format),
      createdAt,
      ...(order && webhook.ordering === 'per_email' ? order : {}),
      // The event's span: each attempt's span is its child, and the receiver's `traceparent` continues it.
      ...(event.trace !== undefined ? { trace: event.trace } : {}),
    },
  }));
  if (deps.orderLanes && deps.retentionSeconds !== undefined)
    await enterAtFanOut({ ...deps, retentionSeconds: deps.retentionSeconds }, jobs);
  if (jobs.length) await deps.deliveryQueue.send(jobs);
  return jobs.length;
}
