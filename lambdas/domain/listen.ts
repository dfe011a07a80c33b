// Listen sessions (`npm run listen`): the rules of a session the CLI pulls events from, with no inbound connection
// to the laptop. Its limits, its idle expiry, which events it takes, and the cursor that orders what it holds.
import type { EventType } from './events';

/** Live sessions per account (both modes together): a developer's few terminals, not a delivery channel. */
export const LISTEN_SESSIONS_PER_ACCOUNT = 5;
/** A session that is not polled for this long ends (its events too, as long after their write). */
export const LISTEN_IDLE_SECONDS = 300;
/** The longest a poll waits for an event (API Gateway ends a REST integration at 29 s). */
export const LISTEN_MAX_WAIT_SECONDS = 20;
/**
 * How often a waiting poll reads the session's events again where nothing wakes it (AWS: the fan-out runs in
 * another function): one Query each, so at most 20 per poll.
 */
export const LISTEN_READ_INTERVAL_MS = 1_000;
/**
 * Where the fan-out wakes a waiting poll (the local runtime: one process), the poll reads when an event is put on
 * its session and otherwise only this often, in case a write came from elsewhere (a 20 s poll: 2 reads, not 21).
 */
export const LISTEN_FALLBACK_READ_MS = 10_000;
/**
 * The Retry-After of a poll refused for the plan's open polls: the open ones answer within LISTEN_MAX_WAIT_SECONDS,
 * so asking again sooner would mostly be refused again (the CLI honours it). A thousand refused polls asking again
 * each second would be a request flood of their own.
 */
export const LISTEN_POLL_RETRY_SECONDS = LISTEN_MAX_WAIT_SECONDS;
/** The most events one poll returns (the CLI asks again at once when a page is full). */
export const LISTEN_PAGE_SIZE = 100;
/**
 * A poll returns only events written at least this long ago. An event's cursor is its write time; a write that
 * was slower than a concurrent one lands after it, and a reader that had already passed it would skip it. Holding
 * back the newest second lets every write that lands within a second of its stamp be read in cursor order.
 */
export const LISTEN_SETTLE_MS = 1_000;

export interface ListenFilter {
  /** The event types the session takes; null: every type. */
  readonly events: readonly EventType[] | null;
}

/** Whether a session takes an event of this type. */
export const takes = (session: ListenFilter, type: string): boolean =>
  session.events === null || (session.events as readonly string[]).includes(type);

/** Epoch seconds at which a session polled (or created) at `nowMs` ends, unless polled again. */
export const idleExpiry = (nowMs: number): number => Math.floor(nowMs / 1000) + LISTEN_IDLE_SECONDS;

/** Whether a record with this expiry (epoch seconds) is still live at `nowMs` (DynamoDB TTL deletes lazily). */
export const isLive = (expiresAt: number, nowMs: number): boolean => expiresAt * 1000 > nowMs;

/** An event's position in its session: its write time (13 digits of epoch ms), then its id, so it sorts by both. */
export const listenCursor = (writtenAtMs: number, eventId: string): string =>
  `${String(writtenAtMs).padStart(13, '0')}#${eventId}`;

/** The bound below which every cursor is settled at `nowMs`: those written LISTEN_SETTLE_MS ago or earlier. */
export const settledBefore = (nowMs: number): string =>
  String(Math.max(0, nowMs - LISTEN_SETTLE_MS + 1)).padStart(13, '0');

/** A cursor as a poll's `after` may give it. */
export const LISTEN_CURSOR_PATTERN = /^\d{13}#[A-Za-z0-9_]{1,64}$/;

/**
 * The lowest bound worth reading at `nowMs`: an event is kept LISTEN_IDLE_SECONDS after its write, so everything
 * written before then has expired (a poll starts from here however old its `after`, never reading dead items).
 */
export const expiredBefore = (nowMs: number): string =>
  String(Math.max(0, nowMs - LISTEN_IDLE_SECONDS * 1000)).padStart(13, '0');

/** The later of two read bounds (cursors and time bounds compare as strings). */
export const laterBound = (a: string | null, b: string): string => (a !== null && a > b ? a : b);
