// Identifiers: a type prefix and a time-ordered body (ULID-style: 10 chars of time, 16 of randomness),
// so that lexical order is creation order, which the delivery log's newest-first cursors rely on.

/** Crockford's base32 alphabet: no I, L, O, U; ids are lower-cased. */
export const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export function timeOrderedId(prefix: string, nowMs: number, randomBytes: (size: number) => Uint8Array): string {
  let rand = '';
  for (const byte of randomBytes(16)) rand += CROCKFORD[byte % 32];
  return `${prefix}_${idTime(nowMs)}${rand.toLowerCase()}`;
}

/** The time part of an id made at `ms` (10 lower-case characters): ids of later times sort after it. */
export function idTime(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`An id's time is a whole epoch ms, not ${ms}`);
  let time = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return time.toLowerCase();
}

/** When an id with `prefix` was made (epoch ms), read back from its time part; null when it carries none. */
export function timeOfId(id: string, prefix: string): number | null {
  const time = new RegExp(`^${prefix}_([0-9a-hjkmnp-tv-z]{10})`).exec(id)?.[1];
  if (!time) return null;
  let ms = 0;
  for (const char of time.toUpperCase()) ms = ms * 32 + CROCKFORD.indexOf(char);
  return ms;
}
