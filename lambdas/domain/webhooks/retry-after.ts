// The receiver sets the pace: a 429 or 503 answer with `Retry-After` (delta seconds or an HTTP date, RFC 9110
// §10.2.3) moves the next automatic attempt to no earlier than that time, the schedule's delay when longer,
// capped at an hour so a receiver cannot park a delivery past its retention. Pure.

/** The longest wait a receiver can ask for, seconds. */
export const RETRY_AFTER_CAP_SECONDS = 3600;

/** The answers whose Retry-After is honoured: too many requests, and unavailable (RFC 9110 §15.6.4, RFC 6585). */
export const PACED_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/** What of an attempt's outcome (delivery.ts) the rule reads; its own shape, so the two modules import one way. */
export interface PacedAnswer {
  readonly statusCode: number | null;
  readonly responseHeaders?: Readonly<Record<string, string>>;
  /** Epoch ms when the attempt started, and how long it took: the answer arrived at their sum. */
  readonly at: number;
  readonly durationMs: number;
}

const DELTA_SECONDS = /^\d{1,10}$/;

/**
 * Seconds to wait that a Retry-After value asks for, from `answeredAt` (epoch ms, when the answer arrived);
 * null when the value is neither form. A date in the past asks for 0.
 */
export function parseRetryAfter(value: string, answeredAt: number): number | null {
  const text = value.trim();
  if (DELTA_SECONDS.test(text)) return Number(text);
  // An HTTP date names its day and GMT; Date.parse reads IMF-fixdate, RFC 850 and asctime forms.
  if (!/[a-z]/i.test(text)) return null;
  const at = Date.parse(text);
  if (!Number.isFinite(at)) return null;
  return Math.max(0, Math.ceil((at - answeredAt) / 1000));
}

/**
 * The wait an answer asks for (capped at RETRY_AFTER_CAP_SECONDS), or null: only a 429 or 503 with a valid
 * Retry-After header (names are lower-case in `responseHeaders`) asks.
 */
export function askedRetryAfter(outcome: PacedAnswer): number | null {
  if (outcome.statusCode === null || !PACED_STATUSES.has(outcome.statusCode)) return null;
  const value = outcome.responseHeaders?.['retry-after'];
  if (value === undefined) return null;
  const asked = parseRetryAfter(value, outcome.at + outcome.durationMs);
  return asked === null ? null : Math.min(asked, RETRY_AFTER_CAP_SECONDS);
}

/** The delay before the next attempt: the schedule's, or the receiver's when it asked for longer. */
export function pacedDelaySeconds(scheduleSeconds: number, askedSeconds: number | null): number {
  return askedSeconds !== null && askedSeconds > scheduleSeconds ? askedSeconds : scheduleSeconds;
}
