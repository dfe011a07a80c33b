// Use cases that make attempts (spec §3.2, §4.1; DESIGN §4): the pipeline's automatic attempt, the manual
// retry, and the test send. Every attempt is claimed first (a conditional write on the attempt number), so a
// duplicated job never sends the same attempt twice nor counts it twice.
import { ConflictError, NotFoundError } from '../../domain/errors';
import { type SendflowEvent, TEST_EVENT } from '../../domain/events';
import { timeOrderedId } from '../../domain/ids';
import {
  type AttemptKind,
  type AttemptOutcome,
  afterAttempt,
  type DeliveryStatus,
  isSuccess,
  NO_TIMINGS,
  type Transition,
} from '../../domain/webhooks/delivery';
import { type AttemptFigure, figureOf } from '../../domain/webhooks/delivery-figures';
import { activeDestination } from '../../domain/webhooks/destination';
import { ATTEMPT_ERRORS } from '../../domain/webhooks/error-class';
import { deliveryIdFor, renderPayload } from '../../domain/webhooks/render';
import { maxAttempts, type RetryPolicy } from '../../domain/webhooks/retry-policy';
import type { Clock, RandomBytes } from '../ports';
import { noTelemetry, type Telemetry } from '../telemetry';
import type { Tracing } from '../tracing';
import { traceAttempt } from './attempt-trace';
import { assertActive, getWebhook } from './manage-webhooks';
import type { OrderLanes } from './order-lanes';
import { admitInOrder, releaseNext } from './ordering';
import type {
  AttemptRecord,
  Claim,
  Delivery,
  DeliveryJob,
  DeliveryRepository,
  OutboundRequest,
  RetryScheduler,
  Tenant,
  Webhook,
  WebhookRepository,
  WebhookSender,
} from './ports';
import { prepareAttempt, type TransformDeps } from './transform';

export interface AttemptDeps extends TransformDeps {
  readonly webhooks: WebhookRepository;
  readonly deliveries: DeliveryRepository;
  readonly sender: WebhookSender;
  readonly retries: RetryScheduler;
  readonly clock: Clock;
  readonly random: RandomBytes;
  readonly policy: RetryPolicy;
  /** How long a claim holds: longer than one attempt can take. */
  readonly claimMs: number;
  /** Claims of an earlier epoch are void (see Claim.epoch); 0 where claims only lapse. */
  readonly claimEpoch?: number;
  /** How long final deliveries stay in the log (spec: 30 days). */
  readonly retentionSeconds: number;
  /** Told of every attempt (a log line and metrics); nothing when absent. */
  readonly telemetry?: Telemetry;
  /** Each attempt's span, and its request's `traceparent` (app/webhooks/attempt-trace); off when absent. */
  readonly tracing?: Tracing;
  /** Per-email ordering's lanes (app/webhooks/ordering); without them `per_email` has no effect. */
  readonly orderLanes?: OrderLanes;
  /**
   * Told of every recorded attempt that made a request, after it is recorded: the endpoint's health bookkeeping
   * (auto-disable: app/webhooks/endpoint-watch). Nothing when absent.
   */
  readonly watch?: (seen: {
    readonly webhook: Webhook;
    readonly outcome: AttemptOutcome;
    readonly kind: AttemptKind;
    readonly attempt: number;
  }) => Promise<void>;
  /**
   * Told of every recorded attempt, requested or not: its webhook's hourly figures (app/webhooks/delivery-figures),
   * which the charts read. Best effort where wired (a lost count never fails the attempt); nothing when absent.
   */
  readonly countFigures?: (
    attempt: {
      readonly webhookId: string;
      readonly deliveryId: string;
      readonly attempt: number;
      readonly at: number;
      readonly kind: AttemptKind;
    },
    figure: AttemptFigure,
  ) => Promise<void>;
}

export type WebhookLookup = (tenant: Tenant, id: string) => Promise<Webhook | null>;

const ATTEMPT_LOG_LIMIT = 50;

/**
 * Headers are kept on the latest attempt only, and only when it failed: a row stays within about 1 KB more than
 * before them while it has an exchange worth reading, and a delivered row keeps its size (one write unit).
 */
function withoutHeaders(entry: AttemptRecord): AttemptRecord {
  const { requestHeaders: _sent, responseHeaders: _answered, ...rest } = entry;
  return rest;
}

/** The delivery worker's job: attempt `job.attempt` of a delivery, then schedule the next one if it failed. */
export async function attemptDelivery(
  deps: AttemptDeps,
  job: DeliveryJob,
  lookup: WebhookLookup = (tenant, id) => deps.webhooks.get(tenant, id),
  /** Told how the endpoint answered, when a request was made (endpoint health). */
  observe?: (attempt: AttemptRecord) => void,
): Promise<'attempted' | 'skipped' | 'held'> {
  const claim = claimFor(deps, job.attempt);
  let delivery: Delivery | null = null;
  if (job.seed && job.attempt === 1) {
    const fresh = newDelivery(
      deps,
      { id: job.deliveryId, webhookId: job.webhookId, ...job.seed },
      claim,
      deps.clock.now(),
    );
    if (await deps.deliveries.createClaimed(fresh)) delivery = fresh;
  }
  delivery ??= await deps.deliveries.claim(
    job.webhookId,
    job.deliveryId,
    { attemptsBefore: job.attempt - 1, statuses: ['pending'], nowMs: deps.clock.now() },
    claim,
  );
  if (!delivery) return 'skipped';

  const webhook = await lookup(delivery, delivery.webhookId);
  // A `per_email` webhook's delivery waits for its email's earlier events (stored held; woken when they finish).
  const admitted = await admitInOrder(deps, delivery, webhook, job.attempt);
  if (!admitted) return 'held';
  delivery = admitted;
  // The event's time rides on first-attempt jobs; a first attempt the reconciler re-queued has only the row's.
  const eventAt = job.attempt === 1 ? (job.eventAt ?? delivery.createdAt) : undefined;
  const made = await makeAttempt(deps, delivery, webhook, 'automatic', job.attempt, eventAt);
  const { transition, recorded } = made;
  const last = made.delivery.attemptLog.at(-1);
  if (made.requested && last) observe?.(last);
  if (recorded) await releaseNext(deps, made.delivery, webhook);
  if (recorded && transition.retryInSeconds !== null) {
    await deps.retries.schedule(
      {
        deliveryId: delivery.id,
        webhookId: delivery.webhookId,
        attempt: job.attempt + 1,
        accountId: delivery.accountId,
        // The pace of the day: a retry follows the webhook's rate limit as it is now.
        ...(webhook?.rateLimitPerSecond ? { ratePerSecond: webhook.rateLimitPerSecond } : {}),
      },
      transition.retryInSeconds,
    );
  }
  return 'attempted';
}

/**
 * How long after a manual retry was claimed another one still counts as the same click. Simultaneous requests can
 * be stamped as arriving up to about a second apart on a busy process (connections are accepted one event-loop
 * turn at a time, and a cold process takes long turns), so a burst of retries is one retry within this window.
 * Only a manual retry opens it: a retry right after a test send or a scheduled attempt is a new retry.
 */
export const RETRY_SETTLE_MS = 2_000;

/**
 * POST …/deliveries/:id/retry: one immediate attempt with the unchanged body; 409 while one is due or running.
 * Single-flight: `requestedAt` is when the request arrived (API Gateway's requestTimeEpoch, stamped before the
 * authorizer runs). The retry claims only if no attempt was in flight at that moment or claimed after it (no
 * attempt claimed or settled at or after it), so of any number of simultaneous retries exactly one makes an
 * attempt, even those handled (their key lookup slow) after the first had already finished; and none within
 * RETRY_SETTLE_MS of the last manual retry's claim. A retry asked later is a new retry.
 */
export async function retryDelivery(
  deps: AttemptDeps,
  tenant: Tenant,
  webhookId: string,
  deliveryId: string,
  requestedAt: number,
): Promise<Delivery> {
  const webhook = await getWebhook(deps, tenant, webhookId);
  const current = await deps.deliveries.get(webhookId, deliveryId, deps.clock.now());
  if (!current) throw new NotFoundError(`No delivery with id ${deliveryId}.`);
  const conflict = new ConflictError(
    `An attempt of this delivery is scheduled or in flight, or another retry began less than ${RETRY_SETTLE_MS / 1000} s before this one; retry once it has ended.`,
    'retry_conflict',
  );
  const retriedBefore = requestedAt - RETRY_SETTLE_MS;
  if (busySince(deps, current, requestedAt) || (current.retriedAt ?? -1) >= retriedBefore) throw conflict;
  assertActive(webhook);
  const delivery = await attemptAgain(deps, webhook, current, requestedAt, ['failed', 'succeeded'], undefined, {
    retriedBefore,
  });
  if (!delivery) throw conflict;
  return delivery;
}

/**
 * Whether a delivery cannot take a manual attempt asked at `requestedAt`: one is scheduled (pending) or in flight,
 * or one was in flight at that moment or claimed after it (claimed or settled at or after it).
 */
export function busySince(deps: Pick<AttemptDeps, 'clock' | 'claimEpoch'>, current: Delivery, requestedAt: number) {
  if (current.status === 'pending' || claimHeld(current.claim, deps.clock.now(), deps.claimEpoch ?? 0)) return true;
  return Math.max(current.claimedAt ?? -1, current.settledAt ?? -1) >= requestedAt;
}

/**
 * One manual attempt of a delivery in one of `statuses`, of an active webhook, claimed only if no attempt was
 * claimed since `requestedAt` (single-flight); null when someone else's attempt came first, or when its claim
 * lapsed and another attempt took over (a result that was not stored is not reported).
 */
export async function attemptAgain(
  deps: AttemptDeps,
  webhook: Webhook,
  current: Delivery,
  requestedAt: number,
  statuses: readonly DeliveryStatus[],
  /** The recovery job making it (see Claim.by). */
  by?: string,
  /** A manual retry: none claimed at or after this (RETRY_SETTLE_MS). */
  manual?: { retriedBefore: number },
): Promise<Delivery | null> {
  const claimed = await deps.deliveries.claim(
    webhook.id,
    current.id,
    {
      attemptsBefore: current.attempts,
      statuses,
      nowMs: deps.clock.now(),
      claimedBefore: requestedAt,
      ...(manual ?? {}),
    },
    { ...claimFor(deps, current.attempts + 1), ...(by ? { by } : {}) },
  );
  if (!claimed) return null;
  const { delivery, recorded } = await makeAttempt(deps, claimed, webhook, 'manual', current.attempts + 1);
  return recorded ? delivery : null;
}

/** POST /v1/webhooks/:id/test: one synchronous attempt of a `test` event, recorded, never retried. */
export async function testWebhook(deps: AttemptDeps, tenant: Tenant, webhookId: string): Promise<Delivery> {
  const webhook = await getWebhook(deps, tenant, webhookId);
  assertActive(webhook);
  const now = deps.clock.now();
  const event: SendflowEvent = {
    id: timeOrderedId('evt', now, deps.random),
    type: TEST_EVENT,
    accountId: tenant.accountId,
    mode: tenant.mode,
    timestamp: new Date(now).toISOString(),
    data: { message: 'This is a test event from Sendflow.' },
  };
  const row = newDelivery(
    deps,
    {
      id: deliveryIdFor(event.id, webhook.id),
      webhookId: webhook.id,
      accountId: tenant.accountId,
      mode: tenant.mode,
      eventId: event.id,
      event: TEST_EVENT,
      format: webhook.format,
      payload: renderPayload(event, webhook.format),
      createdAt: now,
    },
    claimFor(deps, 1),
    now,
    // One attempt, never retried automatically: the log says so (a manual retry may still add more).
    1,
  );
  // Never due: a test send that dies mid-attempt is not picked up by the reconciler (no automatic retries).
  const delivery: Delivery = { ...row, nextAttemptAt: null };
  await deps.deliveries.createClaimed(delivery);
  return (await makeAttempt(deps, delivery, webhook, 'test', 1)).delivery;
}

/**
 * The one request an attempt makes: the body to the webhook's URL, or to its AWS destination (the sender chooses
 * by `destination`: adapters/destination-sender.ts), with what such a destination labels the message with.
 */
export function outboundOf(
  webhook: Webhook,
  delivery: Pick<Delivery, 'accountId' | 'eventId' | 'event' | 'id' | 'payload' | 'emailId'>,
  request: OutboundRequest,
): OutboundRequest {
  const destination = activeDestination(webhook);
  if (!destination) return request;
  return {
    ...request,
    destination,
    context: {
      accountId: delivery.accountId,
      eventId: delivery.eventId,
      eventType: delivery.event,
      deliveryId: delivery.id,
      orderingKey: delivery.emailId ?? emailIdIn(delivery.payload) ?? delivery.eventId,
    },
  };
}

/** The email a standard payload is about (`data.email_id`), if it names one. */
function emailIdIn(payload: string): string | undefined {
  try {
    const parsed = JSON.parse(payload) as { data?: { email_id?: unknown } };
    return typeof parsed.data?.email_id === 'string' ? parsed.data.email_id : undefined;
  } catch {
    return undefined;
  }
}

/** A delivery its transformation canceled: final, no request made, nothing to retry (recorded `succeeded`). */
function canceledTransition(attemptsBefore: number): Transition {
  return {
    status: 'succeeded',
    attempts: attemptsBefore + 1,
    nextAttemptAt: null,
    retryInSeconds: null,
    deliveredAt: null,
  };
}

function claimFor(deps: Pick<AttemptDeps, 'clock' | 'claimMs' | 'claimEpoch'>, attempt: number): Claim {
  return { attempt, until: deps.clock.now() + deps.claimMs, epoch: deps.claimEpoch ?? 0 };
}

/** Whether a claim still stands: unexpired, and not from an earlier epoch (a runtime that has died). */
function claimHeld(claim: Claim | undefined, now: number, epoch: number): boolean {
  return claim !== undefined && claim.until > now && (claim.epoch ?? 0) >= epoch;
}

function newDelivery(
  deps: Pick<AttemptDeps, 'policy'>,
  fields: Pick<
    Delivery,
    'id' | 'webhookId' | 'accountId' | 'mode' | 'eventId' | 'event' | 'format' | 'payload' | 'createdAt'
  >,
  claim: Claim,
  claimedAt: number,
  /** Automatic attempts this delivery may get: the retry policy's, or 1 for a test send. */
  attemptLimit = maxAttempts(deps.policy),
): Delivery {
  return {
    ...fields,
    status: 'pending',
    attempts: 0,
    maxAttempts: attemptLimit,
    attemptLog: [],
    response: '',
    // Due now: if the claim holder dies before recording, the reconciler finds the row once the claim lapses.
    nextAttemptAt: fields.createdAt,
    deliveredAt: null,
    claim,
    claimedAt,
  };
}

/** Sends (unless the webhook is paused or gone), applies the state machine and records under the claim. */
async function makeAttempt(
  deps: AttemptDeps,
  delivery: Delivery,
  webhook: Webhook | null,
  kind: AttemptKind,
  attempt: number,
  /** First automatic attempts: when their event happened (epoch ms). */
  eventAt?: number,
): Promise<{ delivery: Delivery; transition: Transition; recorded: boolean; requested: boolean }> {
  let outcome: AttemptOutcome;
  let transition: Transition;
  let sent: Record<string, string> | undefined;
  let requested = false;
  if (webhook?.active) {
    // Signed with the secrets live now, so a retry of an old delivery uses the secrets of the day; through the
    // webhook's transformation when it has one (which may fail the attempt or cancel the delivery).
    const prepared = await prepareAttempt(deps, webhook, delivery, deps.clock.now());
    if (prepared.kind === 'send') {
      sent = prepared.request.headers;
      requested = true;
      // The attempt's span; its `traceparent` goes with the request but not into the stored log (the row keeps `trace`).
      const traced = traceAttempt(deps.tracing, delivery, prepared.request.url, attempt, kind);
      const request = { ...prepared.request, headers: { ...prepared.request.headers, ...traced.headers } };
      outcome = await deps.sender.send(outboundOf(webhook, delivery, request));
      transition = afterAttempt(delivery.attempts, outcome, kind, deps.policy);
      traced.end(outcome, transition.status);
    } else {
      outcome = prepared.outcome;
      transition =
        prepared.kind === 'canceled'
          ? canceledTransition(delivery.attempts)
          : afterAttempt(delivery.attempts, outcome, kind, deps.policy);
    }
  } else {
    // A paused or deleted webhook gets no request: the delivery ends failed (retryable after a resume). Both are
    // `webhook_paused`: the class says the endpoint was not tried because of the webhook's state; the text says which.
    const at = deps.clock.now();
    outcome = {
      at,
      statusCode: null,
      durationMs: 0,
      error: webhook ? ATTEMPT_ERRORS.webhookPaused : ATTEMPT_ERRORS.webhookDeleted,
      errorClass: 'webhook_paused',
      timings: NO_TIMINGS,
      response: '',
    };
    transition = afterAttempt(delivery.attempts, outcome, 'manual', deps.policy);
  }
  const { response, ...outcomeEntry } = outcome;
  // The exchange's headers explain a failure; a success's would only grow the row past 1 KB (2 write units).
  const failedEntry = !isSuccess(outcome) && outcome.error !== null;
  const paced = transition.retryAfterSeconds !== undefined ? { retryAfterSeconds: transition.retryAfterSeconds } : {};
  const entry: AttemptRecord = failedEntry
    ? { ...outcomeEntry, kind, ...(sent ? { requestHeaders: sent } : {}), ...paced }
    : { ...withoutHeaders(outcomeEntry), kind };
  const { claim: _released, expiresAt: _expiry, ...rest } = delivery;
  const final = transition.status !== 'pending';
  const next: Delivery = {
    ...rest,
    status: transition.status,
    attempts: transition.attempts,
    attemptLog: [...delivery.attemptLog.map(withoutHeaders), entry].slice(-ATTEMPT_LOG_LIMIT),
    response,
    nextAttemptAt: transition.nextAttemptAt,
    // Null unless delivered: a failed manual retry of a succeeded delivery is not delivered any more.
    deliveredAt: transition.deliveredAt,
    settledAt: deps.clock.now(),
    ...(final ? { expiresAt: Math.floor(deps.clock.now() / 1000) + deps.retentionSeconds } : {}),
  };
  const recorded = await deps.deliveries.record(next, attempt);
  if (recorded) {
    const figure = figureOf({
      deliveryStatus: transition.status,
      errorClass: outcome.errorClass,
      requested,
      durationMs: outcome.durationMs,
    });
    await Promise.all([
      // The endpoint's health counts requests only: a transformation's failure says nothing of the endpoint.
      webhook?.active && requested && deps.watch ? deps.watch({ webhook, outcome, kind, attempt }) : undefined,
      deps.countFigures?.(
        { webhookId: delivery.webhookId, deliveryId: delivery.id, attempt, at: outcome.at, kind },
        figure,
      ),
    ]);
  }
  (deps.telemetry ?? noTelemetry).attempted({
    deliveryId: delivery.id,
    webhookId: delivery.webhookId,
    accountId: delivery.accountId,
    mode: delivery.mode,
    eventType: delivery.event,
    attempt,
    kind,
    requested,
    statusCode: outcome.statusCode,
    durationMs: outcome.durationMs,
    error: outcome.error,
    errorClass: outcome.errorClass,
    deliveryStatus: transition.status,
    recorded,
    ...(eventAt !== undefined ? { firstAttemptLagMs: Math.max(0, outcome.at - eventAt) } : {}),
  });
  return { delivery: next, transition, recorded, requested };
}
