// A webhook's delivery health (lambdas/domain/webhooks/delivery-health.ts and the view in
// lambdas/app/webhooks/webhook-health-view.ts): success rate and volume over 24 h, the latest failure and its class,
// "failing" after FAILING_AFTER failed attempts in a row, one bounded read; and the attempt record keeping its
// kind and headers on the latest attempt only.
import { describe, expect, it } from 'vitest';
import { type AttemptDeps, retryDelivery, testWebhook } from '../../lambdas/app/webhooks/attempts';
import type { Tenant, Webhook } from '../../lambdas/app/webhooks/ports';
import { withHealth } from '../../lambdas/app/webhooks/webhook-health-view';
import { boundHeaders, HEADER_LIMITS } from '../../lambdas/domain/webhooks/delivery';
import {
  deliveryHealth,
  FAILING_AFTER,
  HEALTH_SAMPLE,
  HEALTH_WINDOW_MS,
} from '../../lambdas/domain/webhooks/delivery-health';
import {
  FakeClock,
  InMemoryDeliveryRepository,
  InMemoryWebhookRepository,
  RecordingRetryScheduler,
  ScriptedSender,
  seededRandom,
} from '../support/fakes';

const T0 = Date.UTC(2026, 10, 25, 12, 0, 0);
const TENANT: Tenant = { accountId: 'acct_h', mode: 'test' };
const HOOK: Webhook = {
  ...TENANT,
  id: 'wh_health',
  url: 'https://hooks.example.com/h',
  events: ['email.sent'],
  format: 'standard',
  secret: `whsec_${Buffer.alloc(32, 3).toString('base64')}`,
  active: true,
  createdAt: new Date(T0 - 86_400_000).toISOString(),
  updatedAt: new Date(T0 - 86_400_000).toISOString(),
};

function setup() {
  const clock = new FakeClock(T0);
  const webhooks = new InMemoryWebhookRepository();
  const deliveries = new InMemoryDeliveryRepository();
  const sender = new ScriptedSender(clock);
  const deps: AttemptDeps = {
    webhooks,
    deliveries,
    sender,
    retries: new RecordingRetryScheduler(),
    clock,
    random: seededRandom(),
    policy: { delaysSeconds: [1, 1, 1, 1] },
    claimMs: 60_000,
    retentionSeconds: 86_400,
  };
  return { clock, webhooks, deliveries, sender, deps };
}

const attempt = (at: number, ok: boolean, errorClass: string | null = ok ? null : 'http_5xx') => ({
  at,
  ok,
  errorClass,
});

describe('deliveryHealth', () => {
  it('is failing when the newest attempts all failed, with the rate, counts and latest failure of 24 h', () => {
    const deliveries = Array.from({ length: FAILING_AFTER }, (_, i) => ({
      createdAt: T0 - i * 60_000,
      attempts: [attempt(T0 - i * 60_000, false, i === 0 ? 'timeout' : 'http_5xx')],
    }));
    deliveries.push({ createdAt: T0 - HEALTH_WINDOW_MS - 1, attempts: [attempt(T0 - HEALTH_WINDOW_MS - 1, true)] });

    const health = deliveryHealth(deliveries, T0);

    expect(health).toEqual({
      state: 'failing',
      successRate24h: 0,
      attempts24h: FAILING_AFTER,
      deliveries24h: FAILING_AFTER,
      lastFailureAt: T0,
      lastFailureClass: 'timeout',
      sampled: false,
    });
  });

  it('is healthy when a recent attempt succeeded, quiet without attempts in the window', () => {
    const mixed = [
      { createdAt: T0, attempts: [attempt(T0 - 2_000, false), attempt(T0, true)] },
      { createdAt: T0 - 10_000, attempts: [attempt(T0 - 10_000, true), attempt(T0 - 9_000, true)] },
    ];
    expect(deliveryHealth(mixed, T0)).toMatchObject({ state: 'healthy', successRate24h: 0.75, attempts24h: 4 });
    const old = [{ createdAt: T0 - HEALTH_WINDOW_MS - 5, attempts: [attempt(T0 - HEALTH_WINDOW_MS - 5, false)] }];
    expect(deliveryHealth(old, T0)).toMatchObject({
      state: 'quiet',
      successRate24h: null,
      lastFailureAt: old[0]?.createdAt,
    });
  });

  // Issue 31: a webhook disabled by a 410 after one attempt, 0% success, reported `healthy`.
  it('is failing when no attempt of the window succeeded, however few', () => {
    const twoFailed = [
      { createdAt: T0, attempts: [attempt(T0, false, 'http_4xx')] },
      { createdAt: T0 - 60_000, attempts: [attempt(T0 - 60_000, false)] },
    ];
    expect(deliveryHealth(twoFailed, T0)).toMatchObject({ state: 'failing', successRate24h: 0, attempts24h: 2 });
  });

  it('is disabled when Sendflow disabled the webhook, whatever its attempts', () => {
    const gone = [{ createdAt: T0, attempts: [attempt(T0, false, 'http_4xx')] }];
    const fine = [{ createdAt: T0, attempts: [attempt(T0, true)] }];
    expect(deliveryHealth(gone, T0, { disabled: true })).toMatchObject({ state: 'disabled', successRate24h: 0 });
    expect(deliveryHealth(fine, T0, { disabled: true }).state).toBe('disabled');
    expect(deliveryHealth([], T0, { disabled: true }).state).toBe('disabled');
  });

  it(`reads at most the newest ${HEALTH_SAMPLE} deliveries and says so`, () => {
    const many = Array.from({ length: HEALTH_SAMPLE + 50 }, (_, i) => ({
      createdAt: T0 - i,
      attempts: [attempt(T0 - i, true)],
    }));
    expect(deliveryHealth(many, T0)).toMatchObject({ deliveries24h: HEALTH_SAMPLE, sampled: true });
  });
});

describe('withHealth (the webhook object’s health)', () => {
  it('computes the figures from the stored log: failing after five failed test sends, healthy after a success', async () => {
    const { clock, webhooks, deliveries, sender, deps } = setup();
    await webhooks.create(HOOK);
    sender.answers({ statusCode: 503, error: 'HTTP 503' });
    for (let i = 0; i < FAILING_AFTER; i++) {
      await testWebhook(deps, TENANT, HOOK.id);
      clock.advance(1_000);
    }

    const health = async () => (await withHealth({ deliveries, clock }, [HOOK]))[0]?.health;
    const failing = await health();
    sender.answers({ statusCode: 200, error: null });
    await testWebhook(deps, TENANT, HOOK.id);
    const healthy = await health();

    expect(failing).toMatchObject({
      state: 'failing',
      successRate24h: 0,
      attempts24h: 5,
      lastFailureClass: 'http_5xx',
    });
    expect(healthy).toMatchObject({ state: 'healthy', attempts24h: 6, deliveries24h: 6 });
    expect(healthy?.successRate24h).toBeCloseTo(1 / 6);
  });

  it('says disabled for a webhook Sendflow disabled after a 410, not healthy', async () => {
    const { webhooks, deliveries, sender, deps, clock } = setup();
    await webhooks.create(HOOK);
    sender.answers({ statusCode: 410, error: 'HTTP 410' });
    await testWebhook(deps, TENANT, HOOK.id);
    const disabled: Webhook = {
      ...HOOK,
      active: false,
      disabledReason: 'gone',
      disabledAt: new Date(T0).toISOString(),
    };

    const [seen] = await withHealth({ deliveries, clock }, [disabled]);

    expect(seen?.health).toMatchObject({ state: 'disabled', successRate24h: 0, attempts24h: 1 });
  });
});

describe('attempt records', () => {
  it('keep their kind, and the headers sent and answered on the latest attempt only, when it failed', async () => {
    const { webhooks, deliveries, sender, deps, clock } = setup();
    await webhooks.create(HOOK);
    sender.answers({ statusCode: 500, error: 'HTTP 500', responseHeaders: { 'content-type': 'text/plain' } });
    const made = await testWebhook(deps, TENANT, HOOK.id);
    clock.advance(5_000);
    sender.answers({ statusCode: 503, error: 'HTTP 503', responseHeaders: { 'x-answer': 'second' } });
    await retryDelivery(deps, TENANT, HOOK.id, made.id, clock.now());

    const stored = deliveries.items.get(`${HOOK.id}#${made.id}`);
    const [first, second] = stored?.attemptLog ?? [];
    expect(first).toMatchObject({ kind: 'test' });
    expect(first).not.toHaveProperty('requestHeaders');
    expect(first).not.toHaveProperty('responseHeaders');
    expect(second).toMatchObject({ kind: 'manual', responseHeaders: { 'x-answer': 'second' } });
    expect(Object.keys(second?.requestHeaders ?? {})).toEqual(
      expect.arrayContaining(['webhook-id', 'webhook-timestamp', 'webhook-signature']),
    );
    expect(JSON.stringify(second?.requestHeaders)).not.toContain(HOOK.secret);

    // A success keeps none (its row stays one write unit), and the failure before it no longer does either.
    clock.advance(5_000);
    sender.answers({ statusCode: 200, error: null, responseHeaders: { 'x-answer': 'third' } });
    await retryDelivery(deps, TENANT, HOOK.id, made.id, clock.now());
    const log = deliveries.items.get(`${HOOK.id}#${made.id}`)?.attemptLog ?? [];
    for (const attempt of log.slice(1)) {
      expect(attempt).not.toHaveProperty('requestHeaders');
      expect(attempt).not.toHaveProperty('responseHeaders');
    }
  });

  it('bound the answer headers: 20 at most, values of 200 characters, 1 KB in all', () => {
    const many = Array.from({ length: 40 }, (_, i) => [`X-H${i}`, 'v'.repeat(i === 0 ? 500 : 30)] as const);
    const kept = boundHeaders(many);
    const bytes = Object.entries(kept).reduce((n, [k, v]) => n + k.length + v.length, 0);
    expect(Object.keys(kept).length).toBeLessThanOrEqual(HEADER_LIMITS.count);
    expect(bytes).toBeLessThanOrEqual(HEADER_LIMITS.totalBytes);
    expect(kept['x-h0']).toHaveLength(HEADER_LIMITS.valueChars);
  });
});
