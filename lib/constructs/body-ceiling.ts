// The request-body ceiling on AWS: the largest Content-Length the WAF lets through to the API function, chosen so
// the Lambda proxy event around any valid JSON body stays under Lambda's synchronous payload limit (a larger
// event is refused by Lambda before our code runs, and API Gateway answers a 5xx instead of our 413).

/** Lambda's synchronous invocation payload limit ("6 MB"; taken as 6 MiB, the event as API Gateway sends it). */
export const LAMBDA_SYNC_PAYLOAD_BYTES = 6 * 1024 * 1024;

/**
 * Room kept for the event around the body: headers twice (`headers` and `multiValueHeaders`, API Gateway caps the
 * request line and headers at 10,240 bytes, each at most doubled by escaping), path and query parameters, and
 * `requestContext`: well under 100 KB in practice, 256 KiB kept.
 */
export const EVENT_OVERHEAD_BYTES = 256 * 1024;

/**
 * How much API Gateway's JSON-string encoding of the body can grow a valid JSON body, per byte: `"` and `\` (only
 * inside strings, already escaped there) and tab, LF, CR (only as whitespace) become two bytes each; any other
 * byte of valid JSON (UTF-8 included) is copied as is. Raw control characters other than those three, which
 * become six (`\u0001`), are not valid JSON: docs/runbook.md, "Request ceiling".
 */
export const JSON_ESCAPE_FACTOR = 2;

/**
 * The send routes' body ceiling on AWS: the WAF refuses a larger Content-Length with 413, and the stack sets the
 * API function's SF_MAX_SEND_BODY_BYTES to it. 2 × 3,000,000 + 262,144 = 6,262,144 ≤ 6,291,456.
 */
export const AWS_MAX_SEND_BODY_BYTES = 3_000_000;

/**
 * A PCRE (and JavaScript) regex matching a header value that holds a decimal integer above `limit`, leading zeros
 * and surrounding text allowed (`Content-Length: 0003000001`, a repeated `3000001, 3000001`): WAF compares header
 * sizes, not numbers, so "above" is spelled digit by digit. No lookaround, no capturing group (WAF refuses them).
 */
export function integerAbovePattern(limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new Error(`limit must be a non-negative integer: ${limit}`);
  const digits = String(limit);
  const length = digits.length;
  // Any number with more digits than the limit (no leading zero: those are eaten by 0* below).
  const branches = [`[1-9][0-9]{${length},}`];
  // Same length: the same first i digits, then a larger digit, then anything.
  for (let i = 0; i < length; i++) {
    const digit = Number(digits[i]);
    if (digit === 9) continue;
    const rest = length - i - 1;
    branches.push(`${digits.slice(0, i)}[${digit + 1}-9]${rest > 0 ? `[0-9]{${rest}}` : ''}`);
  }
  return `(?:^|[^0-9])0*(?:${branches.join('|')})(?:[^0-9]|$)`;
}
