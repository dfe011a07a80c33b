// Use case: a delivery job that dead-lettered (it failed maxReceiveCount times in our own code: a store error, a
// bug, an outage of ours) never leaves its delivery silently `pending`. A first attempt's row is in no due index
// (its job is its only trace), so without this a lost job would leave the row pending for good, or no row at all.
// An outage of ours is no fault of the endpoint: the delivery is re-armed as a due retry (the reconciler sends
// it again), and only a job that keeps dead-lettering, DEAD_LETTER_LIMIT times, ends it visibly `failed`.
import { maxAttempts } from '../../domain/webhooks/retry-policy';
import type { AttemptDeps } from './attempts';
import { releaseNext } from './ordering';
import type { Delivery, DeliveryJob } from './ports';

export type DeadLetterDeps = Pick<
  AttemptDeps,
  'deliveries' | 'clock' | 'policy' | 'claimMs' | 'claimEpoch' | 'retentionSeconds'
> &
  /** With them, a delivery of an ordered webhook that ends failed here wakes its email's next event. */
  Partial<Pick<AttemptDeps, 'retries' | 'orderLanes'>>;

/** Dead letters of one delivery before it ends failed: a job that fails in our code every time (a poison job). */
export const DEAD_LETTER_LIMIT = 3;
/** How long a re-armed delivery waits before the reconciler sends it again. */
export const REARM_DELAY_MS = 60_000;

/** What became of a dead-lettered job's delivery. */
export type DeadLetterOutcome =
  /** Re-armed: pending, due again after REARM_DELAY_MS (the reconciler re-queues it). */
  | 'rearmed'
  /** Recorded failed (its row was pending at that attempt, or is created failed from the job's seed). */
  | 'failed'
  /** Nothing to do: the attempt was recorded meanwhile, or a later one was (the job was stale). */
  | 'settled';

/** Thrown while another holder's claim on that attempt stands: the dead letter is tried again later. */
export class DeadLetterBusyError extends Error {
  constructor(readonly deliveryId: string) {
    super(`delivery ${deliveryId} is claimed by a live attempt; its dead letter is tried again later`);
    this.name = 'DeadLetterBusyError';
  }
}

/**
 * Re-arms the delivery of a dead-lettered job as a due retry (no attempt entry: no request is known to have been
 * made), or, at its DEAD_LETTER_LIMIT-th dead letter or with no attempt left, records it failed with a TTL and
 * nothing scheduled, so the log shows it and the customer can retry it (a manual retry or a recovery job). Conditional like every state change: the attempt is claimed first (only while it is still
 * pending at `job.attempt - 1` attempts and no live claim holds it), then recorded under that claim. A first
 * attempt whose row was never created (the worker failed before its claim) gets its row, created failed, from
 * the job's seed. Idempotent: a dead letter handled twice finds its delivery settled.
 */
export async function failDeadLettered(deps: DeadLetterDeps, job: DeliveryJob): Promise<DeadLetterOutcome> {
  const now = deps.clock.now();
  const claim = { attempt: job.attempt, until: now + deps.claimMs, epoch: deps.claimEpoch ?? 0 };
  if (job.seed && job.attempt === 1) {
    const row: Delivery = {
      id: job.deliveryId,
      webhookId: job.webhookId,
      ...job.seed,
      status: 'pending',
      attempts: 0,
      maxAttempts: maxAttempts(deps.policy),
      attemptLog: [],
      response: '',
      nextAttemptAt: job.seed.createdAt,
      deliveredAt: null,
      claim,
      claimedAt: now,
    };
    if (await deps.deliveries.createClaimed(row)) return record(deps, row, job.attempt);
  }
  const claimed = await deps.deliveries.claim(
    job.webhookId,
    job.deliveryId,
    { attemptsBefore: job.attempt - 1, statuses: ['pending'], nowMs: now },
    claim,
  );
  if (claimed) return record(deps, claimed, job.attempt);
  const current = await deps.deliveries.get(job.webhookId, job.deliveryId, now);
  // Still pending at that attempt: a live claim holds it (a worker still on it); its outcome decides, or this
  // dead letter once the claim lapses.
  if (current?.status === 'pending' && current.attempts === job.attempt - 1) {
    throw new DeadLetterBusyError(job.deliveryId);
  }
  return 'settled';
}

async function record(deps: DeadLetterDeps, claimed: Delivery, attempt: number): Promise<DeadLetterOutcome> {
  const now = deps.clock.now();
  const { claim: _released, ...rest } = claimed;
  const deadLetters = (claimed.deadLetters ?? 0) + 1;
  if (deadLetters < DEAD_LETTER_LIMIT && claimed.attempts < claimed.maxAttempts) {
    const rearmed: Delivery = { ...rest, deadLetters, nextAttemptAt: now + REARM_DELAY_MS, settledAt: now };
    if (await deps.deliveries.record(rearmed, attempt)) return 'rearmed';
    return 'settled';
  }
  const failed: Delivery = {
    ...rest,
    deadLetters,
    status: 'failed',
    nextAttemptAt: null,
    settledAt: now,
    expiresAt: Math.floor(now / 1000) + deps.retentionSeconds,
  };
  if (await deps.deliveries.record(failed, attempt)) {
    if (deps.retries) await releaseNext({ ...deps, retries: deps.retries }, failed);
    return 'failed';
  }
  // Another holder took the claim over (ours lapsed): its outcome stands.
  return 'settled';
}
