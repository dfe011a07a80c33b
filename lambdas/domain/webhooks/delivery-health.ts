// A webhook's delivery health as its owner sees it (the webhook object's health, success_rate_24h and
// last_failure_at, which the dashboard shows): success rate and volume over the last 24 h, the latest failure,
// "failing" when the newest attempts all failed or none of the window succeeded, and "disabled" when Sendflow
// disabled the webhook (a 410, or failing for days). Pure: computed from a bounded sample of the newest
// deliveries. Not the delivery lanes' notion (endpoint-health.ts).

/** The newest deliveries a health figure reads, at most (one page of the delivery log). */
export const HEALTH_SAMPLE = 100;
/** The window of the rate and the counts. */
export const HEALTH_WINDOW_MS = 24 * 60 * 60 * 1000;
/** An endpoint is failing when its newest attempts, this many of them, all failed. */
export const FAILING_AFTER = 5;

export interface HealthAttempt {
  /** Epoch ms. */
  readonly at: number;
  readonly ok: boolean;
  readonly errorClass: string | null;
}

export interface HealthDelivery {
  /** Epoch ms. */
  readonly createdAt: number;
  readonly attempts: readonly HealthAttempt[];
}

export const HEALTH_STATES = ['healthy', 'failing', 'quiet', 'disabled'] as const;
export type HealthState = (typeof HEALTH_STATES)[number];

export interface DeliveryHealth {
  /**
   * disabled: Sendflow disabled the webhook (its disabled_reason); failing: the newest FAILING_AFTER attempts all
   * failed, or none of the window's attempts succeeded; quiet: no attempt in the window; else healthy.
   */
  readonly state: HealthState;
  /** Succeeded attempts over all attempts in the window, 0..1; null without any. */
  readonly successRate24h: number | null;
  readonly attempts24h: number;
  readonly deliveries24h: number;
  /** Epoch ms of the newest failed attempt in the sample, and its class. */
  readonly lastFailureAt: number | null;
  readonly lastFailureClass: string | null;
  /** The sample held HEALTH_SAMPLE deliveries: older ones in the window were not read. */
  readonly sampled: boolean;
}

export function deliveryHealth(
  newestFirst: readonly HealthDelivery[],
  nowMs: number,
  /** The webhook's own state: `disabled` when Sendflow disabled it (a disabled_reason). */
  webhook: { readonly disabled: boolean } = { disabled: false },
): DeliveryHealth {
  const sample = newestFirst.slice(0, HEALTH_SAMPLE);
  const since = nowMs - HEALTH_WINDOW_MS;
  const attempts = sample.flatMap((d) => d.attempts).sort((a, b) => b.at - a.at);
  const recent = attempts.filter((a) => a.at >= since);
  const succeeded = recent.filter((a) => a.ok).length;
  const lastFailure = attempts.find((a) => !a.ok);
  const newest = recent.slice(0, FAILING_AFTER);
  let state: HealthState = 'healthy';
  if (webhook.disabled) state = 'disabled';
  else if (!recent.length) state = 'quiet';
  else if (succeeded === 0 || (newest.length === FAILING_AFTER && newest.every((a) => !a.ok))) state = 'failing';
  return {
    state,
    successRate24h: recent.length ? succeeded / recent.length : null,
    attempts24h: recent.length,
    deliveries24h: sample.filter((d) => d.createdAt >= since).length,
    lastFailureAt: lastFailure?.at ?? null,
    lastFailureClass: lastFailure?.errorClass ?? null,
    sampled: sample.length >= HEALTH_SAMPLE,
  };
}
