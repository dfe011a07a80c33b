// SQS handler of the deliveries queues (the shared lane and the slow lane): one attempt per record, records of
// a batch in parallel. The endpoint's failures are outcomes (recorded, retried on schedule), not batch
// failures; only our own errors make SQS redeliver. Webhooks are read once per batch (on AWS kept for
// SF_WEBHOOK_CACHE_SECONDS: `webhookReads`). In the shared lane, a job whose endpoint is slow (in this worker's
// eyes, or failing in every worker's: its webhook's failure streak) moves to the slow lane unattempted, the
// batch's moves gathered into sends of 10; where the lanes keep a share per account (the local runtime), one
// whose account already has its share of attempts in flight waits for one of them to end, or comes back a moment
// later. The retry of an attempt that was slow waits in the slow lane. A recovery job's step rides on
// the shared lane too: it makes its own paced attempts (app/webhooks/recoveries). The deliveries DLQs are
// consumed here too: a dead-lettered job's delivery is recorded failed (app/webhooks/dead-letters), never attempted.
// A job of a paced webhook (its `ratePerSecond`) waits for its turn before anything else, or goes back to its
// queue until then (app/webhooks/pace): no claim, no attempt, no receive counted toward the DLQ.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { attemptDelivery, type WebhookLookup } from '../../app/webhooks/attempts';
import { failDeadLettered } from '../../app/webhooks/dead-letters';
import type { EndpointGate } from '../../app/webhooks/endpoint-gate';
import { streakOf } from '../../app/webhooks/endpoint-watch';
import type { FigureTally } from '../../app/webhooks/figure-tally';
import { GatheredDeliveryQueue } from '../../app/webhooks/gathered-delivery-queue';
import type { EndpointPace } from '../../app/webhooks/pace';
import type {
  AttemptRecord,
  DeliveryJob,
  DeliveryQueue,
  RecoveryQueue,
  RecoveryStep,
  RetryScheduler,
  Tenant,
  Webhook,
  WebhookReads,
  WebhookRef,
} from '../../app/webhooks/ports';
import { type RecoveryDeps, runRecoveryStep } from '../../app/webhooks/recoveries';
import { deliveryJobMessage, recoveryStepMessage } from './messages';

/** The two lanes (DESIGN §4, isolation). */
export interface Lanes {
  readonly gate: EndpointGate;
  /** Where the shared lane sends the jobs of slow endpoints, and their recovery steps. */
  readonly slowLane: DeliveryQueue;
  readonly slowSteps: RecoveryQueue;
  /** The shared lane itself: a job of an endpoint at its share goes back to it, `busyDelaySeconds` later. */
  readonly sharedLane: DeliveryQueue;
  readonly busyDelaySeconds: number;
  /** Whether a record came from the slow lane: its jobs are attempted whatever the gate says. */
  readonly isSlowLane: (record: SQSRecord) => boolean;
  /**
   * Where the retry of a slow attempt (a time-out, a slow answer) waits: the slow lane for a delay its queue holds,
   * so a hanging endpoint's retries never come back through the shared lane.
   */
  readonly slowRetries: RetryScheduler;
}

/** Per-endpoint rate limits: the shared pace's turns and starts, and the queue a job goes back to until its turn. */
export interface Pacing {
  readonly pace: EndpointPace;
  /** The shared lane (a slow-lane job goes back to the slow lane). */
  readonly queue: DeliveryQueue;
}

export interface DeliveryWorkerDeps extends RecoveryDeps {
  readonly lanes?: Lanes;
  readonly pacing?: Pacing;
  readonly webhookReads?: WebhookReads;
  /** Whether a record comes from a deliveries DLQ (its job failed maxReceiveCount times): recorded failed. */
  readonly isDeadLetter?: (record: SQSRecord) => boolean;
  /** The process's held delivery figures: what is due is written before the invocation ends. */
  readonly figureTally?: Pick<FigureTally, 'settle'>;
}

export function createDeliveryWorkerHandler(deps: DeliveryWorkerDeps) {
  const { lanes, pacing } = deps;
  // The gate times each endpoint's request itself, so a slow claim or record of ours never marks it slow.
  const timedDeps = (endpoint: string): RecoveryDeps =>
    lanes
      ? { ...deps, sender: { send: (request) => lanes.gate.timed(endpoint, () => deps.sender.send(request)) } }
      : deps;
  // A paced job takes its start on the shared pace right before the request, outside the gate's timing: a wait
  // for the pace is never taken for a slow endpoint.
  const pacedDeps = (base: RecoveryDeps, job: DeliveryJob): RecoveryDeps => {
    const rate = job.ratePerSecond;
    if (!pacing || !rate) return base;
    return {
      ...base,
      sender: {
        send: async (request) => {
          await pacing.pace.start(job.webhookId, rate);
          return base.sender.send(request);
        },
      },
    };
  };
  // The retry of an attempt whose outcome was slow goes to the slow lane (`slow` is asked when it is scheduled,
  // after the outcome was observed).
  const laneRetries = (base: RecoveryDeps, slow: () => boolean): RecoveryDeps =>
    lanes
      ? {
          ...base,
          retries: { schedule: (job, delay) => (slow() ? lanes.slowRetries : base.retries).schedule(job, delay) },
        }
      : base;
  return (event: SQSEvent) => {
    const jobs = new Map(event.Records.map((record) => [record, parseJob(record)]));
    const lookup = batchLookup(deps.webhookReads ?? deps.webhooks, [...jobs.values()]);
    const processor = new BatchProcessor(EventType.SQS);
    // The batch's moves to the slow lane leave together, in sends of 10, once every record has chosen its lane.
    const moves = lanes ? new GatheredDeliveryQueue(lanes.slowLane, event.Records.length) : undefined;
    const members = new Map(event.Records.map((record) => [record, moves?.member()]));
    // A recovery step passes the same door as a job: its account's share, and the slow lane for a slow endpoint.
    const recoveryStep = async (record: SQSRecord, step: RecoveryStep) => {
      if (!lanes) return runRecoveryStep(deps, step);
      const endpoint = step.webhookId;
      if (lanes.isSlowLane(record)) return runRecoveryStep(deps, step, (seen) => lanes.gate.observe(endpoint, seen));
      const who = { account: step.accountId, endpoint };
      const answer = await lanes.gate.enterWhenFree(who);
      if (answer.kind === 'slow') return lanes.slowSteps.send(step);
      if (answer.kind === 'busy') return deps.recoveryQueue.send(step, lanes.busyDelaySeconds);
      let seen: AttemptRecord | undefined;
      try {
        return await runRecoveryStep(timedDeps(endpoint), step, (outcome) => {
          // The slowest attempt of the step is what the gate should hear of.
          if (!seen || outcome.durationMs > seen.durationMs) seen = outcome;
        });
      } finally {
        lanes.gate.leave(who, answer.ticket, seen);
      }
    };
    const attempt = async (record: SQSRecord) => {
      const member = members.get(record);
      try {
        return await attemptRecord(record, member?.queue, () => member?.done());
      } finally {
        member?.done();
      }
    };
    /** One record: `move` sends its job to the slow lane with the batch's other moves; `stay` says it will not move. */
    const attemptRecord = async (record: SQSRecord, move: DeliveryQueue | undefined, stay: () => void) => {
      const job = jobs.get(record) ?? parseJob(record);
      if (job instanceof Error) throw job;
      // Only a shared-lane job may move to the slow lane; no other record holds the batch's moves back.
      if (deps.isDeadLetter?.(record) || 'recovery' in job || lanes?.isSlowLane(record)) stay();
      if (deps.isDeadLetter?.(record)) {
        // A recovery step that dead-lettered leaves its job to the job's own staleness rule (a new one may start).
        if ('recovery' in job) return;
        return failDeadLettered(deps, job);
      }
      if ('recovery' in job) return recoveryStep(record, job.recovery);
      if (pacing && job.ratePerSecond) {
        const admission = await pacing.pace.admit(job, job.ratePerSecond);
        if (admission.kind === 'later') {
          stay();
          const back = lanes?.isSlowLane(record) ? lanes.slowLane : pacing.queue;
          return back.send([{ ...job, paceTurn: admission.turn }], admission.delaySeconds);
        }
        // Its turn has come: if the lanes send it back now, it takes a new one when it returns.
        delete (job as { paceTurn?: number }).paceTurn;
      }
      if (!lanes) return attemptDelivery(pacedDeps(deps, job), job, lookup);
      const endpoint = job.webhookId;
      let slow = false;
      if (lanes.isSlowLane(record)) {
        return attemptDelivery(
          laneRetries(pacedDeps(deps, job), () => slow),
          job,
          lookup,
          (seen) => {
            slow = lanes.gate.isSlow(seen);
            lanes.gate.observe(endpoint, seen);
          },
        );
      }
      // A first attempt names its tenant, so its webhook (read for the batch already) can say before the claim
      // whether every worker together has seen the endpoint failing.
      if (job.seed && lanes.gate.failing(streakOfWebhook(await lookup(job.seed, endpoint)))) {
        return (move ?? lanes.slowLane).send([job]);
      }
      // A retry names its account too; a job from before that change falls back to its webhook.
      const who = { account: job.seed?.accountId ?? job.accountId ?? endpoint, endpoint };
      const answer = await lanes.gate.enterWhenFree(who);
      if (answer.kind === 'slow') return (move ?? lanes.slowLane).send([job]);
      stay();
      if (answer.kind === 'busy') return lanes.sharedLane.send([job], lanes.busyDelaySeconds);
      const { ticket } = answer;
      let seen: AttemptRecord | undefined;
      try {
        return await attemptDelivery(
          laneRetries(pacedDeps(timedDeps(endpoint), job), () => slow),
          job,
          lookup,
          (outcome) => {
            seen = outcome;
            slow = lanes.gate.isSlow(outcome);
          },
        );
      } finally {
        lanes.gate.leave(who, ticket, seen);
      }
    };
    return processPartialResponse(event, attempt, processor, { throwOnFullBatchFailure: false }).finally(() =>
      deps.figureTally?.settle(),
    );
  };
}

/** A record's job or recovery step, or why it is neither (that record alone fails). */
function parseJob(record: SQSRecord): DeliveryJob | { recovery: RecoveryStep } | Error {
  try {
    const body: unknown = JSON.parse(record.body);
    const step = recoveryStepMessage.safeParse(body);
    return step.success ? step.data : deliveryJobMessage.parse(body);
  } catch (error) {
    return error as Error;
  }
}

const refKey = (tenant: Tenant, id: string) => `${tenant.accountId}#${tenant.mode}#${id}`;

/** A webhook's failure streak as its item shows it (none: no streak, or no webhook). */
function streakOfWebhook(webhook: Webhook | null) {
  return webhook ? streakOf(webhook) : null;
}

/**
 * The batch's webhooks, each read once. First attempts name their tenant, so their webhooks are read in one
 * BatchGetItem that starts now, alongside the claims (so a webhook paused in those few milliseconds may still
 * get this attempt, as with a read just after the claim). A retry's tenant comes from its delivery row: those
 * are read one GetItem per webhook when asked for, as are all of them if the batch read fails (one unreadable
 * item then fails only its own deliveries).
 */
function batchLookup(
  webhooks: WebhookReads,
  jobs: readonly (DeliveryJob | { recovery: RecoveryStep } | Error)[],
): WebhookLookup {
  const refs: WebhookRef[] = jobs.flatMap((job) =>
    !(job instanceof Error) && 'seed' in job && job.seed
      ? [{ accountId: job.seed.accountId, mode: job.seed.mode, id: job.webhookId }]
      : [],
  );
  const prefetched = new Set(refs.map((ref) => refKey(ref, ref.id)));
  // null when the batch read fails (its failure is handled here: every claim may come back "already taken").
  const many: Promise<Map<string, Webhook> | null> = refs.length
    ? webhooks
        .getMany(refs)
        .then((found) => new Map(found.map((webhook) => [refKey(webhook, webhook.id), webhook])))
        .catch(() => null)
    : Promise.resolve(null);
  const single = new Map<string, Promise<Webhook | null>>();
  return async (tenant, id) => {
    const key = refKey(tenant, id);
    if (prefetched.has(key)) {
      const batch = await many;
      if (batch) return batch.get(key) ?? null;
    }
    let found = single.get(key);
    if (!found) {
      found = webhooks.get(tenant, id);
      single.set(key, found);
    }
    return found;
  };
}
