// Use cases of dashboard sign-in: issue a one-time link (admin CLI, `npm start`), redeem it for a session.
import type { Mode } from '../../domain/api-keys';
import {
  hashToken,
  isWellFormedToken,
  newToken,
  SESSION_TTL_MS,
  SIGN_IN_TTL_MS,
  toEpochSeconds,
} from '../../domain/dashboard/session';
import { NotFoundError } from '../../domain/errors';
import type { AccountRepository, Clock, RandomBytes } from '../ports';
import type { SessionRecord, SessionStore } from './ports';

export interface SignInDeps {
  readonly sessions: SessionStore;
  readonly accounts: AccountRepository;
  readonly clock: Clock;
  readonly random: RandomBytes;
}

/** Where the dashboard lives below the API's public base URL (which ends with the stage, `/v1`). */
export const DASHBOARD_PATH = '/dashboard';

/**
 * A one-time sign-in link for an account and mode: 32 random bytes, stored as a SHA-256 hash, valid 15 minutes.
 * `baseUrl` is the API's public URL with the stage (e.g. http://127.0.0.1:3000/v1).
 */
export async function createSignInLink(
  deps: SignInDeps,
  input: { accountId: string; mode: Mode; baseUrl: string },
): Promise<{ url: string; expiresAt: string }> {
  const account = await deps.accounts.get(input.accountId);
  if (!account) throw new NotFoundError(`No account ${input.accountId}.`);
  const token = newToken(deps.random);
  const expiresAtMs = deps.clock.now() + SIGN_IN_TTL_MS;
  await deps.sessions.putSignIn({
    kind: 'sign-in',
    hash: hashToken(token),
    accountId: account.id,
    mode: input.mode,
    expiresAt: toEpochSeconds(expiresAtMs),
  });
  const base = input.baseUrl.replace(/\/+$/, '');
  return {
    url: `${base}${DASHBOARD_PATH}/sign-in?token=${token}`,
    expiresAt: new Date(toEpochSeconds(expiresAtMs) * 1000).toISOString(),
  };
}

/**
 * What a sign-in link would sign in to (its account and mode), without using it: the sign-in page names it, so
 * nobody signs in to an account a forwarded link chose for them unawares. Null when it cannot be used.
 */
export async function previewSignIn(
  deps: SignInDeps,
  token: string | undefined,
): Promise<Pick<SessionRecord, 'accountId' | 'mode'> | null> {
  if (!isWellFormedToken(token)) return null;
  const link = await deps.sessions.peekSignIn(hashToken(token), deps.clock.now());
  return link ? { accountId: link.accountId, mode: link.mode } : null;
}

/**
 * Redeems a sign-in token for a new session (12 h), or returns null when the token is malformed, unknown,
 * expired or already used. The returned `token` goes into the cookie; only its hash is stored.
 */
export async function redeemSignIn(
  deps: SignInDeps,
  token: string | undefined,
): Promise<{ token: string; session: SessionRecord } | null> {
  if (!isWellFormedToken(token)) return null;
  const now = deps.clock.now();
  const link = await deps.sessions.redeemSignIn(hashToken(token), now);
  if (!link) return null;
  const sessionToken = newToken(deps.random);
  const session: SessionRecord = {
    kind: 'session',
    hash: hashToken(sessionToken),
    accountId: link.accountId,
    mode: link.mode,
    csrf: newToken(deps.random),
    expiresAt: toEpochSeconds(now + SESSION_TTL_MS),
  };
  await deps.sessions.putSession(session);
  return { token: sessionToken, session };
}
