// Delivery signatures (spec §6.4, DESIGN §4): X-Service-Signature over the raw body, and the Standard
// Webhooks headers over id.timestamp.body, which give receivers replay protection.
import { createHmac } from 'node:crypto';
import { type StoredSecrets, secretSetOf, signingSecrets } from './secret-set';

const SECRET_PREFIX = 'whsec_';

/** `whsec_` + base64 of 32 random bytes. */
export function generateSigningSecret(randomBytes: (size: number) => Uint8Array): string {
  return SECRET_PREFIX + Buffer.from(randomBytes(32)).toString('base64');
}

/** Hex HMAC-SHA256 of the raw body, keyed with the signing secret string (UTF-8). */
export function serviceSignature(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body, 'utf8').digest('hex');
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed with the base64-decoded secret. */
export function standardWebhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

/**
 * Every signature header of one `standard` attempt; the timestamp is fresh per attempt. `secrets` are the live
 * ones, newest first (two or more during a rotation's grace period): `webhook-signature` carries one `v1,` signature
 * per secret, space-separated, as Standard Webhooks defines, so either secret verifies. `X-Service-Signature`
 * holds one value: the oldest live secret's, so a receiver that has not switched yet keeps working until the
 * grace period ends (the grace period's promise); one that switched early verifies `webhook-signature`.
 */
export function signatureHeaders(
  secrets: readonly string[],
  eventId: string,
  body: string,
  nowMs: number,
): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  const oldest = secrets[secrets.length - 1] ?? '';
  return {
    'X-Service-Signature': serviceSignature(oldest, body),
    'X-Service-Timestamp': String(timestamp),
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => standardWebhookSignature(secret, eventId, timestamp, body)).join(' '),
  };
}

/**
 * The secrets that sign now, newest first: the current one, and each earlier one until its expiry (its secret set,
 * or the previous secret of a webhook rotated before sets were stored).
 */
export function liveSecrets(webhook: StoredSecrets, nowMs: number): string[] {
  return signingSecrets(secretSetOf(webhook), nowMs);
}
