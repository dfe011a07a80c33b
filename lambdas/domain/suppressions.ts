// The suppression list's rules (docs/sending.md, "Suppression list"), pure: why an address is suppressed in Sendflow's
// words (`reason`) and in Resend's (`origin`), a suppression's id (its address, reversibly: no index is needed to
// find it), and the suppression.added / suppression.removed events.
import type { Mode } from './api-keys';
import { newEvent, type SendflowEvent } from './events';

/** Why Sendflow suppressed an address: a hard bounce, a complaint, a one-click unsubscribe, or by hand (API). */
export const SUPPRESSION_REASONS = ['hard_bounce', 'complaint', 'unsubscribe', 'manual'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

/** Resend's origins. An unsubscribe is `manual` there (the recipient's own act), with `reason` telling which. */
export const SUPPRESSION_ORIGINS = ['bounce', 'complaint', 'manual'] as const;
export type SuppressionOrigin = (typeof SUPPRESSION_ORIGINS)[number];

export function originOf(reason: SuppressionReason): SuppressionOrigin {
  if (reason === 'hard_bounce') return 'bounce';
  if (reason === 'complaint') return 'complaint';
  return 'manual';
}

/** The reasons an origin stands for (a listing's `?origin=` filter). */
export function reasonsOf(origin: SuppressionOrigin): SuppressionReason[] {
  return SUPPRESSION_REASONS.filter((reason) => originOf(reason) === origin);
}

const ID_PREFIX = 'sup_';

/**
 * A suppression's id: `sup_` and its address in base64url. The same address has the same id in every account
 * (an id is only ever looked up within the caller's account and mode), and its address is read back from it.
 */
export function suppressionId(address: string): string {
  return ID_PREFIX + Buffer.from(address, 'utf8').toString('base64url');
}

/** The address an id names, or null when it is not a suppression id. */
export function addressOfSuppressionId(id: string): string | null {
  if (!id.startsWith(ID_PREFIX)) return null;
  const body = id.slice(ID_PREFIX.length);
  if (!/^[A-Za-z0-9_-]{4,400}$/.test(body)) return null;
  const address = Buffer.from(body, 'base64url').toString('utf8');
  // Only the canonical encoding names an address (no two ids for one suppression).
  return suppressionId(address) === id && address.includes('@') ? address : null;
}

/** A suppression as its events carry it (Resend's fields, and Sendflow's `reason`). */
export interface SuppressionFacts {
  readonly address: string;
  readonly reason: SuppressionReason;
  /** ISO 8601: when it was added. */
  readonly createdAt: string;
  /** The email that caused it (a bounce, complaint or unsubscribe); absent when added by hand. */
  readonly emailId?: string;
}

/** Resend's fields of a suppression (its API objects and its events' data), plus Sendflow's `reason`. */
export function suppressionData(suppression: SuppressionFacts) {
  return {
    id: suppressionId(suppression.address),
    email: suppression.address,
    origin: originOf(suppression.reason),
    reason: suppression.reason,
    source_id: suppression.emailId ?? null,
    created_at: suppression.createdAt,
  };
}

/**
 * suppression.added or suppression.removed: an account event. `at` is when it happened; the id derives from
 * `seed` (a bounce's event id, a request's randomness), so a redelivered bounce records the same event.
 */
export function suppressionEvent(
  type: 'suppression.added' | 'suppression.removed',
  tenant: { readonly accountId: string; readonly mode: Mode },
  suppression: SuppressionFacts,
  at: number,
  random: (size: number) => Uint8Array,
): SendflowEvent {
  return newEvent(
    { type, accountId: tenant.accountId, mode: tenant.mode, at, data: suppressionData(suppression) },
    random,
  );
}
