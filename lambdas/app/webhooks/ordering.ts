// Use case: per-email ordering (ordering: "per_email"). A delivery to an ordered webhook enters its email's lane
// (OrderLanes) before anything can look at a later event of that email: at the fan-out, before its job is queued,
// and for a copy's email.sent before the provider is even called (reserveSent). At its first attempt it goes only
// if no delivery of an earlier sequence of that email to that webhook is unfinished, or may still appear (an entry
// whose row is to come); otherwise it is stored held (pending, no attempt, `waitingFor` the sequence it waits
// behind, due later as the reconciler's backstop). The delivery that finishes (succeeded, or failed for good)
// leaves the lane and wakes the next sequence. Only deliveries to ordered webhooks ever touch a lane: an unordered
// delivery costs nothing more.
import { eventSequence } from '../../domain/email/sequence';
import type { SendflowEvent } from '../../domain/events';
import {
  earlierThan,
  LANE_LIMIT,
  type LaneEntry,
  QUEUED_ROW_WITHIN_MS,
  recheckAt,
  rowMayCome,
  toRelease,
} from '../../domain/webhooks/ordering';
import { deliveryIdFor } from '../../domain/webhooks/render';
import type { Clock } from '../ports';
import type { LaneKey, OrderLanes } from './order-lanes';
import type { Delivery, DeliveryJob, DeliveryRepository, RetryScheduler, Webhook, WebhookRepository } from './ports';

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

/** The lanes' side of the fan-out and of a copy's hand-over: where entries are kept, and until when. */
export type LaneDeps = Pick<OrderingDeps, 'clock' | 'retentionSeconds' | 'orderLanes'>;

const expiresAt = (deps: LaneDeps) => Math.floor(deps.clock.now() / 1000) + deps.retentionSeconds;

/**
 * The fan-out's part: each first-attempt job to an ordered webhook (its seed carries the email and sequence) enters
 * its email's lane before the job is queued, its row to come with its first attempt. A later event of the email
 * fanned out after this one therefore always finds it.
 */
export async function enterAtFanOut(deps: LaneDeps, jobs: readonly DeliveryJob[]): Promise<void> {
  const lanes = deps.orderLanes;
  if (!lanes) return;
  const rowBy = deps.clock.now() + QUEUED_ROW_WITHIN_MS;
  await Promise.all(
    jobs.flatMap(({ deliveryId, webhookId, seed }) =>
      seed?.emailId !== undefined && seed.sequence !== undefined
        ? [
            lanes.enter(
              { webhookId, emailId: seed.emailId },
              { deliveryId, sequence: seed.sequence, rowBy },
              expiresAt(deps),
            ),
          ]
        : [],
    ),
  );
}

/** A copy's email.sent held in its lanes before the provider is called (reserveSent). */
export interface Reservation {
  readonly eventId: string;
  readonly accountId: string;
  readonly lane: LaneKey;
  readonly entry: LaneEntry;
  readonly ratePerSecond?: number | null;
}

/**
 * Before copies go to the provider: their email.sent (known before the hand-over: its id and time come from the
 * claim) enters the lane of every active ordered webhook of the account that subscribes to it, its row to come
 * by `untilMs` (the claim's end, when a copy whose event was never told is settled otherwise). So an event SES or
 * the simulator tells about the copy, however fast, is held behind it. Returns what to release for copies the
 * provider did not take (releaseReserved).
 */
export async function reserveSent(
  deps: LaneDeps & { readonly webhooks: Pick<WebhookRepository, 'list'> },
  events: readonly SendflowEvent[],
  untilMs: number,
): Promise<Reservation[]> {
  const lanes = deps.orderLanes;
  const first = events[0];
  if (!lanes || !first) return [];
  const ordered = (await deps.webhooks.list(first)).filter(
    (webhook) => webhook.active && webhook.ordering === 'per_email' && webhook.events.includes('email.sent'),
  );
  const reservations = ordered.flatMap((webhook) =>
    events.flatMap((event) => {
      const order = orderOf(event);
      if (!order) return [];
      return [
        {
          eventId: event.id,
          accountId: event.accountId,
          lane: { webhookId: webhook.id, emailId: order.emailId },
          entry: { deliveryId: deliveryIdFor(event.id, webhook.id), sequence: order.sequence, rowBy: untilMs },
          ratePerSecond: webhook.rateLimitPerSecond ?? null,
        },
      ];
    }),
  );
  await Promise.all(reservations.map((r) => lanes.enter(r.lane, r.entry, expiresAt(deps))));
  return reservations;
}

/** The reservations of copies the provider did not take leave their lanes and wake the events they held. */
export async function releaseReserved(
  deps: OrderingDeps,
  reservations: readonly Reservation[],
  notTaken: ReadonlySet<string>,
): Promise<void> {
  const lanes = deps.orderLanes;
  if (!lanes) return;
  for (const { eventId, accountId, lane, entry, ratePerSecond } of reservations) {
    if (!notTaken.has(eventId)) continue;
    const left = await lanes.leave(lane, entry.deliveryId);
    await wake(deps, { webhookId: lane.webhookId, accountId }, toRelease(left, entry), ratePerSecond);
  }
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
  // Entered at the fan-out; a job queued by a release that entered lanes only here enters now.
  let lane = await deps.orderLanes.read(place.lane);
  if (!lane.some((entry) => entry.deliveryId === place.entry.deliveryId))
    lane = await deps.orderLanes.enter(place.lane, place.entry, expiresAt(deps));
  if (lane.length > LANE_LIMIT) {
    await deps.orderLanes.leave(place.lane, place.entry.deliveryId);
    return withoutHold(delivery);
  }
  const open = await stillOpen(deps, place.lane, earlierThan(lane, place.entry));
  if (open.length === 0) return withoutHold(delivery);
  const { claim: _released, ...rest } = delivery;
  const held: Delivery = {
    ...rest,
    waitingFor: Math.max(...open.map((blocker) => blocker.entry.sequence)),
    // After the attempts it really waits for: a held blocker's own backstop would add a minute per event held.
    nextAttemptAt: recheckAt(
      now,
      open.filter((blocker) => !blocker.held).map((blocker) => blocker.nextAttemptAt),
      now - delivery.createdAt,
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
        open.map((blocker) => blocker.entry),
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

/** An earlier entry that holds a delivery: its row is unfinished, or still to come. */
interface Blocker {
  readonly entry: LaneEntry;
  /** Its row's next attempt; null while it has no row (its first attempt is still to be queued or made). */
  readonly nextAttemptAt: number | null;
  /** Held itself (its own backstop is not an attempt). */
  readonly held: boolean;
}

/**
 * The entries that still hold a later event: those whose row is unfinished (pending: in flight, retrying, or held
 * themselves), and those with no row yet that may still get one (LaneEntry.rowBy). Any other (its row finished,
 * or gone: its holder stopped between its result and leaving the lane; or never came) is taken out of the lane.
 */
async function stillOpen(deps: OrderingDeps, lane: LaneKey, entries: readonly LaneEntry[]): Promise<Blocker[]> {
  const now = deps.clock.now();
  const rows = await Promise.all(entries.map((entry) => deps.deliveries.get(lane.webhookId, entry.deliveryId, now)));
  const open: Blocker[] = [];
  for (const [i, row] of rows.entries()) {
    const entry = entries[i] as LaneEntry;
    if (row?.status === 'pending')
      open.push({ entry, nextAttemptAt: row.nextAttemptAt, held: row.waitingFor !== undefined });
    else if (!row && rowMayCome(entry, now)) open.push({ entry, nextAttemptAt: null, held: false });
    else await deps.orderLanes?.leave(lane, entry.deliveryId);
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
