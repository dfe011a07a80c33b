// Why a receiver's signature check fails: the headers and raw body it received, checked the way a receiver
// should, naming the first problem found (missing header, changed body, wrong secret, stale timestamp).
// Pure: the secret, the body Sendflow sent (when it still has it) and the time come in as arguments.
import { timingSafeEqual } from 'node:crypto';
import { serviceSignature, standardWebhookSignature } from './signature';

/** Receivers should refuse timestamps further than this from their clock (Standard Webhooks' default). */
export const TOLERANCE_SECONDS = 300;
/**
 * Signatures of one webhook-signature header that are checked: Sendflow sends at most two (one per live secret
 * during a rotation), so ten leave room for a receiver's own additions. The HTTP boundary refuses more with a
 * 422 (lambdas/handlers/http/webhooks.ts); here any beyond are ignored, so the work stays bounded either way.
 */
export const MAX_CHECKED_SIGNATURES = 10;

export interface SignatureCheckInput {
  /** The request headers as received (any casing). */
  readonly headers: Readonly<Record<string, string>>;
  /** The raw body as received. */
  readonly body: string;
  /** The webhook's live signing secrets, newest first (two during a rotation's grace period). */
  readonly secrets: readonly string[];
  /** A secret rotated out (its grace period over): a signature made with it is named as such. */
  readonly retiredSecret?: string;
  /** The body Sendflow sent for the delivery the headers name, when it is still in the log. */
  readonly sentBody?: string;
  readonly nowMs: number;
}

export interface SignatureDiagnosis {
  readonly valid: boolean;
  readonly diagnosis: string;
}

export function checkSignature(input: SignatureCheckInput): SignatureDiagnosis {
  const headers = lowerCased(input.headers);
  if (headers['webhook-signature'] !== undefined || headers['webhook-id'] !== undefined) {
    return checkStandard(input, headers);
  }
  if (headers['x-service-signature'] !== undefined) return checkService(input, headers);
  return invalid(
    'header missing: neither webhook-signature (Standard Webhooks) nor X-Service-Signature is present. Pass the ' +
      'headers exactly as your endpoint received them.',
  );
}

function checkStandard(input: SignatureCheckInput, headers: Record<string, string>): SignatureDiagnosis {
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    if (!headers[name]) return invalid(`header missing: ${name}. Standard Webhooks signs id, timestamp and body.`);
  }
  const id = headers['webhook-id'] as string;
  const timestamp = headers['webhook-timestamp'] as string;
  if (!/^\d{1,12}$/.test(timestamp)) return invalid('webhook-timestamp is not a Unix time in whole seconds.');
  const seconds = Number(timestamp);
  const given = listedSignatures(headers['webhook-signature'] as string);
  // One HMAC per (secret, body), whatever the number of listed signatures: each is compared against it.
  const expected = memoized((secret, body) => standardWebhookSignature(secret, id, seconds, body));
  const signedWith = (secret: string, body: string) => {
    const signature = expected(secret, body);
    return given.some((candidate) => same(candidate, signature));
  };
  const signs = (body: string) => input.secrets.some((secret) => signedWith(secret, body));
  if (!signs(input.body)) return mismatch(input, signs, (secret) => signedWith(secret, input.body));
  return fresh(seconds, input.nowMs, 'webhook-timestamp');
}

function checkService(input: SignatureCheckInput, headers: Record<string, string>): SignatureDiagnosis {
  const given = (headers['x-service-signature'] as string).trim().toLowerCase();
  const expected = memoized(serviceSignature);
  const signedWith = (secret: string, body: string) => same(given, expected(secret, body));
  const signs = (body: string) => input.secrets.some((secret) => signedWith(secret, body));
  if (!signs(input.body)) return mismatch(input, signs, (secret) => signedWith(secret, input.body));
  const timestamp = headers['x-service-timestamp'];
  if (timestamp === undefined) return invalid('header missing: X-Service-Timestamp (needed to refuse replays).');
  if (!/^\d{1,12}$/.test(timestamp)) return invalid('X-Service-Timestamp is not a Unix time in whole seconds.');
  return fresh(Number(timestamp), input.nowMs, 'X-Service-Timestamp');
}

/** The signature does not match: say whether the body changed, the secret was rotated out, or it is wrong. */
function mismatch(
  input: SignatureCheckInput,
  signs: (body: string) => boolean,
  signedWith: (secret: string) => boolean,
): SignatureDiagnosis {
  const sent = input.sentBody;
  if (sent !== undefined && input.body !== sent) {
    if (signs(sent)) {
      return invalid(
        sameJson(input.body, sent)
          ? 'body changed: it is the JSON Sendflow sent, re-serialised (spacing, key order or escapes differ). ' +
              'Verify the raw bytes as received, before any JSON parsing.'
          : 'body changed: it differs from the body Sendflow sent for this delivery. Verify the raw bytes as received.',
      );
    }
  }
  if (sent === undefined) {
    // No stored body (an old delivery, or not one of ours): the compact re-serialisation is the usual culprit.
    const compact = compactJson(input.body);
    if (compact !== undefined && compact !== input.body && signs(compact)) {
      return invalid(
        'body changed: it is re-serialised JSON (the signature matches the compact form Sendflow sends). Verify ' +
          'the raw bytes as received, before any JSON parsing.',
      );
    }
  }
  if (input.retiredSecret !== undefined && signedWith(input.retiredSecret)) {
    return invalid(
      'signed with a rotated-out secret: the signature was made with the previous signing secret, whose grace ' +
        'period is over. Use the current secret (from the rotation) and ask for a retry of the delivery.',
    );
  }
  return invalid(
    sent === undefined || input.body === sent
      ? "wrong secret: the signature does not match this body with the webhook's signing secret. Check the secret " +
          'your endpoint uses (the whole whsec_… string), and that the request is from this webhook.'
      : 'signature mismatch: the body differs from what Sendflow sent and the signature matches neither.',
  );
}

function fresh(seconds: number, nowMs: number, header: string): SignatureDiagnosis {
  const skew = Math.round(nowMs / 1000) - seconds;
  if (Math.abs(skew) > TOLERANCE_SECONDS) {
    const when = skew > 0 ? `${skew} s old` : `${-skew} s in the future`;
    return invalid(
      `timestamp outside the ${TOLERANCE_SECONDS / 60}-minute tolerance: ${header} is ${when}. A replayed ` +
        'request, or a clock that is off: receivers should refuse it.',
    );
  }
  return { valid: true, diagnosis: 'valid: the signature matches the body and the timestamp is recent.' };
}

function invalid(diagnosis: string): SignatureDiagnosis {
  return { valid: false, diagnosis };
}

/** The header's space-separated signatures, the first MAX_CHECKED_SIGNATURES of them. */
export function listedSignatures(header: string): string[] {
  return header.split(' ').filter(Boolean).slice(0, MAX_CHECKED_SIGNATURES);
}

/**
 * A signing function computed once per (secret, body): the diagnosis asks about the same pair several times
 * (received body, stored body, compact form, retired secret), and a 256 KB HMAC is the request's main cost.
 */
function memoized(sign: (secret: string, body: string) => string): (secret: string, body: string) => string {
  const bySecret = new Map<string, Map<string, string>>();
  return (secret, body) => {
    const byBody = bySecret.get(secret) ?? new Map<string, string>();
    bySecret.set(secret, byBody);
    const known = byBody.get(body);
    if (known !== undefined) return known;
    const signature = sign(secret, body);
    byBody.set(body, signature);
    return signature;
  };
}

/** Constant-time comparison of two signatures. */
function same(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

function lowerCased(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  return out;
}

function compactJson(body: string): string | undefined {
  try {
    return JSON.stringify(JSON.parse(body));
  } catch {
    return undefined;
  }
}

function sameJson(a: string, b: string): boolean {
  const parsedA = compactJson(a);
  const parsedB = compactJson(b);
  if (parsedA === undefined || parsedB === undefined) return false;
  return canonical(JSON.parse(parsedA)) === canonical(JSON.parse(parsedB));
}

/** JSON with object keys sorted, so key order does not count as a difference. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
