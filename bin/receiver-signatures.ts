// Signature checks of `npm run receiver`, written from docs/webhooks.md, "Verify a delivery" (the two headers) with
// node:crypto alone (not from Sendflow's signing code), so a receiver built from the docs can be compared.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** `valid`, `INVALID` (present, does not match), or `missing` (no such header on the request). */
export type Verdict = 'valid' | 'INVALID' | 'missing';

/** X-Service-Signature: hex HMAC-SHA256 of the raw body, keyed with the whole `whsec_…` string (UTF-8). */
export function checkServiceSignature(secret: string, rawBody: Buffer, header: string | undefined): Verdict {
  if (header === undefined) return 'missing';
  const expected = Buffer.from(createHmac('sha256', secret).update(rawBody).digest('hex'));
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given) ? 'valid' : 'INVALID';
}

/**
 * webhook-signature (Standard Webhooks): space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
 * entries, keyed with the base64-decoded part of the secret after `whsec_`; valid when any entry matches.
 */
export function checkStandardSignature(
  secret: string,
  rawBody: Buffer,
  headers: { id?: string; timestamp?: string; signature?: string },
): Verdict {
  if (headers.signature === undefined) return 'missing';
  if (headers.id === undefined || headers.timestamp === undefined) return 'INVALID';
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signed = Buffer.concat([Buffer.from(`${headers.id}.${headers.timestamp}.`), rawBody]);
  const expected = Buffer.from(createHmac('sha256', key).update(signed).digest('base64'));
  const matches = headers.signature.split(' ').some((entry) => {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return matches ? 'valid' : 'INVALID';
}
