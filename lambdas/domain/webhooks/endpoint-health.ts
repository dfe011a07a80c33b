// Endpoint health (DESIGN §4, isolation): which attempt outcomes mark an endpoint slow, so its next jobs leave
// the shared lane for the slow lane instead of holding capacity other endpoints need.
import type { AttemptOutcome } from './delivery';

export interface LanePolicy {
  /**
   * Attempts one account may have in flight in the shared lane of one worker process; null for no share there.
   * A process that runs many batches at once (the local runtime) needs one; a Lambda container runs one batch at a
   * time, which SQS's fair queues already spread over the tenants, so a share there would only send jobs round the
   * queue and make the batch's attempts wait on each other (issue 29).
   */
  readonly perEndpoint: number | null;
  /** A job of an endpoint at its share waits for one of its attempts to end while the oldest is this young. */
  readonly busyWaitMs: number;
  /** Then it goes back to the shared lane, to be received again this much later (seconds). */
  readonly busyDelaySeconds: number;
  /** An attempt that took, or has been running for, this long (a slow answer, a hang) marks the endpoint slow. */
  readonly slowAfterMs: number;
  /** How long a slow endpoint's jobs stay in the slow lane. */
  readonly slowForMs: number;
  /**
   * The endpoint is slow once, among its observations in this process over the last `slowWindowMs` (ended
   * attempts, and requests in flight for slowAfterMs or more), at least `slowQuorum` were slow and they are at
   * least `slowShare` of them. One slow outcome is enough when absent. A share, not a count of the latest: a busy
   * endpoint's batch ends with its slowest answers, so its last few are slow even when 97% of them were fast.
   */
  readonly slowWindowMs?: number;
  readonly slowQuorum?: number;
  readonly slowShare?: number;
  /**
   * A webhook whose failure streak (on its item, counted by every worker: app/webhooks/endpoint-watch) has this
   * many failed deliveries and began `failingForMs` ago or more goes to the slow lane in every container,
   * unattempted in the shared lane; none when absent or null. The streak ends at its endpoint's next success (made
   * in the slow lane). The age keeps a busy healthy endpoint out: its streaks (a 5xx, then a success that a
   * worker's cached copy of the webhook did not show as a streak yet) last a second or two.
   */
  readonly failingDeliveries?: number | null;
  readonly failingForMs?: number;
}

/**
 * The local runtime's: an attempt holds its whole batch (one of the local shared lane's 8) until it ends, so an
 * account may hold at most half the local batches before its endpoint is known to be slow.
 */
export const LANE_POLICY: LanePolicy = {
  perEndpoint: 4,
  busyWaitMs: 250,
  busyDelaySeconds: 1,
  slowAfterMs: 2_000,
  slowForMs: 60_000,
};

/**
 * On AWS (issue 29): a container runs one batch, whose jobs are all attempted at once (no share). A bad day's
 * endpoint answers past 2 s now and then (its p99 is 3 s, 0.5% of its requests time out: about 3% in all), so one
 * slow answer no longer marks it: at least 4 of its observations in the container over the last minute must have
 * been slow, and half of them (a hanging endpoint: all; an endpoint whose median answer takes 2 s: half). An
 * endpoint seen failing by all the containers together (3 failed deliveries and no success for 30 s) goes to the
 * slow lane in all of them. A first attempt queued behind a backlog (an outage's) stays in the shared lane: its
 * batches of 500, 300 at once, work a backlog off faster than the slow lane's 50 of 100, fresh first attempts skip
 * it through the bypass, and a backlog moved to the slow lane made every slow endpoint's retry wait behind it
 * (issue 29: bench:scale, docs/benchmarks.md, Scale).
 */
export const AWS_LANE_POLICY: LanePolicy = {
  ...LANE_POLICY,
  perEndpoint: null,
  slowWindowMs: 60_000,
  slowQuorum: 4,
  slowShare: 0.5,
  failingDeliveries: 3,
  failingForMs: 30_000,
};

/**
 * True when the attempt held its slot too long: time is what a slow endpoint takes from the others, so a fast
 * failure (refused, DNS, a quick 500) does not count, and a time-out always does.
 */
export function isSlowOutcome(outcome: Pick<AttemptOutcome, 'durationMs'>, policy: LanePolicy): boolean {
  return outcome.durationMs >= policy.slowAfterMs;
}
