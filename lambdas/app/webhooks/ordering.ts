// Use case: per-email ordering (ordering: "per_email"). Before its first attempt, a delivery to an ordered webhook
// enters its email's lane (OrderLanes) and is attempted only if no delivery of an earlier sequence of that email to
// that webhook is unfinished; otherwise it is stored held (pending, no attempt, `waitingFor` the sequence it waits
// behind, due later as the reconciler's backstop). The delivery that finishes (succeeded, or failed for good)
// leaves the lane and wakes the next sequence. Only deliveries to ordered webhooks ever touch a lane: an
// unordered delivery costs nothing more.
import { eventSequence } from '../../domain/email/sequence';
import { earlierThan, LANE_LIMIT, type LaneEntry, recheckAt, toRelease } from '../../domain/webhooks/ordering';
import type { Clock } from '../ports';
import type { LaneKey, OrderLanes } from './order-lanes';
import type { Delivery, DeliveryRepository, RetryScheduler, Webhook } from './ports';

export interface OrderingDeps {
  readonly deliveries: DeliveryRepository;
  readonly retries: RetryScheduler;
  readonly clock: Clock;
  /** How long final deliveries stay in the log: a lane is kept as long. */
  readonly retentionSeconds: number;
  /** Absent: no lane is ever read or written (ordering then has no effect). */
  readonly orderLanes?: OrderLanes;
}

/** The email and sequence a delivery to an ordered webhook carries (from its event, at dispatch). */
export function orderOf(event: { type: string; timestamp: string; emailId?: string }) {
  const sequence = eventSequence(event);
  return event.emailId !== undefined && sequence !== null ? { emailId: event.emailId, sequence } : null;
}

function placeOf(delivery: Delivery): { lane: LaneKey; entry: LaneEntry } | null {
  if (delivery.emailId === undefined || delivery.sequence === undefined) return null;
  return {
    lane: { webhookId: delivery.webhookId, emailId: delivery.emailId },
    entry: { deliveryId: delivery.id, sequence: delivery.sequence },
  };
}

function withoutHold(delivery: Delivery): Delivery {
  if (delivery.waitingFor === undefined) return delivery;
  const { waitingFor: _released, ...rest } = delivery;
  return rest;
}

/**
 * The claimed delivery to attempt now, or null when it is held (stored waiting, its claim released) or someone
 * took its claim over. Only a first attempt to an active `per_email` webhook of a delivery that carries its
 * email's sequence is gated; any other passes at once, with no read or write.
 */
export async function admitInOrder(
  deps: OrderingDeps,
  delivery: Delivery,
  webhook: Webhook | null,
  claimedAttempt: number,
): Promise<Delivery | null> {
  const place = placeOf(delivery);
  if (!deps.orderLanes || !place || !webhook?.active || webhook.ordering !== 'per_email' || delivery.attempts > 0)
    return withoutHold(delivery);
  const now = deps.clock.now();
  const lane = await deps.orderLanes.enter(place.lane, place.entry, Math.floor(now / 1000) + deps.retentionSeconds);
  if (lane.length > LANE_LIMIT) {
    await deps.orderLanes.leave(place.lane, place.entry.deliveryId);
    return withoutHold(delivery);
  }
  const open = await stillOpen(deps, place.lane, earlierThan(lane, place.entry));
  if (open.length === 0) return withoutHold(delivery);
  const { claim: _released, ...rest } = delivery;
  const held: Delivery = {
    ...rest,
    waitingFor: Math.max(...open.map((row) => row.sequence ?? 0)),
    // After the attempts it really waits for: a held blocker's own backstop would add a minute per event held.
    nextAttemptAt: recheckAt(
      now,
      open.filter((row) => row.waitingFor === undefined).map((row) => row.nextAttemptAt),
    ),
  };
  if (!(await deps.deliveries.record(held, claimedAttempt))) return null;
  // A delivery it waits for that finished between the read above and the hold being stored may have looked for it
  // before it was held (its wake-up then found the claim still taken): look again, and wake it if none is left.
  if (
    (
      await stillOpen(
        deps,
        place.lane,
        open.map((row) => ({ deliveryId: row.id, sequence: row.sequence ?? 0 })),
      )
    ).length === 0
  ) {
    await wake(deps, delivery, [place.entry], webhook.rateLimitPerSecond);
  }
  return null;
}

/**
 * After a delivery's result is stored: one that finished (succeeded, or failed with no retry left) leaves its lane
 * and wakes the next sequence of its email. Nothing for a delivery that carries no sequence (never in a lane).
 */
export async function releaseNext(
  deps: OrderingDeps,
  delivery: Delivery,
  webhook?: Pick<Webhook, 'rateLimitPerSecond'> | null,
): Promise<void> {
  const place = placeOf(delivery);
  if (!deps.orderLanes || !place || delivery.status === 'pending') return;
  const left = await deps.orderLanes.leave(place.lane, delivery.id);
  await wake(deps, delivery, toRelease(left, place.entry), webhook?.rateLimitPerSecond);
}

/**
 * The rows of `entries` still unfinished (pending: in flight, retrying, or held themselves). An entry whose row
 * has finished or gone (its holder stopped between its result and leaving the lane) is taken out of the lane.
 */
async function stillOpen(deps: OrderingDeps, lane: LaneKey, entries: readonly LaneEntry[]): Promise<Delivery[]> {
  const now = deps.clock.now();
  const rows = await Promise.all(entries.map((entry) => deps.deliveries.get(lane.webhookId, entry.deliveryId, now)));
  const open: Delivery[] = [];
  for (const [i, row] of rows.entries()) {
    if (row?.status === 'pending') open.push(row);
    else await deps.orderLanes?.leave(lane, (entries[i] as LaneEntry).deliveryId);
  }
  return open;
}

/**
 * Queues the first attempt of each entry now: a held one is claimed and admitted again; any other finds it taken.
 * A paced webhook's wake-ups carry its pace, as its retries do (the worker paces the jobs that carry one).
 */
async function wake(
  deps: OrderingDeps,
  of: Pick<Delivery, 'webhookId' | 'accountId'>,
  entries: readonly LaneEntry[],
  ratePerSecond?: number | null,
) {
  for (const entry of entries) {
    await deps.retries.schedule(
      {
        deliveryId: entry.deliveryId,
        webhookId: of.webhookId,
        attempt: 1,
        accountId: of.accountId,
        ...(ratePerSecond ? { ratePerSecond } : {}),
      },
      0,
    );
  }
}
