// Unit tests of failDeadLettered (lambdas/app/webhooks/dead-letters.ts) on the in-memory fakes: a delivery job
// that dead-lettered re-arms its delivery as a due retry (no silent `pending`, no missing row), ends it visibly
// failed at the DEAD_LETTER_LIMIT-th time (retryable by the customer), and never acts over a live attempt or a
// settled one.
import { describe, expect, it } from 'vitest';
import { type AttemptDeps, attemptDelivery, retryDelivery } from '../../lambdas/app/webhooks/attempts';
import {
  DEAD_LETTER_LIMIT,
  DeadLetterBusyError,
  failDeadLettered,
  REARM_DELAY_MS,
} from '../../lambdas/app/webhooks/dead-letters';
import type { DeliveryJob, Tenant, Webhook } from '../../lambdas/app/webhooks/ports';
import {
  FakeClock,
  InMemoryDeliveryRepository,
  InMemoryWebhookRepository,
  RecordingRetryScheduler,
  ScriptedSender,
  seededRandom,
} from '../support/fakes';

const T0 = Date.UTC(2025, 5, 1, 9, 0, 0);
const CLAIM_MS = 40_000;
const DAYS_30 = 30 * 86_400;
const TENANT: Tenant = { accountId: 'acct_dlq', mode: 'test' };

const webhook: Webhook = {
  ...TENANT,
  id: 'wh_dlq',
  url: 'https://hooks.example.com/in',
  events: ['email.delivered'],
  format: 'standard',
  secret: `whsec_${Buffer.alloc(32, 3).toString('base64')}`,
  active: true,
  createdAt: new Date(T0 - 86_400_000).toISOString(),
  updatedAt: new Date(T0 - 86_400_000).toISOString(),
};

const job: DeliveryJob = {
  deliveryId: 'dlv_01dlq',
  webhookId: webhook.id,
  attempt: 1,
  eventAt: T0 - 1_000,
  seed: {
    ...TENANT,
    eventId: 'evt_01dlq',
    event: 'email.delivered',
    format: 'standard',
    payload: '{"type":"email.delivered"}',
    createdAt: T0,
  },
};

async function setup() {
  const clock = new FakeClock(T0);
  const deliveries = new InMemoryDeliveryRepository();
  const webhooks = new InMemoryWebhookRepository();
  await webhooks.create(webhook);
  const sender = new ScriptedSender(clock);
  const deps: AttemptDeps = {
    webhooks,
    deliveries,
    sender,
    retries: new RecordingRetryScheduler(),
    clock,
    random: seededRandom(),
    policy: { delaysSeconds: [1, 30, 300, 1800] },
    claimMs: CLAIM_MS,
    retentionSeconds: DAYS_30,
  };
  const stored = () => deliveries.items.get(`${webhook.id}#${job.deliveryId}`);
  return { clock, deliveries, sender, deps, stored };
}

/** The worker's first attempt that fails after its claim, before any request (a store error). */
const failing = (deps: AttemptDeps) =>
  attemptDelivery(deps, job, async () => {
    throw new Error('webhooks table unavailable');
  }).catch(() => 'threw');

describe('failDeadLettered', () => {
  it("re-arms a claimed, unattempted first attempt as a due retry once its claim lapsed: the reconciler's job makes the one request", async () => {
    // Arrange: five receives failed after the claim (an outage of ours); the job dead-lettered.
    const { clock, deliveries, deps, sender, stored } = await setup();
    for (let receive = 0; receive < 5; receive++) {
      expect(await failing(deps)).toBe('threw');
      clock.advance(180_000);
    }

    // Act
    const outcome = await failDeadLettered(deps, job);

    // Assert: pending, due after the re-arm delay, no attempt entry, no TTL; then the reconciler's job delivers it.
    expect(outcome).toBe('rearmed');
    const row = stored();
    expect(row).toMatchObject({ status: 'pending', attempts: 0, attemptLog: [], deadLetters: 1 });
    expect(row?.nextAttemptAt).toBe(clock.now() + REARM_DELAY_MS);
    expect(row?.claim).toBeUndefined();
    expect(row?.expiresAt).toBeUndefined();
    expect(await deliveries.listDue(clock.now(), 10)).toEqual([]);
    clock.advance(REARM_DELAY_MS);
    const due = await deliveries.listDue(clock.now(), 10);
    expect(due.map((d) => [d.id, d.attempts])).toEqual([[job.deliveryId, 0]]);
    const { seed: _seed, ...fromReconciler } = job;
    expect(await attemptDelivery(deps, fromReconciler)).toBe('attempted');
    expect(sender.requests.map((r) => r.body)).toEqual([job.seed?.payload]);
    expect(stored()).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it('creates the row, re-armed, from the seed when the worker failed before creating it', async () => {
    // Arrange: no row (every receive failed before createClaimed).
    const { clock, deps, stored } = await setup();

    // Act
    const outcome = await failDeadLettered(deps, job);

    // Assert
    expect(outcome).toBe('rearmed');
    expect(stored()).toMatchObject({
      id: job.deliveryId,
      webhookId: webhook.id,
      ...job.seed,
      status: 'pending',
      attempts: 0,
      maxAttempts: 5,
      attemptLog: [],
      deadLetters: 1,
      nextAttemptAt: clock.now() + REARM_DELAY_MS,
    });
  });

  it('ends the delivery failed at its DEAD_LETTER_LIMIT-th dead letter (a poison job), out of the due list and retryable by the customer', async () => {
    // Arrange: the job dead-letters every time it is re-armed.
    const { clock, deliveries, deps, sender, stored } = await setup();
    const outcomes: string[] = [];
    for (let n = 0; n < DEAD_LETTER_LIMIT; n++) {
      outcomes.push(await failDeadLettered(deps, job));
      clock.advance(REARM_DELAY_MS);
    }

    // Act
    const retried = await retryDelivery(deps, TENANT, webhook.id, job.deliveryId, clock.now());

    // Assert
    expect(outcomes).toEqual([...Array(DEAD_LETTER_LIMIT - 1).fill('rearmed'), 'failed']);
    expect(await deliveries.listDue(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
    expect(retried).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(sender.requests.map((r) => r.body)).toEqual([job.seed?.payload]);
    expect(stored()).toMatchObject({ status: 'succeeded', attempts: 1, deadLetters: DEAD_LETTER_LIMIT });
  });

  it('throws while a live claim holds that attempt (tried again later), and records nothing', async () => {
    // Arrange: the row is claimed now (an attempt in flight).
    const { deps, stored } = await setup();
    await failing(deps);
    const before = structuredClone(stored());

    // Act / Assert
    await expect(failDeadLettered(deps, job)).rejects.toBeInstanceOf(DeadLetterBusyError);
    expect(stored()).toEqual(before);
  });

  it('changes nothing when the attempt was recorded meanwhile (a stale or repeated dead letter)', async () => {
    // Arrange: the first attempt succeeded.
    const { deps, stored } = await setup();
    expect(await attemptDelivery(deps, job)).toBe('attempted');
    const delivered = structuredClone(stored());

    // Act
    const outcomes = [await failDeadLettered(deps, job), await failDeadLettered(deps, job)];

    // Assert
    expect(outcomes).toEqual(['settled', 'settled']);
    expect(stored()).toEqual(delivered);
  });

  it('re-arms a dead-lettered retry with attempts left: it stays on the due list, its attempt entries kept', async () => {
    // Arrange: attempt 1 failed (a retry due), attempt 2's job dead-lettered.
    const { clock, deliveries, deps, sender, stored } = await setup();
    sender.answers({ statusCode: 503, error: 'HTTP 503' });
    await attemptDelivery(deps, job);
    clock.advance(60_000);

    // Act
    const outcome = await failDeadLettered(deps, { deliveryId: job.deliveryId, webhookId: webhook.id, attempt: 2 });

    // Assert
    expect(outcome).toBe('rearmed');
    expect(stored()).toMatchObject({ status: 'pending', attempts: 1, deadLetters: 1 });
    expect(stored()?.attemptLog).toHaveLength(1);
    clock.advance(REARM_DELAY_MS);
    expect((await deliveries.listDue(clock.now(), 10)).map((d) => [d.id, d.attempts])).toEqual([[job.deliveryId, 1]]);
  });
});
