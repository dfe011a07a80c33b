// Retry schedule (spec §6.2.4): delays after each failed automatic attempt. Configuration, not code:
// the default is the spec's; the local runtime accepts SF_RETRY_DELAYS for demos and tests.

export const DEFAULT_RETRY_DELAYS_SECONDS: readonly number[] = [1, 30, 300, 1800];

export interface RetryPolicy {
  /** Seconds to wait after failed attempt i+1 (so length + 1 attempts in all). */
  readonly delaysSeconds: readonly number[];
}

export function maxAttempts(policy: RetryPolicy): number {
  return policy.delaysSeconds.length + 1;
}

/** Delay before the next attempt after `attemptsMade` failed automatic attempts, or null when exhausted. */
export function retryDelaySeconds(policy: RetryPolicy, attemptsMade: number): number | null {
  return policy.delaysSeconds[attemptsMade - 1] ?? null;
}
