// Use case: put one event on the live listen sessions of its account and mode that take it, as the fan-out
// queues a delivery for each subscribed webhook. The body is the exact `standard` payload a webhook receives.
import { isEventType, type SendflowEvent } from '../../domain/events';
import { idleExpiry, listenCursor, takes } from '../../domain/listen';
import { renderPayload } from '../../domain/webhooks/render';
import type { Clock } from '../ports';
import type { ListenEvent, ListenSessionRepository } from './ports';

export interface RelayDeps {
  readonly listenSessions: Pick<ListenSessionRepository, 'listLive' | 'putEvents'>;
  readonly clock: Clock;
}

/** Returns how many sessions got the event. One Query per call (the dispatcher shares it per batch). */
export async function relayToListeners(deps: RelayDeps, event: SendflowEvent): Promise<number> {
  if (!isEventType(event.type)) return 0;
  const now = deps.clock.now();
  const sessions = (await deps.listenSessions.listLive(event.accountId, now)).filter(
    (session) => session.mode === event.mode && takes(session, event.type),
  );
  if (!sessions.length) return 0;
  const payload = renderPayload(event, 'standard');
  const entries: ListenEvent[] = sessions.map((session) => ({
    sessionId: session.id,
    cursor: listenCursor(now, event.id),
    eventId: event.id,
    type: event.type,
    payload,
    // As long as an idle session lasts: a CLI that stops polling for that long finds its session gone anyway.
    expiresAt: idleExpiry(now),
  }));
  await deps.listenSessions.putEvents(entries);
  return entries.length;
}
