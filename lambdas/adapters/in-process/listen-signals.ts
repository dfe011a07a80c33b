// The local runtime's listen signals: the fan-out and the polls run in one process, so a poll waits on a promise
// the fan-out resolves when it puts an event on the poll's session, instead of reading the store every second.
// `notifyingSessions` wraps the session store so every put tells the signals (app/listen/relay-event unchanged).
import type { ListenSessionRepository, ListenSignals } from '../../app/listen/ports';
import type { Clock } from '../../app/ports';
import { LISTEN_SETTLE_MS } from '../../domain/listen';

/** Sessions whose last event time is kept: pruned past this many, of those older than a settle window. */
const KEPT_SESSIONS = 10_000;

export class InProcessListenSignals implements ListenSignals {
  /** Session id → when an event was last put on it (epoch ms). */
  private readonly last = new Map<string, number>();
  private readonly waiters = new Map<string, Set<(at: number) => void>>();

  constructor(private readonly clock: Clock) {}

  notify(sessionIds: readonly string[]): void {
    const at = this.clock.now();
    for (const id of new Set(sessionIds)) {
      this.last.delete(id);
      this.last.set(id, at); // newest last in the Map's order
      const waiting = this.waiters.get(id);
      this.waiters.delete(id);
      for (const wake of waiting ?? []) wake(at);
    }
    this.prune(at);
  }

  wait(sessionId: string, sinceMs: number, ms: number): Promise<number | null> {
    const at = this.last.get(sessionId);
    if (at !== undefined && at > sinceMs) return Promise.resolve(at);
    return new Promise((resolve) => {
      const waiting = this.waiters.get(sessionId) ?? new Set();
      const wake = (woken: number) => {
        clearTimeout(timer);
        resolve(woken);
      };
      const timer = setTimeout(() => {
        waiting.delete(wake);
        if (waiting.size === 0 && this.waiters.get(sessionId) === waiting) this.waiters.delete(sessionId);
        resolve(null);
      }, ms);
      waiting.add(wake);
      this.waiters.set(sessionId, waiting);
    });
  }

  /** Polls waiting now (tests). */
  get waiting(): number {
    return [...this.waiters.values()].reduce((sum, set) => sum + set.size, 0);
  }

  /** A time older than a settle window wakes nothing any more (a poll's `sinceMs` is at most that far back). */
  private prune(now: number): void {
    if (this.last.size <= KEPT_SESSIONS) return;
    for (const [id, at] of this.last) {
      if (at > now - 2 * LISTEN_SETTLE_MS) break; // oldest first: the rest are newer
      this.last.delete(id);
    }
  }
}

/** The session store, telling `signals` of every session that got events once they are stored. */
export function notifyingSessions(
  sessions: ListenSessionRepository,
  signals: Pick<ListenSignals, 'notify'>,
): ListenSessionRepository {
  return {
    create: (session) => sessions.create(session),
    listLive: (accountId, nowMs) => sessions.listLive(accountId, nowMs),
    touch: (tenant, id, expiresAt, nowMs) => sessions.touch(tenant, id, expiresAt, nowMs),
    delete: (tenant, id) => sessions.delete(tenant, id),
    readEvents: (sessionId, range, nowMs) => sessions.readEvents(sessionId, range, nowMs),
    putEvents: async (events) => {
      await sessions.putEvents(events);
      signals.notify(events.map((event) => event.sessionId));
    },
  };
}
