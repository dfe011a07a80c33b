// Unit tests of failDeadLettered (lambdas/app/webhooks/dead-letters.ts) on the in-memory fakes: a delivery job
// that dead-lettered ends its delivery visibly failed (no silent `pending`, no missing row), retryable by the
// customer, once, and never over a live attempt or a settled one.
import { describe, expect, it } from 'vitest';
import { type AttemptDeps, attemptDelivery, retryDelivery } from '../../lambdas/app/webhooks/attempts';
import { DeadLetterBusyError, failDeadLettered } from '../../lambdas/app/webhooks/dead-letters';
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
  it('records a claimed, unattempted first attempt failed once its claim lapsed: no attempt entry, TTL, nothing due', async () => {
    // Arrange: five receives failed after the claim; the job dead-lettered.
    const { clock, deliveries, deps, stored } = await setup();
    for (let receive = 0; receive < 5; receive++) {
      expect(await failing(deps)).toBe('threw');
      clock.advance(180_000);
    }

    // Act
    const outcome = await failDeadLettered(deps, job);

    // Assert
    expect(outcome).toBe('failed');
    const row = stored();
    expect(row).toMatchObject({ status: 'failed', attempts: 0, attemptLog: [], nextAttemptAt: null });
    expect(row?.claim).toBeUndefined();
    expect(row?.expiresAt).toBe(Math.floor(clock.now() / 1000) + DAYS_30);
    expect(await deliveries.listDue(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
  });

  it('creates the row failed from the seed when the worker failed before creating it', async () => {
    // Arrange: no row (every receive failed before createClaimed).
    const { deps, stored } = await setup();

    // Act
    const outcome = await failDeadLettered(deps, job);

    // Assert
    expect(outcome).toBe('failed');
    expect(stored()).toMatchObject({
      id: job.deliveryId,
      webhookId: webhook.id,
      ...job.seed,
      status: 'failed',
      attempts: 0,
      maxAttempts: 5,
      attemptLog: [],
    });
  });

  it('leaves the delivery retryable by the customer: a manual retry makes the one request', async () => {
    // Arrange
    const { clock, deps, sender, stored } = await setup();
    await failing(deps);
    clock.advance(180_000);
    await failDeadLettered(deps, job);
    clock.advance(5_000);

    // Act
    const retried = await retryDelivery(deps, TENANT, webhook.id, job.deliveryId, clock.now());

    // Assert
    expect(retried).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(sender.requests.map((r) => r.body)).toEqual([job.seed?.payload]);
    expect(stored()).toMatchObject({ status: 'succeeded', attempts: 1 });
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

  it('ends a dead-lettered retry failed too: it leaves the due list (the reconciler would re-queue it for ever)', async () => {
    // Arrange: attempt 1 failed (a retry due), attempt 2's job dead-lettered.
    const { clock, deliveries, deps, sender, stored } = await setup();
    sender.answers({ statusCode: 503, error: 'HTTP 503' });
    await attemptDelivery(deps, job);
    clock.advance(60_000);
    const dueBefore = await deliveries.listDue(clock.now(), 10);

    // Act
    const outcome = await failDeadLettered(deps, { deliveryId: job.deliveryId, webhookId: webhook.id, attempt: 2 });

    // Assert
    expect(dueBefore.map((d) => d.id)).toEqual([job.deliveryId]);
    expect(outcome).toBe('failed');
    expect(stored()).toMatchObject({ status: 'failed', attempts: 1, nextAttemptAt: null });
    expect(stored()?.attemptLog).toHaveLength(1);
    expect(await deliveries.listDue(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
  });
});
