// Use cases of listen sessions (`npm run listen`): open one (at most LISTEN_SESSIONS_PER_ACCOUNT per account),
// pull its events by long-poll (which keeps it alive), end it. The CLI pulls: nothing ever calls the laptop.
// A poll counts toward its account like any request: its plan caps the polls open at once, its store work runs in
// the account's slots, and while it waits it reads nothing unless the fan-out wakes it (where one can).
import { LimitExceededError, NotFoundError, RateLimitedError } from '../../domain/errors';
import { timeOrderedId } from '../../domain/ids';
import {
  expiredBefore,
  idleExpiry,
  LISTEN_FALLBACK_READ_MS,
  LISTEN_PAGE_SIZE,
  LISTEN_POLL_RETRY_SECONDS,
  LISTEN_READ_INTERVAL_MS,
  LISTEN_SESSIONS_PER_ACCOUNT,
  LISTEN_SETTLE_MS,
  laterBound,
  settledBefore,
} from '../../domain/listen';
import { PLANS, type PlanName } from '../../domain/plans';
import { generateSigningSecret } from '../../domain/webhooks/signature';
import type { AccountSlots, Clock, RandomBytes } from '../ports';
import { validEventTypes } from '../webhooks/manage-webhooks';
import type { Tenant } from '../webhooks/ports';
import type { ListenEvent, ListenSession, ListenSessionRepository, ListenSignals, OpenPolls } from './ports';

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
  /** Wakes a waiting poll when an event is put on its session (locally); absent: it reads once a second. */
  readonly listenSignals?: ListenSignals;
  /** Event types this stage holds back (ManageWebhookDeps.withheldEventTypes): refused in `events`. */
  readonly withheldEventTypes?: readonly string[];
  /** The account's open polls, capped by its plan (PLANS[plan].listenPolls); absent: not capped. */
  readonly openPolls?: OpenPolls;
  /**
   * The account's share of the runtime, whose slot the poll's request holds (the local gateway): a waiting poll
   * gives it back, and takes one again, in turn, before it reads. Absent: nothing to give back.
   */
  readonly accountSlots?: Pick<AccountSlots, 'outside'>;
}

/** Who polls: the tenant, and its plan (which caps its open polls). */
export interface PollCaller extends Tenant {
  readonly plan: PlanName;
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
    events: input.events ? validEventTypes(input.events, deps.withheldEventTypes) : null,
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
 * Returns the session's events after `after`, waiting up to `waitMs` for the first one, each read of at most
 * LISTEN_PAGE_SIZE events. With signals (the local runtime) a waiting poll reads when an event is put on its
 * session (once it has settled) and otherwise every LISTEN_FALLBACK_READ_MS; without, at most one read per
 * LISTEN_READ_INTERVAL_MS. Past the plan's open polls: 429 listen_polls_exceeded. The poll keeps the session alive
 * (its idle expiry restarts); a session that ended, or is another tenant's, is 404.
 */
export async function pollListenEvents(
  deps: ListenDeps,
  caller: PollCaller,
  id: string,
  query: { readonly after: string | null; readonly waitMs: number },
): Promise<PollResult> {
  const limit = PLANS[caller.plan].listenPolls;
  const end = deps.openPolls ? deps.openPolls.tryOpen(caller.accountId, limit) : () => {};
  if (!end) throw pollLimitError(limit, caller.plan);
  try {
    return await poll(deps, { accountId: caller.accountId, mode: caller.mode }, id, query);
  } finally {
    end();
  }
}

/** A poll past the plan's open polls: 429 listen_polls_exceeded, asked again after LISTEN_POLL_RETRY_SECONDS. */
export function pollLimitError(limit: number, plan: PlanName): RateLimitedError {
  return new RateLimitedError(
    `An account has at most ${limit} open listen polls at once (plan ${plan}); wait for one to answer, or end a session.`,
    LISTEN_POLL_RETRY_SECONDS,
    'listen_polls_exceeded',
  );
}

async function poll(
  deps: ListenDeps,
  tenant: Tenant,
  id: string,
  query: { readonly after: string | null; readonly waitMs: number },
): Promise<PollResult> {
  const started = deps.clock.now();
  const session = await deps.listenSessions.touch(tenant, id, idleExpiry(started), started);
  if (!session) throw new NotFoundError(`No live listen session with id ${id}.`);
  const pause = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  // A waiting poll holds none of the account's slots: its reads take one, in turn with the account's requests.
  const away = <T>(task: () => Promise<T>): Promise<T> =>
    deps.accountSlots ? deps.accountSlots.outside(tenant.accountId, task) : task();
  const sleep = (ms: number) => away(() => pause(ms));
  const deadline = started + Math.min(query.waitMs, deps.listenMaxWaitMs ?? query.waitMs);
  const answer = (events: ListenEvent[]): PollResult => ({
    events,
    next: events.at(-1)?.cursor ?? query.after,
    session,
  });
  for (;;) {
    const now = deps.clock.now();
    const events = await deps.listenSessions.readEvents(
      id,
      { after: laterBound(query.after, expiredBefore(now)), before: settledBefore(now), limit: LISTEN_PAGE_SIZE },
      now,
    );
    let left = deadline - deps.clock.now();
    if (events.length || left <= 0) return answer(events);
    if (!deps.listenSignals) {
      await sleep(Math.min(LISTEN_READ_INTERVAL_MS, left));
      continue;
    }
    // An event put on the session after this read's settled bound was not in it: it wakes the poll (at once if it
    // came already), which reads once the event has settled. Nothing coming: one read per fallback interval.
    const signals = deps.listenSignals;
    const woken = await away(() => signals.wait(id, now - LISTEN_SETTLE_MS, Math.min(LISTEN_FALLBACK_READ_MS, left)));
    left = deadline - deps.clock.now();
    if (woken === null) {
      if (left <= 0) return answer([]);
      continue;
    }
    const settles = woken + LISTEN_SETTLE_MS - deps.clock.now();
    if (settles > 0) await sleep(Math.min(settles, Math.max(0, left)));
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
