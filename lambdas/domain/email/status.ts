// An email's status is derived from its event history: the latest event by time (ties: the later stage).
// Providers deliver events unordered, so arrival order is not trusted.
import type { EventType } from '../events';

const STAGE: Partial<Record<EventType, number>> = {
  'email.scheduled': 0,
  'email.sent': 1,
  'email.delivery_delayed': 2,
  'email.delivered': 3,
  'email.opened': 4,
  'email.clicked': 5,
};

export function emailStatus(events: readonly { type: string; timestamp: string }[]): string {
  if (events.length === 0) return 'queued';
  const latest = [...events].sort(
    (a, b) =>
      Date.parse(a.timestamp) - Date.parse(b.timestamp) ||
      (STAGE[a.type as EventType] ?? 9) - (STAGE[b.type as EventType] ?? 9),
  )[events.length - 1];
  return (latest?.type ?? 'email.queued').replace(/^email\./, '');
}
