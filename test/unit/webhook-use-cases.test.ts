// Unit tests of the webhook pipeline's use cases (lambdas/app/webhooks/{attempts,dispatch-event,reconcile}.ts,
// DESIGN §4) on the in-memory fakes, with a fake clock — no sleeps: the claimed first attempt, duplicate jobs,
// the retry schedule, paused and deleted webhooks, lost claims, manual retries, test sends, the dispatcher's
// fan-out and the reconciler. Signatures are recomputed here independently of the code under test.
import { createHmac } from 'node:crypto';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type AttemptDeps,
  attemptDelivery,
  RETRY_SETTLE_MS,
  retryDelivery,
  testWebhook,
} from '../../lambdas/app/webhooks/attempts';
import { dispatchEvent } from '../../lambdas/app/webhooks/dispatch-event';
import type {
  Delivery,
  DeliveryJob,
  OutboundRequest,
  Tenant,
  Webhook,
  WebhookSender,
} from '../../lambdas/app/webhooks/ports';
import { type ReconcileDeps, reconcile } from '../../lambdas/app/webhooks/reconcile';
import { ConflictError, NotFoundError } from '../../lambdas/domain/errors';
import type { SendflowEvent } from '../../lambdas/domain/events';
import { type AttemptOutcome, NO_TIMINGS } from '../../lambdas/domain/webhooks/delivery';
import { deliveryIdFor, renderPayload } from '../../lambdas/domain/webhooks/render';
import {
  FakeClock,
  InMemoryDeliveryRepository,
  InMemoryWebhookRepository,
  RecordingDeliveryQueue,
  RecordingRetryScheduler,
  ScriptedSender,
  seededRandom,
} from '../support/fakes';

// Wrap renderPayload so the dispatcher's rendering can be counted; it still renders for real.
vi.mock('../../lambdas/domain/webhooks/render', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../lambdas/domain/webhooks/render')>();
  return { ...real, renderPayload: vi.fn(real.renderPayload) };
});

const T0 = Date.UTC(2025, 5, 1, 9, 0, 0);
const DAYS_30 = 30 * 86_400;
const CLAIM_MS = 60_000;
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const TENANT: Tenant = { accountId: 'acct_main', mode: 'test' };

function newWebhook(overrides: Partial<Webhook> = {}): Webhook {
  return {
    ...TENANT,
    id: 'wh_01main',
    url: 'https://hooks.example.com/sendflow',
    events: ['email.sent', 'email.delivered', 'email.bounced'],
    format: 'standard',
    secret: SECRET,
    active: true,
    createdAt: new Date(T0 - 86_400_000).toISOString(),
    updatedAt: new Date(T0 - 86_400_000).toISOString(),
    ...overrides,
  };
}

function newEvent(overrides: Partial<SendflowEvent> = {}): SendflowEvent {
  return {
    id: 'evt_01jx2a3b4c5d6e7f8g9h0jkmnp',
    type: 'email.delivered',
    ...TENANT,
    timestamp: new Date(T0 - 1_000).toISOString(),
    emailId: 'em_123',
    to: 'user@example.com',
    data: { from: 'Acme <billing@acme.example>', subject: 'Invoice' },
    ...overrides,
  };
}

/** The first-attempt job the dispatcher queues for (event, webhook). */
function firstJob(event: SendflowEvent, webhook: Webhook, createdAt = T0): DeliveryJob {
  return {
    deliveryId: deliveryIdFor(event.id, webhook.id),
    webhookId: webhook.id,
    attempt: 1,
    eventAt: Date.parse(event.timestamp),
    seed: {
      accountId: event.accountId,
      mode: event.mode,
      eventId: event.id,
      event: event.type,
      format: webhook.format,
      payload: renderPayload(event, webhook.format),
      createdAt,
    },
  };
}

const nextJob = (job: DeliveryJob, attempt: number): DeliveryJob => ({
  deliveryId: job.deliveryId,
  webhookId: job.webhookId,
  attempt,
  ...(job.seed ? { accountId: job.seed.accountId } : {}),
});

function setup(delaysSeconds: readonly number[] = [1, 30, 300, 1800]) {
  const clock = new FakeClock(T0);
  const webhooks = new InMemoryWebhookRepository();
  const deliveries = new InMemoryDeliveryRepository();
  const sender = new ScriptedSender(clock);
  const retries = new RecordingRetryScheduler();
  const deps: AttemptDeps = {
    webhooks,
    deliveries,
    sender,
    retries,
    clock,
    random: seededRandom(),
    policy: { delaysSeconds },
    claimMs: CLAIM_MS,
    retentionSeconds: DAYS_30,
  };
  const stored = (webhookId: string, id: string) => deliveries.items.get(`${webhookId}#${id}`);
  return { clock, webhooks, deliveries, sender, retries, deps, stored };
}

/** Checks both signatures as a receiver would, from the secret alone. */
function expectSignedFor(request: OutboundRequest, eventId: string, nowMs: number): void {
  const timestamp = String(Math.floor(nowMs / 1000));
  const hex = createHmac('sha256', SECRET).update(request.body).digest('hex');
  const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
  const v1 = createHmac('sha256', key).update(`${eventId}.${timestamp}.${request.body}`).digest('base64');
  expect(request.headers).toMatchObject({
    'Content-Type': 'application/json',
    'X-Service-Signature': hex,
    'X-Service-Timestamp': timestamp,
    'webhook-id': eventId,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${v1}`,
  });
}

// --- attemptDelivery -----------------------------------------------------------------------------------------

describe('attemptDelivery', () => {
  it('creates the row claimed before sending, sends the seed payload signed, and records the success', async () => {
    // Arrange
    const { webhooks, sender, retries, deps, stored } = setup();
    const webhook = newWebhook();
    await webhooks.create(webhook);
    const event = newEvent();
    const job = firstJob(event, webhook);
    let duringSend: Delivery | undefined;
    sender.answers(() => {
      duringSend = structuredClone(stored(webhook.id, job.deliveryId));
      return { statusCode: 200, response: 'thanks' };
    });

    // Act
    const result = await attemptDelivery(deps, job);

    // Assert
    expect(result).toBe('attempted');
    expect(duringSend).toMatchObject({
      status: 'pending',
      attempts: 0,
      claim: { attempt: 1, until: T0 + CLAIM_MS },
      claimedAt: T0,
      nextAttemptAt: T0,
    });
    expect(sender.requests).toHaveLength(1);
    const [request] = sender.requests as [OutboundRequest];
    expect(request.url).toBe(webhook.url);
    expect(request.body).toBe(job.seed?.payload);
    expectSignedFor(request, event.id, T0);
    expect(stored(webhook.id, job.deliveryId)).toEqual({
      id: job.deliveryId,
      webhookId: webhook.id,
      ...TENANT,
      eventId: event.id,
      event: 'email.delivered',
      format: 'standard',
      payload: job.seed?.payload,
      status: 'succeeded',
      attempts: 1,
      maxAttempts: 5,
      attemptLog: [
        {
          at: T0,
          statusCode: 200,
          durationMs: 25,
          error: null,
          errorClass: null,
          timings: NO_TIMINGS,
          // A success keeps no headers (a failed attempt does: they explain it), so the row stays small.
          kind: 'automatic',
        },
      ],
      response: 'thanks',
      nextAttemptAt: null,
      deliveredAt: T0 + 25,
      createdAt: T0,
      // Kept after the attempt: manual retries asked before it are simultaneous with it.
      claimedAt: T0,
      // When its result was recorded: manual retries asked before that arrived while it was in flight.
      settledAt: T0,
      expiresAt: Math.floor(T0 / 1000) + DAYS_30,
    });
    expect(retries.scheduled).toEqual([]);
  });

  it('skips a duplicate job: nothing sent, nothing recorded, nothing scheduled', async () => {
    // Arrange
    const { webhooks, deliveries, sender, retries, deps, clock } = setup();
    const webhook = newWebhook();
    await webhooks.create(webhook);
    const job = firstJob(newEvent(), webhook);
    await attemptDelivery(deps, job);
    clock.advance(5 * 60_000);

    // Act
    const again = await attemptDelivery(deps, job);

    // Assert
    expect(again).toBe('skipped');
    expect(sender.requests).toHaveLength(1);
    expect(deliveries.records).toHaveLength(1);
    expect(retries.scheduled).toEqual([]);
  });

  it('skips a duplicate that arrives while the first attempt is still in flight (claim held)', async () => {
    // Arrange
    const { webhooks, sender, deps } = setup();
    const webhook = newWebhook();
    await webhooks.create(webhook);
    const job = firstJob(newEvent(), webhook);
    let duplicate: Awaited<ReturnType<typeof attemptDelivery>> | undefined;
    sender.answers(async (n) => {
      if (n === 1) duplicate = await attemptDelivery(deps, job);
      return { statusCode: 200 };
    });

    // Act
    const first = await attemptDelivery(deps, job);

    // Assert
    expect(first).toBe('attempted');
    expect(duplicate).toBe('skipped');
    expect(sender.requests).toHaveLength(1);
  });

  it('skips a job for an attempt that was already made, and a job for a row that does not exist', async () => {
    // Arrange
    const { webhooks, sender, deps } = setup();
    const webhook = newWebhook();
    await webhooks.create(webhook);
    sender.answers({ statusCode: 500, error: 'HTTP 500' });
    const job = firstJob(newEvent(), webhook);
    await attemptDelivery(deps, job);

    // Act
    const stale = await attemptDelivery(deps, nextJob(job, 1));
    const unknown = await attemptDelivery(deps, { deliveryId: 'dlv_ghost', webhookId: webhook.id, attempt: 2 });

    // Assert
    expect(stale).toBe('skipped');
    expect(unknown).toBe('skipped');
    expect(sender.requests).toHaveLength(1);
  });

  it('schedules each retry through the RetryScheduler with the policy delay and attempt + 1, then fails after the last', async () => {
    // Arrange
    const { webhooks, sender, retries, deps, clock, stored } = setup();
    const webhook = newWebhook();
    await webhooks.create(webhook);
    sender.answers((n) => ({ statusCode: 503, error: 'HTTP 503', response: `busy ${n}` }));
    const job = firstJob(newEvent(), webhook);

    // Act: every scheduled job runs when it comes due.
    await attemptDelivery(deps, job);
    while (retries.scheduled.length < 10) {
      const last = retries.scheduled.at(-1);
      const row = stored(webhook.id, job.deliveryId);
      if (!last || row?.status !== 'pending' || last.job.attempt !== (row?.attempts ?? 0) + 1) break;
      clock.set(row.nextAttemptAt ?? 0);
      await attemptDelivery(deps, last.job);
    }

    // Assert
    expect(retries.scheduled).toEqual([
      { job: nextJob(job, 2), delaySeconds: 1 },
      { job: nextJob(job, 3), delaySeconds: 30 },
      { job: nextJob(job, 4), delaySeconds: 300 },
      { job: nextJob(job, 5), delaySeconds: 1800 },
    ]);
    expect(sender.requests).toHaveLength(5);
    const row = stored(webhook.id, job.deliveryId);
    expect(row).toMatchObject({ status: 'failed', attempts: 5, nextAttemptAt: null, response: 'busy 5' });
    expect(row?.attemptLog.map((entry) => entry.at)).toEqual([
      T0,
      T0 + 25 + 1_000,
      T0 + 25 + 1_000 + 25 + 30_000,
      T0 + 25 + 1_000 + 25 + 30_000 + 25 + 300_000,
      T0 + 25 + 1_000 + 25 + 30_000 + 25 + 300_000 + 25 + 1_800_000,
    ]);
    expect(row?.expiresAt).toBe(Math.floor(clock.now() / 1000) + DAYS_30);
  });

  it('records a failing attempt as pending with nextAttemptAt = end of attempt + delay', async () => {
    // Arrange
    const { webhooks, sender, deps, stored } = setup([7]);
    const webhook = newWebhook();
    await webhooks.create(webhook);
    sender.answers({ statusCode: null, durationMs: 300, error: 'timed out after 300 ms', response: '' });
    const job = firstJob(newEvent(), webhook);

    // Act
    await attemptDelivery(deps, job);

    // Assert
    const row = stored(webhook.id, job.deliveryId);
    expect(row).toMatchObject({
      status: 'pending',
      attempts: 1,
      maxAttempts: 2,
      nextAttemptAt: T0 + 300 + 7_000,
      attemptLog: [{ at: T0, statusCode: null, durationMs: 300, error: 'timed out after 300 ms' }],
    });
    expect(row).not.toHaveProperty('claim');
    expect(row).not.toHaveProperty('expiresAt');
  });

  it('schedules nothing after the last allowed attempt fails', async () => {
    // Arrange
    const { webhooks, sender, retries, deps, clock, stored } = setup([5]);
    const webhook = newWebhook();
    await webhooks.create(webhook);
    sender.answers({ statusCode: 500, error: 'HTTP 500' });
    const job = firstJob(newEvent(), webhook);
    await attemptDelivery(deps, job);
    clock.advance(5_025);

    // Act
    const result = await attemptDelivery(deps, nextJob(job, 2));

    // Assert
    expect(result).toBe('attempted');
    expect(retries.scheduled).toEqual([{ job: nextJob(job, 2), delaySeconds: 5 }]);
    expect(stored(webhook.id, job.deliveryId)).toMatchObject({ status: 'failed', attempts: 2, nextAttemptAt: null });
  });

  it('ends a retry of a paused webhook as failed "webhook paused", without a request', async () => {
    // Arrange: attempt 1 failed; the webhook is paused before attempt 2 comes due.
    const { webhooks, sender, retries, deps, clock, stored } = setup();
    const webhook = newWebhook();
    await webhooks.create(webhook);
    sender.answers({ statusCode: 500, error: 'HTTP 500' });
    const job = firstJob(newEvent(), webhook);
    await attemptDelivery(deps, job);
    await webhooks.update(TENANT, webhook.id, { active: false }, new Date(T0).toISOString());
    clock.advance(1_025);

    // Act
    const result = await attemptDelivery(deps, nextJob(job, 2));

    // Assert
    expect(result).toBe('attempted');
    expect(sender.requests).toHaveLength(1);
    expect(retries.scheduled).toHaveLength(1);
    const row = stored(webhook.id, job.deliveryId);
    expect(row).toMatchObject({ status: 'failed', attempts: 2, nextAttemptAt: null, response: '' });
    expect(row?.attemptLog.at(-1)).toEqual({
      at: clock.now(),
      statusCode: null,
      durationMs: 0,
      error: 'webhook paused',
      errorClass: 'webhook_paused',
      timings: { dnsMs: null, connectMs: null, tlsMs: null, ttfbMs: null },
      kind: 'automatic', // the schedule's attempt; no request was made, so no headers
    });
    expect(row?.expiresAt).toBe(Math.floor(clock.now() / 1000) + DAYS_30);
  });

  it('ends the first attempt of a paused webhook as failed "webhook paused" too', async () => {
    // Arrange
    const { webhooks, sender, retries, deps, stored } = setup();
    const webhook = newWebhook({ active: false });
    await webhooks.create(webhook);
    const job = firstJob(newEvent(), webhook);

    // Act
    await attemptDelivery(deps, job);

    // Assert
    expect(sender.requests).toEqual([]);
    expect(retries.scheduled).toEqual([]);
    expect(stored(webhook.id, job.deliveryId)).toMatchObject({
      status: 'failed',
      attempts: 1,
      attemptLog: [{ at: T0, statusCode: null, durationMs: 0, error: 'webhook paused' }],
    });
  });

  it('ends a delivery of a deleted webhook as failed "webhook deleted", without a request', async () => {
    // Arrange
    const { webhooks, sender, retries, deps, clock, stored } = setup();
    const webhook = newWebhook();
    await webhooks.create(webhook);
    sender.answers({ statusCode: 500, error: 'HTTP 500' });
    const job = firstJob(newEvent(), webhook);
    await attemptDelivery(deps, job);
    await webhooks.delete(TENANT, webhook.id);
    clock.advance(1_025);

    // Act
    await attemptDelivery(deps, nextJob(job, 2));

    // Assert
    expect(sender.requests).toHaveLength(1);
    expect(retries.scheduled).toHaveLength(1);
    expect(stored(webhook.id, job.deliveryId)).toMatchObject({ status: 'failed', attempts: 2 });
    // One class for both: the endpoint was not tried because of the webhook's state; the text says which.
    expect(stored(webhook.id, job.deliveryId)?.attemptLog.at(-1)).toMatchObject({
      error: 'webhook deleted',
      errorClass: 'webhook_paused',
    });
  });

  it('looks the webhook up under the delivery’s own tenant, through the given lookup', async () => {
    // Arrange
    const { webhooks, sender, deps } = setup();
    const webhook = newWebhook();
    await webhooks.create(webhook);
    const lookups: { tenant: Tenant; id: string }[] = [];

    // Act
    await attemptDelivery(deps, firstJob(newEvent(), webhook), async (tenant, id) => {
      lookups.push({ tenant: { accountId: tenant.accountId, mode: tenant.mode }, id });
      return webhooks.get(tenant, id);
    });

    // Assert
    expect(lookups).toEqual([{ tenant: TENANT, id: webhook.id }]);
    expect(sender.requests).toHaveLength(1);
  });

  it('schedules nothing when the claim was lost (record refused)', async () => {
    // Arrange
    const { webhooks, deliveries, sender, retries, deps } = setup();
    const webhook = newWebhook();
    await webhooks.create(webhook);
    sender.answers({ statusCode: 500, error: 'HTTP 500' });
    deliveries.refuseRecords = true;

    // Act
    const result = await attemptDelivery(deps, firstJob(newEvent(), webhook));

    // Assert
    expect(result).toBe('attempted');
    expect(deliveries.records.map((r) => r.stored)).toEqual([false]);
    expect(retries.scheduled).toEqual([]);
  });

  it('a holder whose claim lapsed mid-send loses to the job that took over: its failure is neither recorded nor retried', async () => {
    // Arrange: the first send hangs past the claim; meanwhile a redelivered job takes over and succeeds.
    const { webhooks, deliveries, retries, deps, clock, stored } = setup();
    const webhook = newWebhook();
    await webhooks.create(webhook);
    const job = firstJob(newEvent(), webhook);
    let sends = 0;
    let takeover: Awaited<ReturnType<typeof attemptDelivery>> | undefined;
    const slowThenFast: WebhookSender = {
      async send(): Promise<AttemptOutcome> {
        sends += 1;
        const at = clock.now();
        if (sends === 1) {
          clock.advance(CLAIM_MS + 1);
          takeover = await attemptDelivery({ ...deps, sender: slowThenFast }, job);
          return {
            at,
            statusCode: null,
            durationMs: CLAIM_MS + 1,
            error: 'timed out',
            errorClass: 'timeout',
            timings: NO_TIMINGS,
            response: '',
          };
        }
        return {
          at,
          statusCode: 200,
          durationMs: 10,
          error: null,
          errorClass: null,
          timings: NO_TIMINGS,
          response: 'ok',
        };
      },
    };

    // Act
    const first = await attemptDelivery({ ...deps, sender: slowThenFast }, job);

    // Assert
    expect(first).toBe('attempted');
    expect(takeover).toBe('attempted');
    expect(sends).toBe(2);
    expect(deliveries.records.map((r) => r.stored)).toEqual([true, false]);
    expect(stored(webhook.id, job.deliveryId)).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(retries.scheduled).toEqual([]);
  });
});

// --- retryDelivery -------------------------------------------------------------------------------------------

describe('retryDelivery', () => {
  /** A delivery that failed all its automatic attempts. */
  async function exhausted(env: ReturnType<typeof setup>, webhook = newWebhook()) {
    await env.webhooks.create(webhook);
    env.sender.answers({ statusCode: 500, error: 'HTTP 500' });
    const job = firstJob(newEvent(), webhook);
    await attemptDelivery(env.deps, job);
    while (env.stored(webhook.id, job.deliveryId)?.status === 'pending') {
      const row = env.stored(webhook.id, job.deliveryId) as Delivery;
      env.clock.set(row.nextAttemptAt ?? 0);
      await attemptDelivery(env.deps, nextJob(job, row.attempts + 1));
    }
    env.clock.advance(3_600_000);
    return { webhook, job };
  }

  it('makes one immediate attempt with the unchanged body; attempts grows past maxAttempts', async () => {
    // Arrange
    const env = setup();
    const { webhook, job } = await exhausted(env);
    env.sender.answers({ statusCode: 200, response: 'fixed' });
    const scheduledBefore = env.retries.scheduled.length;

    // Act
    const retried = await retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, env.clock.now());

    // Assert
    expect(retried).toMatchObject({ status: 'succeeded', attempts: 6, maxAttempts: 5, response: 'fixed' });
    expect(retried).toEqual(env.stored(webhook.id, job.deliveryId));
    expect(env.sender.requests).toHaveLength(6);
    const last = env.sender.requests.at(-1) as OutboundRequest;
    expect(last.body).toBe(job.seed?.payload);
    expectSignedFor(last, job.seed?.eventId ?? '', env.clock.now());
    expect(env.retries.scheduled).toHaveLength(scheduledBefore);
  });

  it('a failing manual attempt leaves the delivery failed, attempts + 1, and schedules nothing', async () => {
    // Arrange
    const env = setup();
    const { webhook, job } = await exhausted(env);
    const scheduledBefore = env.retries.scheduled.length;

    // Act
    const retried = await retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, env.clock.now());

    // Assert
    expect(retried).toMatchObject({ status: 'failed', attempts: 6, nextAttemptAt: null });
    expect(env.retries.scheduled).toHaveLength(scheduledBefore);
  });

  it('retries a succeeded delivery too', async () => {
    // Arrange
    const env = setup();
    const webhook = newWebhook();
    await env.webhooks.create(webhook);
    const job = firstJob(newEvent(), webhook);
    await attemptDelivery(env.deps, job);
    env.clock.advance(1_000);

    // Act
    const retried = await retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, env.clock.now());

    // Assert
    expect(retried).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(env.sender.requests).toHaveLength(2);
  });

  it('refuses with 409 retry_conflict while the delivery is pending (a retry is scheduled)', async () => {
    // Arrange
    const env = setup();
    const webhook = newWebhook();
    await env.webhooks.create(webhook);
    env.sender.answers({ statusCode: 500, error: 'HTTP 500' });
    const job = firstJob(newEvent(), webhook);
    await attemptDelivery(env.deps, job);

    // Act
    const act = retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, env.clock.now());

    // Assert
    await expect(act).rejects.toBeInstanceOf(ConflictError);
    await expect(act).rejects.toMatchObject({ status: 409, code: 'retry_conflict' });
    expect(env.sender.requests).toHaveLength(1);
  });

  it('refuses with 409 retry_conflict while another manual attempt holds the claim', async () => {
    // Arrange: a manual retry is in flight (its claim unexpired) when a second one comes in.
    const env = setup();
    const { webhook, job } = await exhausted(env);
    let second: unknown;
    env.sender.answers(async (n) => {
      if (n === 6)
        second = await retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, env.clock.now()).catch((e) => e);
      return { statusCode: 200 };
    });

    // Act
    const first = await retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, env.clock.now());

    // Assert
    expect(first).toMatchObject({ status: 'succeeded', attempts: 6 });
    expect(second).toBeInstanceOf(ConflictError);
    expect(second).toMatchObject({ status: 409, code: 'retry_conflict' });
    expect(env.sender.requests).toHaveLength(6);
  });

  it('single-flight: a retry that arrived before the latest attempt was claimed gets 409, even once that attempt ended', async () => {
    // Arrange: two retries arrive together; the first claims and finishes before the second reads the row.
    const env = setup();
    const { webhook, job } = await exhausted(env);
    env.sender.answers({ statusCode: 200 });
    const arrived = env.clock.now();
    env.clock.advance(5);
    const first = await retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, arrived);
    env.clock.advance(50);

    // Act
    const second = retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, arrived);

    // Assert
    expect(first).toMatchObject({ status: 'succeeded', attempts: 6, claimedAt: arrived + 5 });
    await expect(second).rejects.toMatchObject({ status: 409, code: 'retry_conflict' });
    expect(env.sender.requests).toHaveLength(6);
  });

  it('single-flight: a retry that arrived in the very millisecond the latest attempt was claimed is simultaneous (409)', async () => {
    // Arrange
    const env = setup();
    const { webhook, job } = await exhausted(env);
    await retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, env.clock.now());
    const claimedAt = env.stored(webhook.id, job.deliveryId)?.claimedAt as number;

    // Act / Assert
    await expect(retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, claimedAt)).rejects.toMatchObject({
      code: 'retry_conflict',
    });
    expect(env.sender.requests).toHaveLength(6);
  });

  it('single-flight: a retry that arrived while the latest attempt was in flight, handled once it ended, gets 409', async () => {
    // Arrange: the first retry claims, and its endpoint takes 300 ms to answer.
    const env = setup();
    const { webhook, job } = await exhausted(env);
    env.sender.answers(() => {
      env.clock.advance(300);
      return { statusCode: 500, error: 'HTTP 500' };
    });
    const claimedAt = env.clock.now();
    await retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, claimedAt);
    env.clock.advance(1_000);

    // Act: arrived 100 ms after that claim, while the attempt was in flight; handled a second later.
    const late = retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, claimedAt + 100);

    // Assert
    await expect(late).rejects.toMatchObject({ status: 409, code: 'retry_conflict' });
    expect(env.stored(webhook.id, job.deliveryId)).toMatchObject({ claimedAt, settledAt: claimedAt + 300 });
    expect(env.sender.requests).toHaveLength(6);
  });

  it('a retry within RETRY_SETTLE_MS of the last retry is the same click (409); later, a new retry', async () => {
    // Arrange: simultaneous requests can reach the handler up to a second after the first of them ended (a cold
    // process accepts connections one event-loop turn at a time), stamped as arriving after it.
    const env = setup();
    const { webhook, job } = await exhausted(env);
    await retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, env.clock.now());
    const retriedAt = env.stored(webhook.id, job.deliveryId)?.retriedAt as number;
    env.clock.advance(RETRY_SETTLE_MS + 10);

    // Act
    const same = retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, retriedAt + RETRY_SETTLE_MS);
    await expect(same).rejects.toMatchObject({ status: 409, code: 'retry_conflict' });
    const again = await retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, retriedAt + RETRY_SETTLE_MS + 1);

    // Assert
    expect(again).toMatchObject({ attempts: 7 });
    expect(env.sender.requests).toHaveLength(7);
  });

  it('a retry right after a test send or a scheduled attempt ended is a new retry (only a retry opens the window)', async () => {
    // Arrange
    const env = setup();
    const { webhook, job } = await exhausted(env);
    const settledAt = env.stored(webhook.id, job.deliveryId)?.settledAt as number;
    env.clock.advance(1);

    // Act
    const retried = await retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, settledAt + 1);

    // Assert
    expect(retried).toMatchObject({ attempts: 6 });
  });

  it('gives 404 for an unknown delivery, an unknown webhook, and another tenant’s webhook', async () => {
    // Arrange
    const env = setup();
    const { webhook, job } = await exhausted(env);

    // Act / Assert
    await expect(retryDelivery(env.deps, TENANT, webhook.id, 'dlv_unknown', env.clock.now())).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(retryDelivery(env.deps, TENANT, 'wh_unknown', job.deliveryId, env.clock.now())).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(
      retryDelivery(
        env.deps,
        { accountId: TENANT.accountId, mode: 'live' },
        webhook.id,
        job.deliveryId,
        env.clock.now(),
      ),
    ).rejects.toMatchObject({ status: 404, code: 'not_found' });
    expect(env.sender.requests).toHaveLength(5);
  });

  it('gives 404 once the delivery has expired (TTL passed)', async () => {
    // Arrange
    const env = setup();
    const { webhook, job } = await exhausted(env);
    env.clock.advance((DAYS_30 + 1) * 1000);

    // Act / Assert
    await expect(retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, env.clock.now())).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it('refuses with 409 webhook_paused for a paused webhook, sending nothing', async () => {
    // Arrange
    const env = setup();
    const { webhook, job } = await exhausted(env);
    await env.webhooks.update(TENANT, webhook.id, { active: false }, new Date(env.clock.now()).toISOString());

    // Act
    const act = retryDelivery(env.deps, TENANT, webhook.id, job.deliveryId, env.clock.now());

    // Assert
    await expect(act).rejects.toMatchObject({ status: 409, code: 'webhook_paused' });
    expect(env.sender.requests).toHaveLength(5);
    expect(env.stored(webhook.id, job.deliveryId)).toMatchObject({ status: 'failed', attempts: 5 });
  });
});

// --- testWebhook ---------------------------------------------------------------------------------------------

describe('testWebhook', () => {
  it('sends one signed `test` event, records it as a delivery, and returns it', async () => {
    // Arrange
    const env = setup();
    const webhook = newWebhook();
    await env.webhooks.create(webhook);

    // Act
    const delivery = await testWebhook(env.deps, TENANT, webhook.id);

    // Assert
    expect(env.sender.requests).toHaveLength(1);
    const [request] = env.sender.requests as [OutboundRequest];
    const body = JSON.parse(request.body);
    expect(body).toEqual({
      id: delivery.eventId,
      type: 'test',
      timestamp: new Date(T0).toISOString(),
      created_at: new Date(T0).toISOString(),
      data: { message: 'This is a test event from Sendflow.' },
    });
    expect(delivery.eventId).toMatch(/^evt_[0-9a-z]{26}$/);
    expectSignedFor(request, delivery.eventId, T0);
    expect(delivery).toMatchObject({
      id: deliveryIdFor(delivery.eventId, webhook.id),
      event: 'test',
      status: 'succeeded',
      attempts: 1,
      maxAttempts: 1,
      payload: request.body,
    });
    expect(env.stored(webhook.id, delivery.id)).toEqual(delivery);
    expect(env.retries.scheduled).toEqual([]);
  });

  it('never retries a failed test send', async () => {
    // Arrange
    const env = setup();
    const webhook = newWebhook();
    await env.webhooks.create(webhook);
    env.sender.answers({ statusCode: 500, error: 'HTTP 500' });

    // Act
    const delivery = await testWebhook(env.deps, TENANT, webhook.id);

    // Assert
    expect(delivery).toMatchObject({ status: 'failed', attempts: 1, maxAttempts: 1, nextAttemptAt: null });
    expect(env.retries.scheduled).toEqual([]);
  });

  it('sends a Slack webhook the Slack body, unsigned', async () => {
    // Arrange
    const env = setup();
    const webhook = newWebhook({ url: 'https://hooks.slack.com/services/T0/B0/X', format: 'slack' });
    await env.webhooks.create(webhook);

    // Act
    const delivery = await testWebhook(env.deps, TENANT, webhook.id);

    // Assert
    const [request] = env.sender.requests as [OutboundRequest];
    expect(delivery.format).toBe('slack');
    expect(JSON.parse(request.body)).not.toHaveProperty('type');
    expect(request.headers).not.toHaveProperty('X-Service-Signature');
    expect(request.headers).not.toHaveProperty('webhook-signature');
  });

  it('refuses a paused webhook (409 webhook_paused) and an unknown one (404), sending nothing', async () => {
    // Arrange
    const env = setup();
    const webhook = newWebhook({ active: false });
    await env.webhooks.create(webhook);

    // Act / Assert
    await expect(testWebhook(env.deps, TENANT, webhook.id)).rejects.toMatchObject({ code: 'webhook_paused' });
    await expect(testWebhook(env.deps, TENANT, 'wh_unknown')).rejects.toBeInstanceOf(NotFoundError);
    expect(env.sender.requests).toEqual([]);
    expect(env.deliveries.items.size).toBe(0);
  });
});

// --- dispatchEvent -------------------------------------------------------------------------------------------

describe('dispatchEvent', () => {
  const render = vi.mocked(renderPayload);

  beforeEach(() => {
    render.mockClear();
  });

  async function fanOutSetup() {
    const clock = new FakeClock(T0);
    const webhooks = new InMemoryWebhookRepository();
    const deliveryQueue = new RecordingDeliveryQueue();
    const hooks = {
      a: newWebhook({ id: 'wh_a' }),
      paused: newWebhook({ id: 'wh_paused', active: false }),
      unsubscribed: newWebhook({ id: 'wh_unsub', events: ['email.bounced'] }),
      liveMode: newWebhook({ id: 'wh_live', mode: 'live' }),
      otherAccount: newWebhook({ id: 'wh_other', accountId: 'acct_other' }),
      slack: newWebhook({ id: 'wh_slack', format: 'slack', url: 'https://hooks.slack.com/services/T/B/X' }),
      b: newWebhook({ id: 'wh_b' }),
    };
    for (const webhook of Object.values(hooks)) await webhooks.create(webhook);
    return { clock, webhooks, deliveryQueue, hooks, deps: { webhooks, deliveryQueue, clock } };
  }

  it('queues one first-attempt job per active, subscribed webhook of the same account and mode', async () => {
    // Arrange
    const { deliveryQueue, hooks, deps } = await fanOutSetup();
    const event = newEvent();

    // Act
    const queued = await dispatchEvent(deps, event);

    // Assert
    expect(queued).toBe(3);
    expect(deliveryQueue.sent).toHaveLength(1);
    const jobs = deliveryQueue.sent[0]?.jobs ?? [];
    expect(jobs.map((j) => j.webhookId).sort()).toEqual(['wh_a', 'wh_b', 'wh_slack']);
    expect(jobs.find((j) => j.webhookId === 'wh_a')).toEqual(firstJob(event, hooks.a));
    expect(jobs.find((j) => j.webhookId === 'wh_slack')).toEqual(firstJob(event, hooks.slack));
    expect(deliveryQueue.sent[0]?.delaySeconds).toBeUndefined();
  });

  it('gives the same delivery ids when the same event is dispatched twice', async () => {
    // Arrange
    const { deliveryQueue, deps, clock } = await fanOutSetup();
    const event = newEvent();

    // Act
    await dispatchEvent(deps, event);
    clock.advance(60_000);
    await dispatchEvent(deps, event);

    // Assert
    const [first, second] = deliveryQueue.sent.map((s) => s.jobs.map((j) => j.deliveryId).sort());
    expect(second).toEqual(first);
    expect(new Set(first).size).toBe(3);
    expect(first).toContain(deliveryIdFor(event.id, 'wh_a'));
  });

  it('gives another event other delivery ids for the same webhooks', async () => {
    // Arrange
    const { deliveryQueue, deps } = await fanOutSetup();

    // Act
    await dispatchEvent(deps, newEvent({ id: 'evt_01jx2a3b4c5d6e7f8g9h0jkmnp' }));
    await dispatchEvent(deps, newEvent({ id: 'evt_01jx2a3b4c5d6e7f8g9h0jkmnq' }));

    // Assert
    const [first, second] = deliveryQueue.sent.map((s) => new Set(s.jobs.map((j) => j.deliveryId)));
    expect([...(first ?? [])].filter((id) => second?.has(id))).toEqual([]);
  });

  it('renders the body once per format, shared by every webhook of that format', async () => {
    // Arrange
    const { deliveryQueue, deps } = await fanOutSetup();
    const event = newEvent();

    // Act
    await dispatchEvent(deps, event);

    // Assert
    expect(render.mock.calls.map(([, format]) => format).sort()).toEqual(['slack', 'standard']);
    const jobs = deliveryQueue.sent[0]?.jobs ?? [];
    const standard = jobs.filter((j) => j.seed?.format === 'standard').map((j) => j.seed?.payload);
    expect(standard).toEqual([render.mock.results[0]?.value, render.mock.results[0]?.value]);
  });

  it('queues nothing (and sends no request) when no webhook matches', async () => {
    // Arrange
    const { deliveryQueue, deps } = await fanOutSetup();

    // Act
    const queued = await dispatchEvent(deps, newEvent({ type: 'contact.created' }));
    const otherTenant = await dispatchEvent(deps, newEvent({ accountId: 'acct_nobody' }));

    // Assert
    expect(queued).toBe(0);
    expect(otherTenant).toBe(0);
    expect(deliveryQueue.sent).toEqual([]);
  });

  it("fans out to the other mode's webhooks only for that mode's events", async () => {
    // Arrange
    const { deliveryQueue, deps } = await fanOutSetup();

    // Act
    const queued = await dispatchEvent(deps, newEvent({ mode: 'live' }));

    // Assert
    expect(queued).toBe(1);
    expect(deliveryQueue.sent[0]?.jobs.map((j) => j.webhookId)).toEqual(['wh_live']);
    expect(deliveryQueue.sent[0]?.jobs[0]?.seed?.mode).toBe('live');
  });
});

// --- reconcile -----------------------------------------------------------------------------------------------

describe('reconcile', () => {
  /**
   * The reconciler's webhook deps; the email side (scheduled sends) and the outboxes are stubbed empty here so
   * these tests cover the deliveries alone.
   */
  const emptyOutbox = { name: 'empty', clear: async () => {}, due: async () => [] };
  const reconcileDeps = (deps: Pick<ReconcileDeps, 'deliveries' | 'retries' | 'clock'>): ReconcileDeps =>
    ({
      ...deps,
      emails: { listScheduled: async () => [], outbox: emptyOutbox },
      sendScheduler: { schedule: async () => {} },
      events: { publish: async () => {} },
      domains: { outbox: emptyOutbox },
      contacts: { outbox: emptyOutbox },
      suppressions: { outbox: emptyOutbox },
      receivedEmails: { outbox: emptyOutbox },
    }) as unknown as ReconcileDeps;

  async function pendingRows() {
    const clock = new FakeClock(T0);
    const deliveries = new InMemoryDeliveryRepository();
    const retries = new RecordingRetryScheduler();
    const row = (id: string, nextAttemptAt: number | null, attempts: number, status: Delivery['status'] = 'pending') =>
      ({
        id,
        webhookId: 'wh_r',
        ...TENANT,
        eventId: `evt_${id}`,
        event: 'email.sent',
        format: 'standard',
        payload: '{}',
        status,
        attempts,
        maxAttempts: 5,
        attemptLog: [],
        response: '',
        nextAttemptAt,
        deliveredAt: null,
        createdAt: T0 - 86_400_000,
      }) satisfies Delivery;
    for (const delivery of [
      row('dlv_overdue', T0 - 10 * 60_000, 2),
      row('dlv_in_grace', T0 - 30_000, 1),
      row('dlv_future', T0 + 5 * 60_000, 3),
      row('dlv_long_overdue', T0 - 60 * 60_000, 1),
      // A first attempt in flight: its job is the queue's, never the reconciler's (it is in no due list).
      row('dlv_first_in_flight', T0 - 60 * 60_000, 0),
      row('dlv_failed', null, 5, 'failed'),
      row('dlv_succeeded', null, 1, 'succeeded'),
    ])
      await deliveries.createClaimed(delivery);
    return { clock, deliveries, retries, deps: reconcileDeps({ deliveries, retries, clock }) };
  }

  it('re-queues only the attempts overdue by more than the grace, at once, oldest due first', async () => {
    // Arrange
    const { retries, deps } = await pendingRows();

    // Act
    const count = await reconcile(deps, { graceMs: 60_000 });

    // Assert
    expect(count).toBe(2);
    expect(retries.scheduled).toEqual([
      { job: { deliveryId: 'dlv_long_overdue', webhookId: 'wh_r', attempt: 2 }, delaySeconds: 0 },
      { job: { deliveryId: 'dlv_overdue', webhookId: 'wh_r', attempt: 3 }, delaySeconds: 0 },
    ]);
  });

  it('pages through every overdue row, `limit` at a time (default 500), each page after the last', async () => {
    // Arrange
    const { retries, deps, deliveries } = await pendingRows();
    const overdue = (await deliveries.listDue(T0, 500)).map((d) => d.id);
    const listDue = vi.spyOn(deliveries, 'listDue');

    // Act: pages of one; then a run whose time budget is spent after its first page.
    const paged = await reconcile(deps, { graceMs: 0, limit: 1 });
    const onePage = retries.scheduled.length;
    await reconcile(deps, { graceMs: 0, limit: 1, budgetMs: 0 });

    // Assert
    expect(overdue.length).toBeGreaterThan(1);
    expect(paged).toBe(overdue.length);
    expect(retries.scheduled.slice(0, onePage).map((s) => s.job.deliveryId)).toEqual(overdue);
    expect(retries.scheduled.length - onePage).toBe(1);
    expect(listDue.mock.calls[0]).toEqual([T0, 1, undefined]);
    expect(listDue.mock.calls[1]?.[2]?.id).toBe(overdue[0]);
    expect(listDue.mock.calls).toHaveLength(overdue.length + 1 + 1);
  });

  it('recovers a first attempt whose worker died between claim and request through its queue, not the reconciler: made once', async () => {
    // Arrange: the worker created the row claimed, then failed before sending (its webhook read threw), so the
    // queue keeps the job and hands it out again after its visibility timeout (180 s, past the claim).
    const env = setup();
    const webhook = newWebhook();
    await env.webhooks.create(webhook);
    const job = firstJob(newEvent(), webhook);
    const died = attemptDelivery(env.deps, job, async () => {
      throw new Error('webhooks table unavailable');
    });
    await expect(died).rejects.toThrow('webhooks table unavailable');
    const stranded = env.stored(webhook.id, job.deliveryId);

    // Act: the reconciler runs long after; then the queue redelivers the job, twice (a duplicate receive).
    env.clock.advance(180_000);
    const requeued = await reconcile(
      reconcileDeps({ deliveries: env.deliveries, retries: env.retries, clock: env.clock }),
      { graceMs: 0 },
    );
    const results = [await attemptDelivery(env.deps, job), await attemptDelivery(env.deps, job)];

    // Assert: the row was claimed and unattempted; the redelivery made the one request, the duplicate none.
    expect(stranded).toMatchObject({ status: 'pending', attempts: 0, claim: { attempt: 1 } });
    expect(requeued).toBe(0);
    expect(env.retries.scheduled).toEqual([]);
    expect(results).toEqual(['attempted', 'skipped']);
    expect(env.sender.requests.map((r) => r.body)).toEqual([job.seed?.payload]);
    expect(env.stored(webhook.id, job.deliveryId)).toMatchObject({ status: 'succeeded', attempts: 1 });
  });
});
