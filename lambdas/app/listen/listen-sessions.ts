// Use cases of listen sessions (`npm run listen`): open one (at most LISTEN_SESSIONS_PER_ACCOUNT per account),
// pull its events by long-poll (which keeps it alive), end it. The CLI pulls: nothing ever calls the laptop.
import { LimitExceededError, NotFoundError } from '../../domain/errors';
import type { EventType } from '../../domain/events';
import { timeOrderedId } from '../../domain/ids';
import {
  expiredBefore,
  idleExpiry,
  LISTEN_PAGE_SIZE,
  LISTEN_READ_INTERVAL_MS,
  LISTEN_SESSIONS_PER_ACCOUNT,
  laterBound,
  settledBefore,
} from '../../domain/listen';
import { generateSigningSecret } from '../../domain/webhooks/signature';
import type { Clock, RandomBytes } from '../ports';
import { validEventTypes } from '../webhooks/manage-webhooks';
import type { Tenant } from '../webhooks/ports';
import type { ListenEvent, ListenSession, ListenSessionRepository } from './ports';

export interface ListenDeps {
  readonly listenSessions: ListenSessionRepository;
  readonly clock: Clock;
  readonly random: RandomBytes;
  /** Waits between a poll's reads (a fake clock's advance in tests). */
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * The longest a poll may wait, whatever it asks (SF_LISTEN_MAX_WAIT_SECONDS). On AWS 0: a waiting poll would
   * hold one of the API function's reserved executions, which every tenant's requests share, so polls answer at
   * once and the CLI polls again a second later.
   */
  readonly listenMaxWaitMs?: number;
  /** Event types this stage does not write yet (ManageWebhookDeps.heldEventTypes): naming one is a 422. */
  readonly heldEventTypes?: readonly EventType[];
}

/**
 * Opens a session taking `events` (every type when absent). The cap is checked before and, against concurrent
 * openings, after: ids are time-ordered, so racing requests agree on the order, and one past the cap removes its
 * own session and answers 422 limit_exceeded (as webhooks do).
 */
export async function createListenSession(
  deps: ListenDeps,
  tenant: Tenant,
  input: { readonly events?: readonly string[] },
): Promise<ListenSession> {
  const now = deps.clock.now();
  if ((await deps.listenSessions.listLive(tenant.accountId, now)).length >= LISTEN_SESSIONS_PER_ACCOUNT) {
    throw sessionLimit();
  }
  const session: ListenSession = {
    ...tenant,
    id: timeOrderedId('ls', now, deps.random),
    secret: generateSigningSecret(deps.random),
    events: input.events ? validEventTypes(input.events, deps.heldEventTypes) : null,
    createdAt: now,
    expiresAt: idleExpiry(now),
  };
  await deps.listenSessions.create(session);
  const ids = (await deps.listenSessions.listLive(tenant.accountId, deps.clock.now())).map((s) => s.id).sort();
  if (ids.indexOf(session.id) >= LISTEN_SESSIONS_PER_ACCOUNT) {
    await deps.listenSessions.delete(tenant, session.id);
    throw sessionLimit();
  }
  return session;
}

export interface PollResult {
  readonly events: ListenEvent[];
  /** The cursor to pass as `after` next: the last event's, or the one given when none came. */
  readonly next: string | null;
  readonly session: ListenSession;
}

/**
 * Returns the session's events after `after`, waiting up to `waitMs` for the first one: at most one read per
 * LISTEN_READ_INTERVAL_MS, each of at most LISTEN_PAGE_SIZE events. The poll keeps the session alive (its idle
 * expiry restarts); a session that ended, or is another tenant's, is 404.
 */
export async function pollListenEvents(
  deps: ListenDeps,
  tenant: Tenant,
  id: string,
  query: { readonly after: string | null; readonly waitMs: number },
): Promise<PollResult> {
  const started = deps.clock.now();
  const session = await deps.listenSessions.touch(tenant, id, idleExpiry(started), started);
  if (!session) throw new NotFoundError(`No live listen session with id ${id}.`);
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (;;) {
    const now = deps.clock.now();
    const events = await deps.listenSessions.readEvents(
      id,
      { after: laterBound(query.after, expiredBefore(now)), before: settledBefore(now), limit: LISTEN_PAGE_SIZE },
      now,
    );
    const left = started + Math.min(query.waitMs, deps.listenMaxWaitMs ?? query.waitMs) - deps.clock.now();
    if (events.length || left <= 0) {
      return { events, next: events.at(-1)?.cursor ?? query.after, session };
    }
    await sleep(Math.min(LISTEN_READ_INTERVAL_MS, left));
  }
}

/** Ends a session (Ctrl-C in the CLI); its events expire with their TTL. */
export async function endListenSession(
  deps: Pick<ListenDeps, 'listenSessions'>,
  tenant: Tenant,
  id: string,
): Promise<void> {
  if (!(await deps.listenSessions.delete(tenant, id))) throw new NotFoundError(`No listen session with id ${id}.`);
}

const sessionLimit = () =>
  new LimitExceededError(
    `An account has at most ${LISTEN_SESSIONS_PER_ACCOUNT} live listen sessions; end one (Ctrl-C) or let it expire first.`,
  );
