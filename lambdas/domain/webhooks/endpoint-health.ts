// Endpoint health (DESIGN §4, isolation): which attempt outcomes mark an endpoint slow, so its next jobs leave
// the shared lane for the slow lane instead of holding capacity other endpoints need.
import type { AttemptOutcome } from './delivery';

export interface LanePolicy {
  /** Attempts one endpoint may have in flight in the shared lane (per worker process). */
  readonly perEndpoint: number;
  /** A job of an endpoint at its share waits for one of its attempts to end while the oldest is this young. */
  readonly busyWaitMs: number;
  /** Then it goes back to the shared lane, to be received again this much later (seconds). */
  readonly busyDelaySeconds: number;
  /** An attempt that took, or has been running for, this long (a slow answer, a hang) marks the endpoint slow. */
  readonly slowAfterMs: number;
  /** How long a slow endpoint's jobs stay in the slow lane. */
  readonly slowForMs: number;
}

/**
 * An attempt holds its whole batch (an invocation on AWS, one of the local shared lane's 8) until it ends, so an
 * endpoint may hold at most half the local batches before it is known to be slow. On AWS an instance takes one
 * batch, so the share binds within a batch and the slow mark (shared by the instance's later batches) does the
 * rest.
 */
export const LANE_POLICY: LanePolicy = {
  perEndpoint: 4,
  busyWaitMs: 250,
  busyDelaySeconds: 1,
  slowAfterMs: 2_000,
  slowForMs: 60_000,
};

/**
 * True when the attempt held its slot too long: time is what a slow endpoint takes from the others, so a fast
 * failure (refused, DNS, a quick 500) does not count, and a time-out always does.
 */
export function isSlowOutcome(outcome: Pick<AttemptOutcome, 'durationMs'>, policy: LanePolicy): boolean {
  return outcome.durationMs >= policy.slowAfterMs;
}
