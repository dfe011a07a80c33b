// Auto-disable (issue 18): when an endpoint that keeps failing is disabled, and when its owner is told it is
// failing. Pure: the failure streak the webhook item keeps, and the verdicts drawn from it and one attempt.

export const DISABLED_REASONS = ['failing', 'gone'] as const;
/** failing: no success for the window and enough failed deliveries; gone: the endpoint answered 410. */
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/** Svix's choice: five days without a success. */
export const DEFAULT_DISABLE_AFTER_SECONDS = 432_000;
/** A day of failures earns the owner a `webhook.failing` event, once per streak. */
export const DEFAULT_FAILING_AFTER_SECONDS = 86_400;
/** So a webhook that gets one event a week is not disabled for two failures. */
export const MIN_FAILED_DELIVERIES = 10;

export interface AutoDisablePolicy {
  /** No success for this long (and MIN_FAILED_DELIVERIES failed deliveries) disables. */
  readonly disableAfterMs: number;
  /** Failing for this long sends `webhook.failing`. */
  readonly failingAfterMs: number;
  readonly minFailures: number;
}

export function autoDisablePolicy(disableAfterSeconds: number, failingAfterSeconds: number): AutoDisablePolicy {
  return {
    disableAfterMs: disableAfterSeconds * 1000,
    failingAfterMs: failingAfterSeconds * 1000,
    minFailures: MIN_FAILED_DELIVERIES,
  };
}

/** What the webhook item keeps of a run of failures with no success between them. */
export interface FailureStreak {
  /** Epoch ms of the first failure after the last success (or since the webhook was resumed). */
  readonly since: number;
  /**
   * Failed deliveries counted, each once (at its first failed attempt, or the failure that began the streak);
   * counting stops at the policy's minimum: past it the count decides nothing, so it costs no more writes.
   */
  readonly failures: number;
  /** Whether `webhook.failing` went out for this streak. */
  readonly failingNotified: boolean;
}

/** One attempt as the rules read it. */
export interface WatchedAttempt {
  readonly statusCode: number | null;
  readonly ok: boolean;
  /** Only the retry schedule's attempts count toward a streak; any success ends one, any 410 disables. */
  readonly automatic: boolean;
  /** The delivery's first attempt: its failure counts the delivery. */
  readonly first: boolean;
}

/**
 * The write one attempt calls for, judged from the streak the worker's (cached) webhook shows: none at all on
 * a success with no streak (the common path costs nothing), `clear` on the first success after failures,
 * `count` while the streak is shorter than the minimum, `gone` on a 410.
 */
export function noteFor(
  attempt: WatchedAttempt,
  streak: FailureStreak | null,
  policy: AutoDisablePolicy,
): 'none' | 'clear' | 'count' | 'gone' {
  if (attempt.statusCode === 410) return 'gone';
  if (attempt.ok) return streak ? 'clear' : 'none';
  if (!attempt.automatic) return 'none';
  if (!streak) return 'count';
  return attempt.first && streak.failures < policy.minFailures ? 'count' : 'none';
}

/** What a failing streak has earned at `nowMs`: disabling, the one failing notice, or nothing yet. */
export function verdictFor(
  streak: FailureStreak | null,
  nowMs: number,
  policy: AutoDisablePolicy,
): 'disable' | 'failing' | null {
  if (!streak) return null;
  const failingFor = nowMs - streak.since;
  if (failingFor >= policy.disableAfterMs && streak.failures >= policy.minFailures) return 'disable';
  if (failingFor >= policy.failingAfterMs && !streak.failingNotified) return 'failing';
  return null;
}

/**
 * A webhook's URL as its `webhook.*` events show it to the account's other endpoints: the origin and the first path
 * segment only. A URL can be a credential (a Slack or Discord incoming webhook's path is its token; others carry
 * `?token=` or `user:pass@`), and those events go to third-party receivers and chat channels.
 */
export function redactedUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '';
  }
  const [first = '', ...rest] = parsed.pathname.split('/').filter(Boolean);
  return `${parsed.protocol}//${parsed.host}/${first}${rest.length ? '/…' : ''}`;
}
