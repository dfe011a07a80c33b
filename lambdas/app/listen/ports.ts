// Ports of listen sessions: the session records and the events put on them for the CLI to pull.
import type { EventType } from '../../domain/events';
import type { Tenant } from '../webhooks/ports';

/** A live listen session: the fan-out puts matching events on it, as it would queue a webhook's deliveries. */
export interface ListenSession extends Tenant {
  /** `ls_…`, time-ordered. */
  readonly id: string;
  /** `whsec_…`: the CLI signs what it forwards with it, exactly as a webhook's deliveries are signed. */
  readonly secret: string;
  /** The event types it takes; null: every type. */
  readonly events: readonly EventType[] | null;
  /** Epoch ms. */
  readonly createdAt: number;
  /** Epoch seconds: when it ends unless polled again (DynamoDB TTL; reads filter on it too). */
  readonly expiresAt: number;
}

/** One event on a session, as the CLI forwards it. */
export interface ListenEvent {
  readonly sessionId: string;
  /** Its position in the session (domain/listen.ts listenCursor): write time, then event id. */
  readonly cursor: string;
  readonly eventId: string;
  readonly type: string;
  /** The exact `standard` body a webhook would receive. */
  readonly payload: string;
  /** Epoch seconds (TTL). */
  readonly expiresAt: number;
}

export interface ListenSessionRepository {
  create(session: ListenSession): Promise<void>;
  /** The account's sessions (both modes) live at `nowMs`, oldest first. One Query: the fan-out's lookup. */
  listLive(accountId: string, nowMs: number): Promise<ListenSession[]>;
  /**
   * Moves the tenant's live session's expiry to `expiresAt`: the session as now stored, or null when it is not
   * live (another account's or mode's id is simply not found). A poll's one read of its session.
   */
  touch(tenant: Tenant, id: string, expiresAt: number, nowMs: number): Promise<ListenSession | null>;
  /** False when there was no such session of the tenant. */
  delete(tenant: Tenant, id: string): Promise<boolean>;
  /** Puts events on their sessions (a repeated cursor overwrites itself: a redelivered write is harmless). */
  putEvents(events: readonly ListenEvent[]): Promise<void>;
  /**
   * The session's unexpired events with a cursor after `after` (from the start when null) and below `before`,
   * in cursor order, at most `limit`.
   */
  readEvents(
    sessionId: string,
    range: { readonly after: string | null; readonly before: string; readonly limit: number },
    nowMs: number,
  ): Promise<ListenEvent[]>;
}

/**
 * Wakes waiting polls when events are put on their sessions. The local runtime's fan-out runs in the poll's own
 * process, so it can tell it; on AWS it runs in another function, and none is wired (polls read on an interval).
 */
export interface ListenSignals {
  /** Called once events are stored on these sessions. */
  notify(sessionIds: readonly string[]): void;
  /**
   * Resolves with the time (epoch ms) an event was last put on the session, as soon as that is later than
   * `sinceMs` (at once if it already is); with null when `ms` pass first.
   */
  wait(sessionId: string, sinceMs: number, ms: number): Promise<number | null>;
}

/** The account's open polls (each one waiting is held by the runtime): counted so they can be capped. */
export interface OpenPolls {
  /** Counts one more open poll of the account unless `limit` are open: the function that ends it, or null. */
  tryOpen(accountId: string, limit: number): (() => void) | null;
}
