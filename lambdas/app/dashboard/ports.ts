// The dashboard's storage port: one-time sign-in links and sessions, both kept only as token hashes.
import type { Mode } from '../../domain/api-keys';

export interface SignInRecord {
  readonly kind: 'sign-in';
  /** SHA-256 hex of the link's token. */
  readonly hash: string;
  readonly accountId: string;
  readonly mode: Mode;
  /** Epoch seconds (the table's TTL attribute). */
  readonly expiresAt: number;
}

export interface SessionRecord {
  readonly kind: 'session';
  /** SHA-256 hex of the cookie's token. */
  readonly hash: string;
  readonly accountId: string;
  readonly mode: Mode;
  /** The CSRF token every form of this session carries (random, not derived from the cookie). */
  readonly csrf: string;
  /** Epoch seconds. */
  readonly expiresAt: number;
}

/** Sign-in links and sessions (the manifest's `sessions` table, keyed by hash, TTL on expiresAt). */
export interface SessionStore {
  putSignIn(record: SignInRecord): Promise<void>;
  /**
   * Redeems a sign-in link once: marks it used with a conditional write and returns it, or null when it is
   * unknown, expired (at `nowMs`) or already used. Two concurrent redemptions: exactly one wins.
   */
  redeemSignIn(hash: string, nowMs: number): Promise<SignInRecord | null>;
  /** The sign-in link, without using it; null when unknown, expired (at `nowMs`) or already used. */
  peekSignIn(hash: string, nowMs: number): Promise<SignInRecord | null>;
  putSession(record: SessionRecord): Promise<void>;
  /** The session, or null when unknown or expired at `nowMs` (TTL deletes lazily). */
  getSession(hash: string, nowMs: number): Promise<SessionRecord | null>;
  /** Switches the session's mode; returns the updated session, or null when it no longer exists. */
  setMode(hash: string, mode: Mode, nowMs: number): Promise<SessionRecord | null>;
  deleteSession(hash: string): Promise<void>;
  /**
   * Ends every session and unused sign-in link of the account (admin `dashboard-revoke`); how many it removed.
   * No index by account: an operator's Scan of the table, never on a request path.
   */
  revokeAccount(accountId: string): Promise<number>;
  /**
   * Marks that every session of the account made at or before `atMs` has ended ("sign out everywhere" in the
   * dashboard): one item keyed by the account (not a token hash), kept until `expiresAt` (epoch seconds, the TTL),
   * by when every such session has expired anyway. A later mark replaces it.
   */
  signOutEverywhere(accountId: string, atMs: number, expiresAt: number): Promise<void>;
  /** When the account last signed out everywhere (epoch ms), or null (never, or the mark expired at `nowMs`). */
  signedOutEverywhereAt(accountId: string, nowMs: number): Promise<number | null>;
}
