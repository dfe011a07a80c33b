// The delivery state machine (spec §3.2): pure transitions from one attempt's outcome.
import type { ErrorClass } from './error-class';
import { askedRetryAfter, pacedDelaySeconds } from './retry-after';
import { maxAttempts, type RetryPolicy, retryDelaySeconds } from './retry-policy';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'succeeded', 'failed'];

/** automatic: the pipeline's attempts (retried); manual: POST …/retry; test: POST /webhooks/:id/test. */
export type AttemptKind = 'automatic' | 'manual' | 'test';

export interface AttemptOutcome {
  /** Epoch ms when the attempt started. */
  readonly at: number;
  /** HTTP status, or null when no response arrived (time-out, refused, DNS, guard). */
  readonly statusCode: number | null;
  readonly durationMs: number;
  readonly error: string | null;
  /** Why it failed (see error-class.ts); null on success. */
  readonly errorClass: ErrorClass | null;
  /** How long each phase of the request took. */
  readonly timings: AttemptTimings;
  /** First 500 characters of the response body. */
  readonly response: string;
  /** The answer's headers, bounded by boundHeaders; absent without an answer. */
  readonly responseHeaders?: Readonly<Record<string, string>>;
  /**
   * AWS destinations only (domain/webhooks/destination.ts): the error code AWS answered (AccessDenied,
   * ThrottlingException, a PutEvents entry's ErrorCode…), in place of an HTTP status, and the request id of the
   * call that failed or succeeded (x-amzn-RequestId), for the customer's own CloudTrail and AWS Support.
   */
  readonly awsErrorCode?: string;
  readonly awsRequestId?: string;
}

/**
 * Milliseconds per phase of one request; null for a phase that did not happen or did not complete (no DNS for an
 * IP literal or a reused keep-alive socket, no TLS on http, no ttfb without a response).
 */
export interface AttemptTimings {
  /** From the start of the attempt to the name resolved. */
  readonly dnsMs: number | null;
  /** From the name resolved (or the start, for an IP literal) to the TCP connection made. */
  readonly connectMs: number | null;
  /** From the TCP connection made to the TLS handshake done. */
  readonly tlsMs: number | null;
  /** From the request fully written to the response headers' arrival. */
  readonly ttfbMs: number | null;
}

/** An attempt that made no request (a paused webhook, a refused URL), or an entry stored before timings. */
export const NO_TIMINGS: AttemptTimings = Object.freeze({ dnsMs: null, connectMs: null, tlsMs: null, ttfbMs: null });

export interface Transition {
  readonly status: DeliveryStatus;
  readonly attempts: number;
  /** Epoch ms of the next automatic attempt, or null. */
  readonly nextAttemptAt: number | null;
  /** Seconds until the next automatic attempt, or null. */
  readonly retryInSeconds: number | null;
  readonly deliveredAt: number | null;
  /** Seconds the receiver asked to wait (a 429 or 503 with Retry-After, capped); absent when it did not ask. */
  readonly retryAfterSeconds?: number;
}

export function isSuccess(outcome: Pick<AttemptOutcome, 'error' | 'statusCode'>): boolean {
  return outcome.error === null && outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
}

/** Where a delivery goes after an attempt. Only automatic attempts schedule retries. */
export function afterAttempt(
  attemptsBefore: number,
  outcome: AttemptOutcome,
  kind: AttemptKind,
  policy: RetryPolicy,
): Transition {
  const attempts = attemptsBefore + 1;
  if (isSuccess(outcome)) {
    return {
      status: 'succeeded',
      attempts,
      nextAttemptAt: null,
      retryInSeconds: null,
      deliveredAt: outcome.at + outcome.durationMs,
    };
  }
  const scheduled = kind === 'automatic' && attempts < maxAttempts(policy) ? retryDelaySeconds(policy, attempts) : null;
  // The receiver's Retry-After only moves a retry the schedule has; it never adds one.
  const asked = askedRetryAfter(outcome);
  // A wait of 0 asks for nothing (and is not recorded: the stored entry keeps 0 for "absent").
  const paced = asked ? { retryAfterSeconds: asked } : {};
  if (scheduled === null)
    return { status: 'failed', attempts, nextAttemptAt: null, retryInSeconds: null, deliveredAt: null, ...paced };
  const delay = pacedDelaySeconds(scheduled, asked);
  return {
    status: 'pending',
    attempts,
    nextAttemptAt: outcome.at + outcome.durationMs + delay * 1000,
    retryInSeconds: delay,
    deliveredAt: null,
    ...paced,
  };
}

/** The response excerpt kept per attempt (spec §8.5). */
export const RESPONSE_EXCERPT_CHARS = 500;

export function excerpt(text: string): string {
  return [...text].slice(0, RESPONSE_EXCERPT_CHARS).join('');
}

/**
 * What an attempt keeps of a set of headers (the answer's): at most 20, each value at most 200 characters, and
 * 1 KB of names and values in all, in the order received; lower-case names. Kept on the latest attempt only, so
 * a delivery row grows by at most this much (a row over 1 KB costs one more WRU per write).
 */
export const HEADER_LIMITS = { count: 20, valueChars: 200, totalBytes: 1024 } as const;

export function boundHeaders(headers: Iterable<readonly [string, string]>): Record<string, string> {
  const kept: Record<string, string> = {};
  let count = 0;
  let bytes = 0;
  for (const [rawName, rawValue] of headers) {
    const name = rawName.toLowerCase();
    const value = [...rawValue].slice(0, HEADER_LIMITS.valueChars).join('');
    const size = Buffer.byteLength(name) + Buffer.byteLength(value);
    if (count >= HEADER_LIMITS.count || bytes + size > HEADER_LIMITS.totalBytes || Object.hasOwn(kept, name)) continue;
    kept[name] = value;
    count += 1;
    bytes += size;
  }
  return kept;
}
