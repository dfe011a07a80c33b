// Fixed one-second window maths (spec §8, DESIGN §3). Pure: the counter itself lives in DynamoDB.

export interface RateWindow {
  /** Unix second the window started; part of the counter's key. */
  readonly start: number;
  /** Unix second the window ends: X-RateLimit-Reset. */
  readonly reset: number;
}

export interface RateDecision {
  readonly limited: boolean;
  readonly limit: number;
  readonly remaining: number;
  readonly reset: number;
  /** Whole seconds to wait, at least 1; only meaningful when limited. */
  readonly retryAfter: number;
}

const WINDOW_SECONDS = 1;

/**
 * Requests a second one counter item is sized for. DynamoDB takes at most 1,000 WCU/s on one item, and on AWS
 * the usage plan (the outer shield) lets a burst of twice the rate through on top of the rate, so a window of
 * up to 125 requests on one item writes it at most 375 times in a burst's first second: under half the limit.
 */
export const REQUESTS_PER_COUNTER_ITEM = 125;

/** How many items count a window of `limit` requests a second: 1 up to 125 (every plan but scale), else more. */
export function counterShards(limit: number): number {
  return Math.max(1, Math.ceil(limit / REQUESTS_PER_COUNTER_ITEM));
}

export function windowAt(nowMs: number): RateWindow {
  const start = Math.floor(nowMs / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS;
  return { start, reset: start + WINDOW_SECONDS };
}

/** `count` is this request's position in the window (1 for the first request). */
export function decide(count: number, limit: number, window: RateWindow, nowMs: number): RateDecision {
  const limited = count > limit;
  return {
    limited,
    limit,
    remaining: Math.max(0, limit - count),
    reset: window.reset,
    retryAfter: Math.max(1, Math.ceil(window.reset - nowMs / 1000)),
  };
}

export function rateLimitHeaders(
  decision: Pick<RateDecision, 'limit' | 'remaining' | 'reset'>,
): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(decision.limit),
    'X-RateLimit-Remaining': String(decision.remaining),
    'X-RateLimit-Reset': String(decision.reset),
  };
}
