// SQS handler of the deliveries queues (the shared lane and the slow lane): one attempt per record, records of
// a batch in parallel. The endpoint's failures are outcomes (recorded, retried on schedule), not batch
// failures; only our own errors make SQS redeliver. Webhooks are read once per batch (on AWS kept for
// SF_WEBHOOK_CACHE_SECONDS: `webhookReads`). In the shared lane, a job whose endpoint is slow moves to the slow
// lane unattempted, and one whose endpoint already has its share of
// attempts in flight waits for one of them to end, or comes back a moment later. A recovery job's step rides on
// the shared lane too: it makes its own paced attempts (app/webhooks/recoveries). The deliveries DLQs are
// consumed here too: a dead-lettered job's delivery is recorded failed (app/webhooks/dead-letters), never attempted.
// A job of a paced webhook (its `ratePerSecond`) waits for its turn before anything else, or goes back to its
// queue until then (app/webhooks/pace): no claim, no attempt, no receive counted toward the DLQ.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { attemptDelivery, type WebhookLookup } from '../../app/webhooks/attempts';
import { failDeadLettered } from '../../app/webhooks/dead-letters';
import type { EndpointGate } from '../../app/webhooks/endpoint-gate';
import type { EndpointPace } from '../../app/webhooks/pace';
import type {
  AttemptRecord,
  DeliveryJob,
  DeliveryQueue,
  RecoveryQueue,
  RecoveryStep,
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
  return (event: SQSEvent) => {
    const jobs = new Map(event.Records.map((record) => [record, parseJob(record)]));
    const lookup = batchLookup(deps.webhookReads ?? deps.webhooks, [...jobs.values()]);
    const processor = new BatchProcessor(EventType.SQS);
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
      const job = jobs.get(record) ?? parseJob(record);
      if (job instanceof Error) throw job;
      if (deps.isDeadLetter?.(record)) {
        // A recovery step that dead-lettered leaves its job to the job's own staleness rule (a new one may start).
        if ('recovery' in job) return;
        return failDeadLettered(deps, job);
      }
      if ('recovery' in job) return recoveryStep(record, job.recovery);
      if (pacing && job.ratePerSecond) {
        const admission = await pacing.pace.admit(job, job.ratePerSecond);
        if (admission.kind === 'later') {
          const back = lanes?.isSlowLane(record) ? lanes.slowLane : pacing.queue;
          return back.send([{ ...job, paceTurn: admission.turn }], admission.delaySeconds);
        }
        // Its turn has come: if the lanes send it back now, it takes a new one when it returns.
        delete (job as { paceTurn?: number }).paceTurn;
      }
      if (!lanes) return attemptDelivery(pacedDeps(deps, job), job, lookup);
      const endpoint = job.webhookId;
      if (lanes.isSlowLane(record)) {
        return attemptDelivery(pacedDeps(deps, job), job, lookup, (seen) => lanes.gate.observe(endpoint, seen));
      }
      // A retry names its account too; a job from before that change falls back to its webhook.
      const who = { account: job.seed?.accountId ?? job.accountId ?? endpoint, endpoint };
      const answer = await lanes.gate.enterWhenFree(who);
      if (answer.kind === 'slow') return lanes.slowLane.send([job]);
      if (answer.kind === 'busy') return lanes.sharedLane.send([job], lanes.busyDelaySeconds);
      const { ticket } = answer;
      let seen: AttemptRecord | undefined;
      try {
        return await attemptDelivery(pacedDeps(timedDeps(endpoint), job), job, lookup, (outcome) => {
          seen = outcome;
        });
      } finally {
        lanes.gate.leave(who, ticket, seen);
      }
    };
    return processPartialResponse(event, attempt, processor, { throwOnFullBatchFailure: false });
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
