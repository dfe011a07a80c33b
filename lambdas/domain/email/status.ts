// An email's status is derived from its event history: the latest event by time (ties: the later stage).
// Providers deliver events unordered, so arrival order is not trusted. An unsubscribe does not change the
// delivery status (spec §6.3); a cancelled scheduled email is `canceled`.
import { EVENT_TYPES, type EventType } from '../events';

/**
 * Every status emailStatus can give: `queued` (no event yet), `canceled`, and each email event's name without
 * `email.`, except `unsubscribed` (it never changes the status).
 */
export const EMAIL_STATUSES: readonly string[] = [
  'queued',
  'canceled',
  ...EVENT_TYPES.filter((type) => type.startsWith('email.') && type !== 'email.unsubscribed').map((type) =>
    type.replace(/^email\./, ''),
  ),
];

/**
 * The statuses every email passes through or most end in. The status index leaves them out (indexing them would
 * cost every email five write units: an entry written at `sent`, moved at `delivered`): a listing by one of them
 * reads the newest emails instead (most recent emails are `delivered`; `queued` and `sent` last moments). The
 * index keeps the others, which few emails have: scheduled, canceled, delivery_delayed, bounced, complained,
 * failed, suppressed, and opened and clicked (only with tracking, which is off unless a domain turns it on).
 */
export const SCANNED_STATUSES: readonly string[] = ['queued', 'sent', 'delivered'];

export const isIndexedStatus = (status: string): boolean => !SCANNED_STATUSES.includes(status);

const STAGE: Partial<Record<EventType, number>> = {
  'email.scheduled': 0,
  'email.sent': 1,
  'email.delivery_delayed': 2,
  'email.delivered': 3,
  'email.opened': 4,
  'email.clicked': 5,
};

export function emailStatus(email: {
  readonly events: readonly { type: string; timestamp: string }[];
  readonly canceledAt?: string;
}): string {
  if (email.canceledAt) return 'canceled';
  const events = email.events.filter((e) => e.type !== 'email.unsubscribed');
  if (events.length === 0) return 'queued';
  const latest = [...events].sort(
    (a, b) =>
      Date.parse(a.timestamp) - Date.parse(b.timestamp) ||
      (STAGE[a.type as EventType] ?? 9) - (STAGE[b.type as EventType] ?? 9),
  )[events.length - 1];
  return (latest?.type ?? 'email.queued').replace(/^email\./, '');
}

/**
 * The status an event gives its email, with a rank that orders events as emailStatus does (time, then stage):
 * an index of statuses keeps, per email, the status of the highest rank seen. Null: the event never changes the
 * status (an unsubscribe, or not an email event). A cancel outranks every event.
 */
export function statusFromEvent(event: { readonly type: string; readonly timestamp: string }): {
  status: string;
  rank: number;
} | null {
  if (!event.type.startsWith('email.') || event.type === 'email.unsubscribed') return null;
  const stage = STAGE[event.type as EventType] ?? 9;
  return { status: event.type.replace(/^email\./, ''), rank: Date.parse(event.timestamp) * 16 + stage };
}

export const CANCELED_STATUS = { status: 'canceled', rank: Number.MAX_SAFE_INTEGER } as const;

/** The status an email's events (or its cancel) give it, with its rank, as the status index notes it; null: none. */
export function rankedStatus(
  events: readonly { readonly type: string; readonly timestamp: string }[],
  canceledAt?: string,
): { status: string; rank: number } | null {
  if (canceledAt) return CANCELED_STATUS;
  let best: { status: string; rank: number } | null = null;
  for (const event of events) {
    const ranked = statusFromEvent(event);
    if (ranked && (!best || ranked.rank > best.rank)) best = ranked;
  }
  return best;
}
