// A delivery job that failed after claiming its attempt (a store error between the claim and the result, or a
// crash) comes back when the queue's visibility time-out has passed. Its claim must have lapsed by then: a job that
// finds the claim still held skips the attempt as someone else's, and a first attempt in flight is not in the due
// index the reconciler sweeps, so that delivery would never be attempted (found by the per-email ordering property).
import { describe, expect, it } from 'vitest';
import { deliveryClaimMs, queues, visibilityTimeoutSeconds } from '../../lambdas/manifest';

const LONGEST_ATTEMPT_MS = 60_000; // SF_ATTEMPT_TIMEOUT_MS's maximum (runtime/config)

describe('delivery claims and the queues’ visibility time-outs', () => {
  it.each(['deliveries', 'slowDeliveries'] as const)(
    'a claim outlives the %s function’s time-out and lapses before the job comes back',
    (lane) => {
      for (const attemptMs of [1_000, 10_000, LONGEST_ATTEMPT_MS]) {
        const claim = deliveryClaimMs(attemptMs);
        expect(claim).toBeGreaterThan(queues[lane].functionTimeoutSeconds * 1000);
        expect(claim).toBeLessThan(visibilityTimeoutSeconds(queues[lane]) * 1000);
      }
    },
  );
});
