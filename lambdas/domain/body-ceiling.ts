// The send routes' body ceiling: the largest body whose Lambda proxy event stays under Lambda's synchronous payload
// limit whatever JSON escaping does to it (a larger event is refused by Lambda before our code runs, and API
// Gateway answers a 5xx instead of our 413). The WAF refuses a larger Content-Length; the runtimes default to it.

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
 * become six (`\u0001`), are not valid JSON: docs/runbook.md, "Attachments in S3".
 */
export const JSON_ESCAPE_FACTOR = 2;

/**
 * The send routes' body ceiling: SF_MAX_SEND_BODY_BYTES' default, the value the stack gives the API function, and
 * the WAF's Content-Length limit (413 above). 2 × 3,000,000 + 262,144 = 6,262,144 ≤ 6,291,456.
 */
export const MAX_SEND_BODY_BYTES = 3_000_000;
