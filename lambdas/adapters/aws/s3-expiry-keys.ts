// Which lifecycle rule deletes an object is said by its key, not by an object tag: S3 bills $0.01 per 10,000 tags
// a month, about 1% of SES's price per email, and a key prefix nothing. An object that expires within the stage's
// email retention from now (an email sent at once, a received one) goes under RETENTION_PREFIX, which the bucket
// deletes after the retention; any other (a scheduled email's, kept until its send plus the retention) keeps its
// plain key, deleted after the retention plus the longest schedule (lib/data-stack.ts). A reader that does not know
// which tries the retention key first (most objects), then the plain one (scheduled emails', and every object
// written before the prefix, tagged or not). No SDK here: lib/ names the prefix in lifecycle rules and policies.

/**
 * The tag the bucket's one-day lifecycle rule selects (a short-lived file's: a test-mode email's attachment, kept a
 * day), with RETENTION_PREFIX: such a file expires within the retention, so its key is the retention key.
 */
export const EXPIRY_TAG = 'sendflow-expiry';
export const SHORT_LIVED = 'short';

/** The prefix the bucket's retention rule selects, before the object's plain key (`retention/emails/<id>/…`). */
export const RETENTION_PREFIX = 'retention/';

/**
 * The key to put an object expiring at `expiresAt` (epoch seconds) under: under RETENTION_PREFIX when that is
 * within `retentionSeconds` from `nowMs`; the plain key otherwise, and always when no retention is configured.
 */
export function expiryKey(key: string, expiresAt: number, nowMs: number, retentionSeconds?: number): string {
  if (retentionSeconds === undefined) return key;
  return expiresAt <= Math.floor(nowMs / 1000) + retentionSeconds ? `${RETENTION_PREFIX}${key}` : key;
}

/** Where a reader looks for `key`, in order: the retention key (most objects), then the plain one. */
export const readKeys = (key: string): readonly [string, string] => [`${RETENTION_PREFIX}${key}`, key];
