// The per-endpoint rate limit's rules (issue 18 item 3). Pure. "At most N requests started in any second" is kept
// by spacing consecutive starts at least 1/N s apart (plus headroom), judged on the time a request really starts:
// N+1 consecutive starts then span more than a second, however the windows are placed at the receiver. Turns,
// handed out the same spacing apart, bring each job to the door when its start will be granted.

/** rate_limit_per_second's bounds. */
export const MIN_RATE_LIMIT_PER_SECOND = 1;
export const MAX_RATE_LIMIT_PER_SECOND = 1_000;

/**
 * The window the spacing is computed on: 5% more than a second, so a request that reaches the receiver a few
 * milliseconds later than the one N before it (the network's jitter) still falls in another second there.
 */
export const PACE_WINDOW_MS = 1_050;

/** The least time between two starts of requests to an endpoint paced at `perSecond`. */
export function paceSpacingMs(perSecond: number): number {
  return PACE_WINDOW_MS / perSecond;
}

/** What the shared pace says to a request about to start at `now`. */
export type PaceTake = { readonly granted: true } | { readonly granted: false; readonly nextAt: number };

/**
 * The pace counter's rule: a request may start at `now` when the endpoint's next allowed start (`nextAt`, none
 * before its first request) is not after it; the next one then may start `spacingMs` later.
 */
export function takePace(
  nextAt: number | undefined,
  now: number,
  spacingMs: number,
): { readonly take: PaceTake; readonly nextAt: number } {
  if (nextAt !== undefined && nextAt > now) return { take: { granted: false, nextAt }, nextAt };
  return { take: { granted: true }, nextAt: now + spacingMs };
}

/**
 * The turns' rule: a job's turn is the endpoint's horizon (none before its first job) or `now` if that is later,
 * and the horizon moves a spacing past it, so turns are handed out a spacing apart and never twice.
 */
export function reservePace(
  horizon: number | undefined,
  now: number,
  spacingMs: number,
): { readonly turn: number; readonly horizon: number } {
  const turn = horizon !== undefined && horizon > now ? horizon : now;
  return { turn, horizon: turn + spacingMs };
}

/** The most starts within any `windowMs` (a half-open window placed anywhere): what a receiver would count. */
export function mostInAnyWindow(starts: readonly number[], windowMs = 1_000): number {
  const sorted = [...starts].sort((a, b) => a - b);
  let most = 0;
  let first = 0;
  for (let last = 0; last < sorted.length; last++) {
    while ((sorted[last] as number) - (sorted[first] as number) >= windowMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}
