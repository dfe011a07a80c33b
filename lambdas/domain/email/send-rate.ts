// The sending-rate rule (SES's maximum send rate): a token bucket that hands out reservations. A full bucket
// lets a burst of copies go at once (by default one: copies evenly spaced from the first, so no second holds
// more than ⌈rate⌉ of them); after that one copy per 1/rate seconds. Each reservation takes its token
// at once, even one not there yet (the bucket goes into debt), and says how long to wait for it, so copies
// reserved together go out in order, evenly spaced. Pure: the caller keeps the bucket and does the waiting.

export interface SendRateRule {
  /** Copies per second, the steady rate; fractions allowed (a Lambda invocation's share of the account's). */
  readonly perSecond: number;
  /** Copies a full bucket lets go at once, at least one (else nothing would ever go). */
  readonly burst: number;
}

export interface SendBucket {
  /** Tokens left when `at`; negative while reservations wait for tokens still to come. */
  readonly tokens: number;
  /** Epoch ms of the last reservation. */
  readonly at: number;
}

/**
 * `perSecond` copies per second after a burst of `burst` (default 1). SES counts its maximum send rate per
 * second, so the send worker keeps the default: a larger burst lets `burst + rate` copies into one second.
 */
export function rateRule(perSecond: number, burst = 1): SendRateRule {
  if (!Number.isFinite(perSecond) || perSecond <= 0) {
    throw new RangeError(`A send rate must be positive and finite, got ${perSecond}`);
  }
  if (!Number.isFinite(burst) || burst < 1) throw new RangeError(`A burst must be at least 1 copy, got ${burst}`);
  return { perSecond, burst };
}

/** A bucket nobody has drawn from yet: the whole burst is there. */
export function fullBucket(rule: SendRateRule, now: number): SendBucket {
  return { tokens: rule.burst, at: now };
}

/**
 * Reserves one copy at `now`: the bucket after it and how long (ms) the copy must wait for its token. Null, with
 * nothing taken, when that wait would be longer than `maxWaitMs` (a copy that could not go out in time).
 */
export function reserve(
  bucket: SendBucket,
  rule: SendRateRule,
  now: number,
  maxWaitMs = Number.POSITIVE_INFINITY,
): { bucket: SendBucket; waitMs: number } | null {
  const refilled = Math.min(rule.burst, bucket.tokens + (Math.max(0, now - bucket.at) * rule.perSecond) / 1000);
  const tokens = refilled - 1;
  const waitMs = tokens >= 0 ? 0 : Math.ceil((-tokens * 1000) / rule.perSecond);
  if (waitMs > maxWaitMs) return null;
  return { bucket: { tokens, at: Math.max(now, bucket.at) }, waitMs };
}
