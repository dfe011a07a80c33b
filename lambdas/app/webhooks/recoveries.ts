// Recovery jobs (POST /v1/webhooks/:id/recoveries): after an outage, one new attempt for every delivery of a
// window, exactly like a manual retry, made in the background by steps on the deliveries queue. Each step
// leases the job at its step number (one runner at a time, even when the queue delivers a step twice), takes the
// next page of the window (RECOVERY_PACE), attempts it, stores the job's progress with a write conditional on the
// step number, then queues the next step and notes it queued. State lives in the job, so a step redelivered after
// a crash carries on where the job stands, and a late duplicate changes nothing: its lease or its write fails.
import { ConflictError, NotFoundError } from '../../domain/errors';
import { timeOrderedId } from '../../domain/ids';
import {
  addCounts,
  deliveryIdRange,
  NO_COUNTS,
  RECOVERY_PACE,
  type RecoveryCounts,
  recoveryWindow,
  STALE_RECOVERY_MS,
} from '../../domain/webhooks/recovery';
import { mapWithLimit } from '../pool';
import { type AttemptDeps, attemptAgain, busySince } from './attempts';
import { assertActive, getWebhook } from './manage-webhooks';
import {
  type AttemptRecord,
  type Recovery,
  type RecoveryQueue,
  type RecoveryRepository,
  type RecoveryStep,
  sameTenant,
  type Tenant,
  type Webhook,
} from './ports';

export interface RecoveryDeps extends AttemptDeps {
  readonly recoveries: RecoveryRepository;
  readonly recoveryQueue: RecoveryQueue;
  /** Deliveries a step takes (recoveryPageSize); RECOVERY_PACE.pageSize when absent. */
  readonly recoveryPageSize?: number;
}

export interface RecoveryInput {
  readonly since: string;
  readonly until?: string;
  readonly status?: 'failed';
}

/** Jobs GET /v1/webhooks/:id/recoveries shows, newest first. */
export const LISTED_RECOVERIES = 20;

/**
 * Starts a job: stored running, its first step queued (the request returns at once: 202). One job runs per
 * webhook at a time (409 `recovery_running`); a running job not heard of for STALE_RECOVERY_MS is canceled.
 */
export async function startRecovery(
  deps: RecoveryDeps,
  tenant: Tenant,
  webhookId: string,
  input: RecoveryInput,
): Promise<Recovery> {
  const webhook = await getWebhook(deps, tenant, webhookId);
  const now = deps.clock.now();
  const window = recoveryWindow(input, now, deps.retentionSeconds);
  assertActive(webhook);
  for (const job of await deps.recoveries.list(webhook.id, now, LISTED_RECOVERIES)) {
    if (job.status !== 'running') continue;
    if (now - job.updatedAt < STALE_RECOVERY_MS) {
      throw new ConflictError(
        `Recovery ${job.id} is running for this webhook; wait for it to end or cancel it first.`,
        'recovery_running',
      );
    }
    await deps.recoveries.cancel(webhook.id, job.id, now, expiry(deps, now));
  }
  const recovery: Recovery = {
    accountId: tenant.accountId,
    mode: tenant.mode,
    id: timeOrderedId('rec', now, deps.random),
    webhookId: webhook.id,
    status: 'running',
    ...window,
    onlyFailed: input.status === 'failed',
    ...NO_COUNTS,
    step: 0,
    cursor: null,
    createdAt: now,
    updatedAt: now,
    expiresAt: expiry(deps, now),
  };
  await deps.recoveries.create(recovery);
  try {
    await deps.recoveryQueue.send(stepOf(recovery));
  } catch (error) {
    // Not queued: a job that would never run must not stand (nor block the next one).
    await deps.recoveries.cancel(webhook.id, recovery.id, now, expiry(deps, now));
    throw error;
  }
  await deps.recoveries.markQueued(webhook.id, recovery.id, 0);
  return recovery;
}

/** GET /v1/webhooks/:id/recoveries: the webhook's jobs, newest first. */
export async function listRecoveries(deps: RecoveryDeps, tenant: Tenant, webhookId: string): Promise<Recovery[]> {
  const webhook = await getWebhook(deps, tenant, webhookId);
  const jobs = await deps.recoveries.list(webhook.id, deps.clock.now(), LISTED_RECOVERIES);
  return jobs.filter((job) => sameTenant(job, tenant));
}

export async function getRecovery(
  deps: RecoveryDeps,
  tenant: Tenant,
  webhookId: string,
  id: string,
): Promise<Recovery> {
  const webhook = await getWebhook(deps, tenant, webhookId);
  const recovery = await deps.recoveries.get(webhook.id, id, deps.clock.now());
  if (!recovery || !sameTenant(recovery, tenant)) throw new NotFoundError(`No recovery with id ${id}.`);
  return recovery;
}

/** Stops a running job before its next step; canceling a canceled job is a no-op, a completed one a 409. */
export async function cancelRecovery(
  deps: RecoveryDeps,
  tenant: Tenant,
  webhookId: string,
  id: string,
): Promise<Recovery> {
  await getRecovery(deps, tenant, webhookId, id);
  const now = deps.clock.now();
  const recovery = await deps.recoveries.cancel(webhookId, id, now, expiry(deps, now));
  if (!recovery) throw new NotFoundError(`No recovery with id ${id}.`);
  if (recovery.status === 'completed')
    throw new ConflictError('The recovery has already completed.', 'recovery_completed');
  return recovery;
}

/**
 * One step of a job (the delivery worker's message): the next page of the window, attempted; then the progress
 * and the next step. A step that finds the job ended, or past this step, or leased by a live runner, does
 * nothing; one that finds the job one step further with that step never noted queued queues it (its own run
 * stored the progress, then died before queueing). `observe` is told of every attempt's outcome (endpoint health).
 */
export async function runRecoveryStep(
  deps: RecoveryDeps,
  step: RecoveryStep,
  observe?: (attempt: AttemptRecord) => void,
): Promise<void> {
  const found = await deps.recoveries.get(step.webhookId, step.recoveryId, deps.clock.now());
  if (found?.status !== 'running' || !sameTenant(found, step)) return;
  if (found.step === step.step + 1 && found.queuedStep !== found.step) return queueNext(deps, found);
  if (found.step !== step.step) return;
  const now = deps.clock.now();
  const lease = { attempt: step.step, until: now + deps.claimMs, epoch: deps.claimEpoch ?? 0 };
  const job = await deps.recoveries.lease(found.webhookId, found.id, step.step, lease, now);
  if (!job) return;

  const webhook = await deps.webhooks.get(job, job.webhookId);
  if (!webhook?.active) {
    // Paused or deleted: no attempt would be made; the job ends canceled (start another after resuming).
    await deps.recoveries.advance(ended(deps, job, 'canceled', NO_COUNTS, job.cursor), job.step);
    return;
  }
  const page = await deps.deliveries.range(
    job.webhookId,
    {
      ...deliveryIdRange(job),
      onlyFailed: job.onlyFailed,
      limit: deps.recoveryPageSize ?? RECOVERY_PACE.pageSize,
      ...(job.cursor ? { after: job.cursor } : {}),
    },
    deps.clock.now(),
  );
  const outcomes = await mapWithLimit(page.ids, RECOVERY_PACE.inFlight, (id) =>
    recoverOne(deps, job, webhook, id, observe),
  );
  const counts = outcomes.reduce(addCounts, NO_COUNTS);
  const later = deps.clock.now();
  const next: Recovery =
    page.next === null
      ? ended(deps, job, 'completed', counts, page.ids.at(-1) ?? job.cursor)
      : {
          ...job,
          ...addCounts(job, counts),
          step: job.step + 1,
          cursor: page.next,
          updatedAt: later,
          expiresAt: expiry(deps, later),
        };
  if (!(await deps.recoveries.advance(next, job.step))) return;
  if (next.status === 'running') await queueNext(deps, next);
}

/** Queues the job's next step after the pace's delay, then notes it queued. */
async function queueNext(deps: RecoveryDeps, job: Recovery): Promise<void> {
  await deps.recoveryQueue.send(stepOf(job), RECOVERY_PACE.stepDelaySeconds);
  await deps.recoveries.markQueued(job.webhookId, job.id, job.step);
}

/**
 * One delivery of the window: attempted like a manual retry asked when the job was created, so skipped if an
 * attempt is scheduled or in flight, or one was claimed since. Except the job's own claim that was never recorded
 * (its step died mid-attempt): that attempt is made again, so no delivery of the window is left out.
 */
async function recoverOne(
  deps: RecoveryDeps,
  job: Recovery,
  webhook: Webhook,
  id: string,
  observe?: (attempt: AttemptRecord) => void,
): Promise<RecoveryCounts> {
  const skipped = { ...NO_COUNTS, total: 1, skipped: 1 };
  const current = await deps.deliveries.get(webhook.id, id, deps.clock.now());
  const unfinished = current?.claim?.by === job.id;
  const since = unfinished ? deps.clock.now() + 1 : job.createdAt;
  if (!current || busySince(deps, current, since)) return skipped;
  if (job.onlyFailed && current.status !== 'failed') return skipped;
  const statuses = job.onlyFailed ? (['failed'] as const) : (['failed', 'succeeded'] as const);
  const delivery = await attemptAgain(deps, webhook, current, since, statuses, job.id);
  if (!delivery) return skipped;
  const attempt = delivery.attemptLog.at(-1);
  if (attempt) observe?.(attempt);
  return delivery.status === 'succeeded'
    ? { ...NO_COUNTS, total: 1, succeeded: 1 }
    : { ...NO_COUNTS, total: 1, failed: 1 };
}

function ended(
  deps: RecoveryDeps,
  job: Recovery,
  status: 'completed' | 'canceled',
  counts: RecoveryCounts,
  cursor: string | null,
): Recovery {
  const now = deps.clock.now();
  return {
    ...job,
    ...addCounts(job, counts),
    status,
    step: job.step + 1,
    cursor,
    updatedAt: now,
    expiresAt: expiry(deps, now),
  };
}

/** Ended jobs stay readable as long as the deliveries they replayed. */
const expiry = (deps: Pick<AttemptDeps, 'retentionSeconds'>, now: number) =>
  Math.floor(now / 1000) + deps.retentionSeconds;

const stepOf = (job: Recovery): RecoveryStep => ({
  accountId: job.accountId,
  mode: job.mode,
  webhookId: job.webhookId,
  recoveryId: job.id,
  step: job.step,
});
