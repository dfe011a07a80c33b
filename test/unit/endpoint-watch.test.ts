// Auto-disable and the receiver's pace through the delivery worker's use case (attemptDelivery with the
// endpoint watch of lambdas/app/webhooks/endpoint-watch.ts, on in-memory fakes): no write on a success without a
// streak; ten failed deliveries past the window disable with `webhook.disabled` fanned out to the account's other
// subscribers only; a day earns one `webhook.failing`; a success clears; a 410 disables at once; a disabled
// webhook's retries end failed `webhook_paused` (kept for a resume or a recovery); Retry-After moves a retry.
import { describe, expect, it } from 'vitest';
import { InProcessKnownStreaks } from '../../lambdas/adapters/in-process/known-streaks';
import { type AttemptDeps, attemptDelivery, testWebhook } from '../../lambdas/app/webhooks/attempts';
import { watchEndpoint, watchEndpointSafely } from '../../lambdas/app/webhooks/endpoint-watch';
import { updateWebhook } from '../../lambdas/app/webhooks/manage-webhooks';
import type { DeliveryJob, Tenant, Webhook, WebhookHealthStore } from '../../lambdas/app/webhooks/ports';
import { autoDisablePolicy } from '../../lambdas/domain/webhooks/auto-disable';
import {
  FakeClock,
  InMemoryDeliveryRepository,
  InMemoryWebhookHealth,
  InMemoryWebhookRepository,
  RecordingDeliveryQueue,
  RecordingRetryScheduler,
  ScriptedSender,
  seededRandom,
} from '../support/fakes';

const T0 = Date.UTC(2026, 10, 20, 0, 0, 0);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const TENANT: Tenant = { accountId: 'acct_watch', mode: 'test' };

const hook = (id: string, events: Webhook['events'], url = `https://hooks.example.com/${id}`): Webhook => ({
  ...TENANT,
  id,
  url,
  events,
  format: 'standard',
  secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
  active: true,
  createdAt: new Date(T0 - DAY).toISOString(),
  updatedAt: new Date(T0 - DAY).toISOString(),
});

/** Counts the health store's writes (what a delivery costs beyond its own row). */
function counted(store: WebhookHealthStore) {
  const calls: string[] = [];
  const note = (name: string) => {
    calls.push(name);
  };
  const wrapped: WebhookHealthStore = {
    countFailure: (...args) => {
      note('countFailure');
      return store.countFailure(...args);
    },
    clearStreak: (...args) => {
      note('clearStreak');
      return store.clearStreak(...args);
    },
    noteFailing: (...args) => {
      note('noteFailing');
      return store.noteFailing(...args);
    },
    disable: (...args) => {
      note('disable');
      return store.disable(...args);
    },
  };
  return { calls, wrapped };
}

async function setup() {
  const clock = new FakeClock(T0);
  const webhooks = new InMemoryWebhookRepository();
  const deliveries = new InMemoryDeliveryRepository();
  const sender = new ScriptedSender(clock);
  const queue = new RecordingDeliveryQueue();
  const retries = new RecordingRetryScheduler();
  const { calls, wrapped: health } = counted(new InMemoryWebhookHealth(webhooks));
  const watched = {
    health,
    webhooks,
    deliveryQueue: queue,
    clock,
    random: seededRandom(),
    autoDisable: autoDisablePolicy(5 * 86_400, 86_400),
    // The account's notice (app/notices): told once per webhook this disables.
    disabled: async (webhook: { id: string }, reason: string) => void disabledTold.push([webhook.id, reason]),
  };
  const disabledTold: [string, string][] = [];
  const deps: AttemptDeps = {
    webhooks,
    deliveries,
    sender,
    retries,
    clock,
    random: seededRandom('attempts'),
    policy: { delaysSeconds: [1, 1, 1, 1] },
    claimMs: 60_000,
    retentionSeconds: 30 * 86_400,
    watch: (seen) => watchEndpoint(watched, seen),
  };
  const failing = hook('wh_failing', ['email.sent', 'webhook.disabled', 'webhook.failing']);
  const watcher = hook('wh_watcher', ['webhook.disabled', 'webhook.failing']);
  const bystander = hook('wh_bystander', ['email.sent']);
  for (const w of [failing, watcher, bystander]) await webhooks.create(w);
  let n = 0;
  /** A first attempt of a new delivery of `email.sent` to the failing webhook. */
  const deliver = () => {
    n += 1;
    const job: DeliveryJob = {
      deliveryId: `dlv_${String(n).padStart(4, '0')}`,
      webhookId: failing.id,
      attempt: 1,
      seed: {
        ...TENANT,
        eventId: `evt_${n}`,
        event: 'email.sent',
        format: 'standard',
        payload: `{"id":"evt_${n}","type":"email.sent","data":{}}`,
        createdAt: clock.now(),
      },
    };
    return attemptDelivery(deps, job);
  };
  const announced = () =>
    queue.sent
      .flatMap((s) => s.jobs)
      .map((job) => ({ to: job.webhookId, body: JSON.parse(job.seed?.payload ?? '{}') }));
  return {
    clock,
    webhooks,
    deliveries,
    sender,
    queue,
    retries,
    calls,
    deps,
    failing,
    deliver,
    announced,
    disabledTold,
  };
}

describe('auto-disable through the delivery worker', () => {
  it('a successful delivery with no streak costs no webhook write', async () => {
    const s = await setup();
    for (let i = 0; i < 20; i++) await s.deliver();
    expect(s.calls).toEqual([]);
  });

  it('ten failed deliveries past the window disable the webhook and tell only its other subscribers', async () => {
    // Arrange: a failure every 12 hours for five days: 11 failed deliveries, the last one past the window.
    const s = await setup();
    s.sender.answers({ statusCode: 500, error: 'HTTP 500' });

    // Act
    for (let i = 0; i <= 10; i++) {
      await s.deliver();
      if (i < 10) s.clock.advance(12 * HOUR);
    }

    // Assert
    const stored = await s.webhooks.get(TENANT, s.failing.id);
    expect(stored).toMatchObject({
      active: false,
      disabledReason: 'failing',
      disabledAt: new Date(T0 + 5 * DAY).toISOString(),
    });
    const disabled = s.announced().filter((a) => a.body.type === 'webhook.disabled');
    expect(disabled).toEqual([
      {
        to: 'wh_watcher',
        body: expect.objectContaining({
          type: 'webhook.disabled',
          data: {
            webhook_id: 'wh_failing',
            url: s.failing.url,
            reason: 'failing',
            last_error_class: 'http_5xx',
            last_status_code: 500,
            disabled_at: new Date(T0 + 5 * DAY).toISOString(),
            failing_since: new Date(T0).toISOString(),
          },
        }),
      },
    ]);
    // Counting stopped at ten: writes are the streak's, not one per delivery forever.
    expect(s.calls.filter((c) => c === 'countFailure')).toHaveLength(10);
  });

  it('is not disabled past the window with fewer than ten failed deliveries', async () => {
    const s = await setup();
    s.sender.answers({ statusCode: 500, error: 'HTTP 500' });
    for (let i = 0; i < 9; i++) {
      await s.deliver();
      s.clock.advance(DAY);
    }
    expect((await s.webhooks.get(TENANT, s.failing.id))?.active).toBe(true);
  });

  it('a day of failures sends one webhook.failing, to the other subscribers', async () => {
    const s = await setup();
    s.sender.answers({ statusCode: 503, error: 'HTTP 503' });
    for (let i = 0; i < 6; i++) {
      await s.deliver();
      s.clock.advance(6 * HOUR);
    }
    const failing = s.announced().filter((a) => a.body.type === 'webhook.failing');
    expect(failing).toEqual([
      {
        to: 'wh_watcher',
        body: expect.objectContaining({
          data: {
            webhook_id: 'wh_failing',
            url: s.failing.url,
            last_error_class: 'http_5xx',
            last_status_code: 503,
            failing_since: new Date(T0).toISOString(),
            disable_at: new Date(T0 + 5 * DAY).toISOString(),
          },
        }),
      },
    ]);
  });

  it('a success clears the streak (one write), and the window starts again at the next failure', async () => {
    const s = await setup();
    s.sender.answers({ statusCode: 500, error: 'HTTP 500' });
    for (let i = 0; i < 10; i++) {
      await s.deliver();
      s.clock.advance(12 * HOUR);
    }
    s.sender.answers({ statusCode: 200, error: null });
    await s.deliver();
    await s.deliver();
    s.sender.answers({ statusCode: 500, error: 'HTTP 500' });
    await s.deliver();

    expect(s.calls.filter((c) => c === 'clearStreak')).toHaveLength(1);
    expect(await s.webhooks.get(TENANT, s.failing.id)).toMatchObject({
      active: true,
      failingSince: T0 + 5 * DAY,
      failedDeliveries: 1,
    });
  });

  it('a 410 disables at once (gone), from a test send too', async () => {
    const s = await setup();
    s.sender.answers({ statusCode: 410, error: 'HTTP 410' });
    await testWebhook(s.deps, TENANT, s.failing.id);
    expect(await s.webhooks.get(TENANT, s.failing.id)).toMatchObject({ active: false, disabledReason: 'gone' });
    // The account's notice is asked for, once.
    expect(s.disabledTold).toEqual([['wh_failing', 'gone']]);
    expect(s.announced()).toEqual([
      {
        to: 'wh_watcher',
        body: expect.objectContaining({
          type: 'webhook.disabled',
          data: expect.objectContaining({ reason: 'gone', last_status_code: 410, failing_since: null }),
        }),
      },
    ]);
  });

  it("a disabled webhook's pending retry gets no request and ends failed webhook_paused (kept for a resume)", async () => {
    const s = await setup();
    s.sender.answers({ statusCode: 410, error: 'HTTP 410' });
    await s.deliver();
    const scheduled = s.retries.scheduled.at(-1);
    expect(scheduled).toBeDefined();
    const requests = s.sender.requests.length;

    await attemptDelivery(s.deps, scheduled?.job as DeliveryJob);

    expect(s.sender.requests).toHaveLength(requests);
    const row = await s.deliveries.get(s.failing.id, 'dlv_0001', s.clock.now());
    expect(row).toMatchObject({ status: 'failed' });
    expect(row?.attemptLog.at(-1)).toMatchObject({ errorClass: 'webhook_paused' });
  });
});

describe('Retry-After through the delivery worker', () => {
  it('a 503 with Retry-After: 3 schedules the next attempt 3 s out with a 1 s schedule, and records the ask', async () => {
    const s = await setup();
    s.sender.answers({ statusCode: 503, error: 'HTTP 503', responseHeaders: { 'retry-after': '3' } });

    await s.deliver();

    expect(s.retries.scheduled.map((r) => r.delaySeconds)).toEqual([3]);
    const row = await s.deliveries.get(s.failing.id, 'dlv_0001', s.clock.now());
    expect(row?.attemptLog.at(-1)).toMatchObject({ retryAfterSeconds: 3 });
    expect(row?.nextAttemptAt).toBe(T0 + 25 + 3000);
  });
});

describe('watchEndpointSafely', () => {
  it('reports a failed bookkeeping write instead of failing the attempt: its retry is still scheduled', async () => {
    // Arrange: a health store whose writes fail (a throttled table).
    const s = await setup();
    const broken = new Error('ProvisionedThroughputExceededException');
    const failingStore: WebhookHealthStore = {
      countFailure: () => Promise.reject(broken),
      clearStreak: () => Promise.reject(broken),
      noteFailing: () => Promise.reject(broken),
      disable: () => Promise.reject(broken),
    };
    const reported: unknown[] = [];
    const deps: AttemptDeps = {
      ...s.deps,
      watch: (seen) =>
        watchEndpointSafely(
          {
            health: failingStore,
            webhooks: s.webhooks,
            deliveryQueue: s.queue,
            clock: s.clock,
            random: seededRandom(),
            autoDisable: autoDisablePolicy(5, 1),
          },
          seen,
          (error) => reported.push(error),
        ),
    };
    s.sender.answers({ statusCode: 500, error: 'HTTP 500' });
    const job: DeliveryJob = {
      deliveryId: 'dlv_safe',
      webhookId: s.failing.id,
      attempt: 1,
      seed: {
        ...TENANT,
        eventId: 'evt_safe',
        event: 'email.sent',
        format: 'standard',
        payload: '{"id":"evt_safe","type":"email.sent","data":{}}',
        createdAt: T0,
      },
    };

    // Act
    const result = await attemptDelivery(deps, job);

    // Assert
    expect(result).toBe('attempted');
    expect(reported).toEqual([broken]);
    expect(s.retries.scheduled.map((r) => r.job.attempt)).toEqual([2]);
  });
});

describe('a burst against a stale copy of the webhook', () => {
  it('stops writing once the streak has its ten failed deliveries (the process remembers what it wrote)', async () => {
    // Arrange: every attempt judged from the webhook as read before the burst (a cache that never refreshes).
    const s = await setup();
    const stale = await s.webhooks.get(TENANT, s.failing.id);
    const known = new InProcessKnownStreaks();
    s.sender.answers({ statusCode: 500, error: 'HTTP 500' });
    const health = counted(new InMemoryWebhookHealth(s.webhooks));
    const deps: AttemptDeps = {
      ...s.deps,
      watch: (seen) =>
        watchEndpoint(
          {
            health: health.wrapped,
            webhooks: s.webhooks,
            deliveryQueue: s.queue,
            clock: s.clock,
            random: seededRandom(),
            autoDisable: autoDisablePolicy(5 * 86_400, 86_400),
            known,
          },
          seen,
        ),
    };

    // Act: 50 failed first attempts, each with the stale webhook; then a day later, 5 more.
    const burst = async (from: number, count: number) => {
      for (let i = from; i < from + count; i++) {
        await attemptDelivery(
          deps,
          {
            deliveryId: `dlv_burst_${String(i).padStart(3, '0')}`,
            webhookId: s.failing.id,
            attempt: 1,
            seed: {
              ...TENANT,
              eventId: `evt_burst_${i}`,
              event: 'email.sent',
              format: 'standard',
              payload: '{}',
              createdAt: s.clock.now(),
            },
          },
          async () => stale,
        );
      }
    };
    await burst(0, 50);
    const afterBurst = [...health.calls];
    s.clock.advance(DAY);
    await burst(50, 5);

    // Assert: ten counts, never one write per failure; a day later (what it remembered has lapsed, its copy is
    // still stale) one more count refreshes it, then the one failing notice.
    expect(afterBurst).toEqual(Array(10).fill('countFailure'));
    expect(health.calls.slice(10)).toEqual(['countFailure', 'noteFailing']);
    expect((await s.webhooks.get(TENANT, s.failing.id))?.failedDeliveries).toBe(11);
  });
});

describe('a resume', () => {
  const verifier = { problem: async () => null };

  it('clears the reason and the streak of a webhook that was inactive, and keeps the streak of one already active', async () => {
    // Arrange: one disabled, one active on a failing streak.
    const webhooks = new InMemoryWebhookRepository();
    const deps = { webhooks, urlVerifier: verifier, clock: new FakeClock(T0), random: seededRandom() };
    const streak = { failingSince: T0 - DAY, failedDeliveries: 7, failingNotifiedAt: T0 - HOUR };
    await webhooks.create({ ...hook('wh_off', ['email.sent']), active: false, disabledReason: 'gone', ...streak });
    await webhooks.create({ ...hook('wh_on', ['email.sent']), ...streak });

    // Act: the same PUT body for both, as a client that sends the whole object does.
    const resumed = await updateWebhook(deps, TENANT, 'wh_off', { active: true });
    const edited = await updateWebhook(deps, TENANT, 'wh_on', { active: true, description: 'edited' });

    // Assert
    expect(resumed).toMatchObject({ active: true, disabledReason: null, failingSince: null, failedDeliveries: null });
    expect(edited).toMatchObject({ active: true, description: 'edited', ...streak });
  });
});
