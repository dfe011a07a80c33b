// Use cases of a dashboard session: who is signed in (as an API principal), switch mode, sign out.
import type { Mode } from '../../domain/api-keys';
import {
  csrfMatches,
  hashToken,
  isWellFormedToken,
  SESSION_SCOPES,
  SESSION_TTL_MS,
  sessionKeyId,
  toEpochSeconds,
} from '../../domain/dashboard/session';
import type { AccountRepository, Clock, Principal } from '../ports';
import type { SessionRecord, SessionStore } from './ports';

export interface SessionDeps {
  readonly sessions: SessionStore;
  readonly accounts: AccountRepository;
  readonly clock: Clock;
}

export interface SignedIn {
  readonly session: SessionRecord;
  /** The session standing in for a key of its account and mode: every scope, the account's current plan. */
  readonly principal: Principal;
  /** The account's address for notices, read with the account (the settings page shows it); null: none. */
  readonly noticeEmail: string | null;
}

/** The session behind a cookie token, or null (no cookie, unknown, expired, or its account is gone). */
export async function currentSession(deps: SessionDeps, token: string | undefined): Promise<SignedIn | null> {
  if (!isWellFormedToken(token)) return null;
  const now = deps.clock.now();
  const session = await deps.sessions.getSession(hashToken(token), now);
  if (!session) return null;
  const [account, signedOutAt] = await Promise.all([
    deps.accounts.get(session.accountId),
    deps.sessions.signedOutEverywhereAt(session.accountId, now),
  ]);
  if (!account) return null;
  if (signedOutAt !== null && sessionStartedAt(session) <= signedOutAt) return null;
  return {
    session,
    principal: {
      accountId: account.id,
      keyId: sessionKeyId(session.hash),
      mode: session.mode,
      scopes: [...SESSION_SCOPES],
      plan: account.plan,
    },
    noticeEmail: account.noticeEmail ?? null,
  };
}

/** A state-changing request must carry the session's CSRF token. */
export function checkCsrf(session: SessionRecord, given: string | undefined): boolean {
  return csrfMatches(session.csrf, given);
}

export async function switchMode(deps: SessionDeps, session: SessionRecord, mode: Mode): Promise<void> {
  await deps.sessions.setMode(session.hash, mode, deps.clock.now());
}

export async function signOut(deps: Pick<SessionDeps, 'sessions'>, session: SessionRecord): Promise<void> {
  await deps.sessions.deleteSession(session.hash);
}

/**
 * When a session began, as its expiry tells (sessions last SESSION_TTL_MS; expiry is kept in whole seconds, so
 * this is up to a second early: a session made within a second after a sign-out everywhere ends with it, never
 * one made before it survives).
 */
const sessionStartedAt = (session: SessionRecord) => session.expiresAt * 1000 - SESSION_TTL_MS;

/**
 * Signs the account out of every dashboard session, in every browser and both modes: one write (a mark every
 * session check reads beside the account), no scan; this session is deleted at once. Sign-in links not yet used
 * still work (they last 15 minutes and make a new session).
 */
export async function signOutEverywhere(
  deps: Pick<SessionDeps, 'sessions' | 'clock'>,
  session: SessionRecord,
): Promise<void> {
  const now = deps.clock.now();
  await deps.sessions.signOutEverywhere(session.accountId, now, toEpochSeconds(now + SESSION_TTL_MS) + 1);
  await deps.sessions.deleteSession(session.hash);
}
