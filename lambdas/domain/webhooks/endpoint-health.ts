// Endpoint health (DESIGN §4, isolation): which attempt outcomes mark an endpoint slow, so its next jobs leave
// the shared lane for the slow lane instead of holding capacity other endpoints need.
import type { AttemptOutcome } from './delivery';

export interface LanePolicy {
  /** Attempts one endpoint may have in flight in the shared lane (per worker process). */
  readonly perEndpoint: number;
  /** An attempt that took this long (a slow answer, or a time-out) marks the endpoint slow. */
  readonly slowAfterMs: number;
  /** How long a slow endpoint's jobs stay in the slow lane. */
  readonly slowForMs: number;
}

export const LANE_POLICY: LanePolicy = { perEndpoint: 4, slowAfterMs: 2_000, slowForMs: 60_000 };

/**
 * True when the attempt held its slot too long: time is what a slow endpoint takes from the others, so a fast
 * failure (refused, DNS, a quick 500) does not count, and a time-out always does.
 */
export function isSlowOutcome(outcome: Pick<AttemptOutcome, 'durationMs'>, policy: LanePolicy): boolean {
  return outcome.durationMs >= policy.slowAfterMs;
}
