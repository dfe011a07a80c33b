// Dashboard sign-in and session rules: token shapes, lifetimes, hashing and the CSRF comparison. Pure.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Mode } from '../api-keys';
import { SCOPES, type Scope } from '../scopes';

/** A sign-in link works for 15 minutes, once. */
export const SIGN_IN_TTL_MS = 15 * 60 * 1000;
/** A session lasts 12 hours from sign-in (no sliding renewal: a stolen cookie dies on schedule). */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** 32 random bytes, base64url: 43 characters. */
export const TOKEN_BYTES = 32;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newToken(random: (size: number) => Uint8Array): string {
  return Buffer.from(random(TOKEN_BYTES)).toString('base64url');
}

/** Whether a string can be a token we issued (cheap refusal before any storage read). */
export function isWellFormedToken(token: string | undefined | null): token is string {
  return typeof token === 'string' && TOKEN_PATTERN.test(token);
}

/** Tokens are stored only as this SHA-256 hex digest. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Epoch seconds, the unit of the TTL attribute. */
export const toEpochSeconds = (ms: number) => Math.floor(ms / 1000);

export function isExpired(expiresAtSeconds: number, nowMs: number): boolean {
  return expiresAtSeconds * 1000 <= nowMs;
}

/** Constant-time comparison of the form's CSRF token with the session's. */
export function csrfMatches(expected: string, given: string | undefined): boolean {
  if (!given) return false;
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A session acts with every scope (spec §5.5: keys made in the dashboard carry every scope). */
export const SESSION_SCOPES: readonly Scope[] = SCOPES;

/** The key id a session's requests carry in logs and in the principal. */
export const sessionKeyId = (sessionHash: string) => `session:${sessionHash.slice(0, 16)}`;

/** A principal of a dashboard session (only sessionKeyId makes such key ids; the authorizer never does). */
export const isSessionKeyId = (keyId: string) => keyId.startsWith('session:');

/**
 * The dashboard's own request budget: pages and actions an account's dashboard serves a second, across its
 * sessions and modes. Each makes 1 to 11 in-process API calls (the webhook list: the list and 10 health
 * samples), which do not count against the account's API rate limit (browsing never spends what its keys
 * need), so this bounds them instead.
 */
export const DASHBOARD_REQUESTS_PER_SECOND = 10;

/** The rate-limit window subject of an account's dashboard (the API's are `account:<id>`). */
export const dashboardSubject = (accountId: string) => `dashboard:${accountId}`;

export interface SessionView {
  readonly accountId: string;
  readonly mode: Mode;
  readonly csrf: string;
  readonly expiresAt: number;
}
