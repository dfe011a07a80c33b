// What a contact confirmation link says, and whether it still holds: it names the account, mode and contact,
// the contact's creation (so a contact deleted and re-created with the same address, which gets the same id,
// does not answer to the old link), and when it expires, 7 days after it was issued.
export const CONFIRMATION_TTL_SECONDS = 7 * 24 * 60 * 60;

export interface ConfirmationTarget {
  readonly accountId: string;
  readonly mode: string;
  readonly id: string;
  /** ISO 8601: tells this contact apart from an earlier one with the same id. */
  readonly createdAt: string;
}

/** The token claims for a contact's link issued at `nowMs` (every value a string, as tokens carry). */
export function confirmationClaims(contact: ConfirmationTarget, nowMs: number): Record<string, string> {
  return {
    a: contact.accountId,
    m: contact.mode,
    c: contact.id,
    i: contact.createdAt,
    x: String(Math.floor(nowMs / 1000) + CONFIRMATION_TTL_SECONDS),
  };
}

export type ConfirmationClaims =
  | {
      readonly kind: 'valid';
      readonly accountId: string;
      readonly mode: string;
      readonly id: string;
      readonly createdAt: string;
    }
  | { readonly kind: 'expired' }
  | { readonly kind: 'invalid' };

/**
 * Reads verified claims at `nowMs`: invalid without account, mode and contact; expired at or past `x`, or
 * without one (links issued before links expired).
 */
export function readConfirmation(claims: Readonly<Record<string, string>> | null, nowMs: number): ConfirmationClaims {
  if (!claims?.a || !claims.m || !claims.c) return { kind: 'invalid' };
  const expiresAt = Number(claims.x);
  if (!claims.x || !Number.isFinite(expiresAt) || nowMs >= expiresAt * 1000 || !claims.i) return { kind: 'expired' };
  return { kind: 'valid', accountId: claims.a, mode: claims.m, id: claims.c, createdAt: claims.i };
}
