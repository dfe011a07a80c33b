// Use cases of a dashboard session: who is signed in (as an API principal), switch mode, sign out.
import type { Mode } from '../../domain/api-keys';
import {
  csrfMatches,
  hashToken,
  isWellFormedToken,
  SESSION_SCOPES,
  sessionKeyId,
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
}

/** The session behind a cookie token, or null (no cookie, unknown, expired, or its account is gone). */
export async function currentSession(deps: SessionDeps, token: string | undefined): Promise<SignedIn | null> {
  if (!isWellFormedToken(token)) return null;
  const session = await deps.sessions.getSession(hashToken(token), deps.clock.now());
  if (!session) return null;
  const account = await deps.accounts.get(session.accountId);
  if (!account) return null;
  return {
    session,
    principal: {
      accountId: account.id,
      keyId: sessionKeyId(session.hash),
      mode: session.mode,
      scopes: [...SESSION_SCOPES],
      plan: account.plan,
    },
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
