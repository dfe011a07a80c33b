// API key format and hashing (spec §2.4, §5; DESIGN §3). Secrets exist only at creation; we keep hashes.
import { createHash, timingSafeEqual } from 'node:crypto';

export const MODES = ['live', 'test'] as const;
export type Mode = (typeof MODES)[number];

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const SECRET_LENGTH = 40;
const KEY_PATTERN = /^sf_(live|test)_([0-9A-Za-z]{32,128})$/;

/** Base62 text from random bytes, without modulo bias (bytes >= 248 are skipped). */
export function base62(randomBytes: (size: number) => Uint8Array, length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function generateApiKey(mode: Mode, randomBytes: (size: number) => Uint8Array): string {
  return `sf_${mode}_${base62(randomBytes, SECRET_LENGTH)}`;
}

/** The mode a well-formed key claims, or null when it is not a Sendflow key at all. */
export function parseApiKey(secret: string): { mode: Mode } | null {
  const match = KEY_PATTERN.exec(secret);
  return match ? { mode: match[1] as Mode } : null;
}

export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time comparison of two strings (hex digests here); compares their UTF-8 bytes exactly. */
export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** `Authorization: Bearer <key>` → the key, or null when the header is absent or not a bearer token. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer +(\S+)\s*$/i.exec(header);
  return match ? (match[1] ?? null) : null;
}

/** A short, non-secret hint shown in listings: the prefix and the last four characters. */
export function keyHint(secret: string): string {
  return `${secret.slice(0, 8)}…${secret.slice(-4)}`;
}
