// What the API request log keeps of a request's and a response's body and query: secrets removed twice over (a
// denylist of field names, and a pattern check of every value for secret-looking strings whatever their field),
// email bodies cut and attachment content removed, then the whole fitted into a byte budget as valid JSON text.
// Pure: the recorder (app/api-requests) applies it before anything is stored.

/** What a removed secret is replaced with. */
export const REDACTED = '[redacted]';

/**
 * Field names whose value is a secret whatever it looks like, compared lower-cased without `_`, `-` or spaces.
 * Exact names (`key` is the secret in POST /api-keys' answer, `token` Resend's name for it), and suffixes below.
 */
const DENIED_NAMES = new Set([
  'key',
  'token',
  'secret',
  'password',
  'passwd',
  'passphrase',
  'apikey',
  'authorization',
  'proxyauthorization',
  'cookie',
  'setcookie',
  'privatekey',
  'credentials',
  'signature',
]);
const DENIED_SUFFIXES = ['secret', 'password', 'token', 'apikey', 'privatekey', 'passwd'];

/** Email content: kept as its first EMAIL_BODY_KEPT characters, enough to recognise it. */
const EMAIL_BODY_FIELDS = new Set(['html', 'text', 'amphtml']);
export const EMAIL_BODY_KEPT = 100;
/** Attachment and raw MIME content: never kept, only its length. */
const CONTENT_FIELDS = new Set(['content', 'raw']);

/**
 * Secret-looking values, under any field: Sendflow's keys and webhook signing secrets, Resend's keys, bearer
 * tokens, JWTs, AWS access key ids, PEM private keys, and the credential parameters of signed or tokened URLs
 * (a presigned download's signature, a sign-in link's token), whose value alone is removed.
 */
const SECRET_PATTERNS: readonly RegExp[] = [
  /\bsf_(?:test|live)_[A-Za-z0-9]{8,}/g,
  /\bwhsec_[A-Za-z0-9+/=_-]{8,}/g,
  /\bre_[A-Za-z0-9_]{16,}/g,
  /\bBearer\s+[A-Za-z0-9._~+/=-]+/gi,
  /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g,
  /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];
const URL_CREDENTIAL =
  /([?&](?:token|signature|sig|key|x-amz-signature|x-amz-credential|x-amz-security-token)=)[^&#\s"']+/gi;

const normal = (name: string) => name.toLowerCase().replace(/[\s_-]/g, '');

/** Whether a field of this name holds a secret (its value is removed whatever it is). */
export function isDeniedName(name: string): boolean {
  const n = normal(name);
  return DENIED_NAMES.has(n) || DENIED_SUFFIXES.some((suffix) => n.endsWith(suffix));
}

/** `text` with every secret-looking part replaced by REDACTED. */
export function redactText(text: string): string {
  let out = text.replace(URL_CREDENTIAL, `$1${REDACTED}`);
  for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, REDACTED);
  return out;
}

/** A JSON value with secrets removed, email bodies cut and attachment content dropped (a new value). */
/** Nesting kept: deeper values are replaced (a hostile body's depth never overflows the stack). */
export const DEPTH_KEPT = 32;

export function redactValue(value: unknown, name = '', depth = 0): unknown {
  if (name && isDeniedName(name)) return REDACTED;
  if (depth > DEPTH_KEPT && value !== null && typeof value === 'object') return '[nested too deep]';
  if (typeof value === 'string') {
    const n = normal(name);
    if (CONTENT_FIELDS.has(n)) return `[${value.length} characters removed]`;
    if (EMAIL_BODY_FIELDS.has(n) && value.length > EMAIL_BODY_KEPT)
      return `${redactText(value.slice(0, EMAIL_BODY_KEPT))}… (${value.length - EMAIL_BODY_KEPT} more characters)`;
    return redactText(value);
  }
  if (Array.isArray(value)) return value.map((item) => redactValue(item, name, depth + 1));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactValue(item, key, depth + 1)]));
  return value;
}

/** A request's query parameters as a query string, secrets removed; undefined when there are none. */
export function redactQuery(query: Readonly<Record<string, string>>): string | undefined {
  const entries = Object.entries(query);
  if (!entries.length) return undefined;
  return new URLSearchParams(
    entries.map(([name, value]): [string, string] => [name, isDeniedName(name) ? REDACTED : redactText(value)]),
  ).toString();
}

interface Shrink {
  readonly maxString: number;
  readonly maxItems: number;
  readonly maxDepth: number;
}

/** Ever smaller shapes of a body, tried in turn until one fits its budget. */
const SHRINKS: readonly Shrink[] = [
  { maxString: 2_000, maxItems: 50, maxDepth: 8 },
  { maxString: 200, maxItems: 10, maxDepth: 6 },
  { maxString: 60, maxItems: 4, maxDepth: 4 },
  { maxString: 20, maxItems: 2, maxDepth: 3 },
  { maxString: 8, maxItems: 1, maxDepth: 2 },
];

/** `value` with strings, lists and objects cut to `limits`, each cut saying how much was left out. */
function shrink(value: unknown, limits: Shrink, depth = 0): unknown {
  if (typeof value === 'string')
    return value.length > limits.maxString
      ? `${value.slice(0, limits.maxString)}… (${value.length - limits.maxString} more characters)`
      : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth >= limits.maxDepth) return Array.isArray(value) ? `[${value.length} items]` : '{…}';
  if (Array.isArray(value)) {
    const kept = value.slice(0, limits.maxItems).map((item) => shrink(item, limits, depth + 1));
    return value.length > limits.maxItems ? [...kept, `… ${value.length - limits.maxItems} more items`] : kept;
  }
  const entries = Object.entries(value);
  const keys = limits.maxItems * 3;
  const kept = entries.slice(0, keys).map(([key, item]) => [key, shrink(item, limits, depth + 1)]);
  if (entries.length > keys) kept.push(['…', `${entries.length - keys} more fields`]);
  return Object.fromEntries(kept);
}

/** Cuts `text` to at most `bytes` UTF-8 bytes without splitting a character. */
function cutBytes(text: string, bytes: number): string {
  if (Buffer.byteLength(text) <= bytes) return text;
  let end = Math.min(text.length, bytes);
  while (end > 0 && Buffer.byteLength(text.slice(0, end)) > bytes) end--;
  return text.slice(0, end);
}

/**
 * What the log stores of a body: `body` is the parsed JSON (or the raw text of a body that is not JSON),
 * redacted, then shrunk until its JSON text is at most `budget` bytes (a body of no shape fits: a string cut).
 * Undefined when there is no body.
 */
export function storedBody(body: unknown, budget: number): string | undefined {
  if (body === undefined || body === null || body === '') return undefined;
  const redacted = redactValue(body);
  const whole = JSON.stringify(redacted);
  if (Buffer.byteLength(whole) <= budget) return whole;
  for (const limits of SHRINKS) {
    const text = JSON.stringify(shrink(redacted, limits));
    if (Buffer.byteLength(text) <= budget) return text;
  }
  // Nothing of its shape fits: the start of its (redacted) text, as a JSON string.
  const note = '… (cut)';
  let room = Math.max(0, budget - Buffer.byteLength(JSON.stringify(note)));
  for (;;) {
    const text = JSON.stringify(cutBytes(whole, room) + note);
    if (Buffer.byteLength(text) <= budget || room === 0) return text;
    room = Math.max(0, room - (Buffer.byteLength(text) - budget));
  }
}

/** A body's raw text as the log takes it: its JSON value, or the text itself when it is not JSON. */
export function parsedBody(text: string | null | undefined): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
