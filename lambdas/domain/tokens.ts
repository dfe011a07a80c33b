// Signed tokens for public links (one-click unsubscribe, contact confirmation, local file downloads): a base64url JSON payload
// and an HMAC-SHA256 over the token kind and that payload. Unguessable without the secret; a forged,
// altered or malformed token verifies as null.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type TokenKind = 'unsubscribe' | 'confirm' | 'download';

export function signToken(kind: TokenKind, payload: Record<string, string>, secret: string): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${mac(kind, body, secret)}`;
}

export function verifyToken(kind: TokenKind, token: string, secret: string): Record<string, string> | null {
  const match = /^([A-Za-z0-9_-]{1,2048})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return null;
  const [, body = '', signature = ''] = match;
  const expected = Buffer.from(mac(kind, body, secret));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  try {
    const payload: unknown = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return null;
    return Object.values(payload).every((v) => typeof v === 'string') ? (payload as Record<string, string>) : null;
  } catch {
    return null;
  }
}

function mac(kind: TokenKind, body: string, secret: string): string {
  return createHmac('sha256', secret).update(`${kind}.${body}`).digest('base64url');
}
