// A webhook's signing secrets (docs/webhooks.md, "Secret rotation"): the current one, and the earlier
// ones still in their grace period. Pure: what a rotation makes of a set, which secrets sign at a time, and how a
// set is stored so that the previous release, which knows only `secret` and one `previousSecret`, reads it too.

/** An earlier secret and when it stops signing (ISO 8601). */
export interface RetiringSecret {
  readonly secret: string;
  readonly expiresAt: string;
}

export interface SecretSet {
  /** Signs every `standard` delivery. */
  readonly current: string;
  /**
   * Earlier secrets, newest first: each signs until its `expiresAt`. The first is the one the last rotation
   * replaced, kept even once expired (so a signature check can say "that secret was retired").
   */
  readonly previous: readonly RetiringSecret[];
}

/** The stored fields: `secretSet` (this release) and the pair the previous release reads. */
export interface StoredSecrets {
  readonly secret: string;
  readonly previousSecret?: string;
  readonly previousSecretExpiresAt?: string;
  /**
   * The whole set; trusted only while `current` is the item's `secret`: a rotation by the previous release
   * (which writes the pair alone) replaces `secret`, and the set it left behind is then ignored.
   */
  readonly secretSet?: SecretSet;
}

/** Earlier secrets signing at once, at most (each adds a `v1,` signature of 47 characters to every delivery). */
export const MAX_PREVIOUS_SECRETS = 10;

/** The set a webhook holds: its `secretSet` when current, else the pair (never rotated, or by the last release). */
export function secretSetOf(stored: StoredSecrets): SecretSet {
  if (stored.secretSet && stored.secretSet.current === stored.secret) return stored.secretSet;
  const { previousSecret, previousSecretExpiresAt } = stored;
  return {
    current: stored.secret,
    previous: previousSecret
      ? [{ secret: previousSecret, expiresAt: previousSecretExpiresAt ?? new Date(0).toISOString() }]
      : [],
  };
}

const live = (entry: RetiringSecret, nowMs: number) => Date.parse(entry.expiresAt) > nowMs;

/** The secrets that sign now, newest first: the current one, then every earlier one until its expiry. */
export function signingSecrets(set: SecretSet, nowMs: number): string[] {
  return [set.current, ...set.previous.filter((entry) => live(entry, nowMs)).map((entry) => entry.secret)];
}

/** The newest earlier secret no longer signing, if any (a signature check's "retired secret" hint). */
export function retiredSecret(set: SecretSet, nowMs: number): string | null {
  return set.previous.find((entry) => !live(entry, nowMs))?.secret ?? null;
}

export type Rotation = { ok: true; set: SecretSet } | { ok: false; reason: 'too_many_secrets' };

/**
 * A rotation to `next`: every secret of `set` keeps signing until `graceSeconds` from now at most (its own expiry
 * if sooner), so grace 0 revokes every one of them at once. Refused when more than MAX_PREVIOUS_SECRETS would
 * still sign.
 */
export function rotateSecretSet(set: SecretSet, next: string, nowMs: number, graceSeconds: number): Rotation {
  const until = nowMs + graceSeconds * 1000;
  const cap = (expiresAt: string) => new Date(Math.min(Date.parse(expiresAt), until)).toISOString();
  const replaced: RetiringSecret = { secret: set.current, expiresAt: new Date(until).toISOString() };
  const stillSigning = set.previous
    .filter((entry) => live(entry, nowMs))
    .map((entry) => ({ secret: entry.secret, expiresAt: cap(entry.expiresAt) }))
    .filter((entry) => live(entry, nowMs));
  const previous = [replaced, ...stillSigning];
  if (previous.filter((entry) => live(entry, nowMs)).length > MAX_PREVIOUS_SECRETS) {
    return { ok: false, reason: 'too_many_secrets' };
  }
  return { ok: true, set: { current: next, previous } };
}

/** How a set is written: the set, and the pair the previous release signs with (current and the one replaced). */
export function storedSecrets(set: SecretSet): Required<Pick<StoredSecrets, 'secret' | 'secretSet'>> & StoredSecrets {
  const [replaced] = set.previous;
  return {
    secret: set.current,
    ...(replaced ? { previousSecret: replaced.secret, previousSecretExpiresAt: replaced.expiresAt } : {}),
    secretSet: set,
  };
}

/** When the secrets a rotation replaced stop signing (ISO 8601), or null when they stopped at once. */
export function replacedUntil(set: SecretSet, nowMs: number): string | null {
  const [replaced] = set.previous;
  return replaced && live(replaced, nowMs) ? replaced.expiresAt : null;
}
