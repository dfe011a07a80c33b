// The charts' delivery figures (issue 31, item 2): each recorded attempt adds to its webhook's hourly aggregate as
// it happens (app/webhooks/attempts → countFigures), and a window is read back from those aggregates alone
// (app/webhooks/delivery-figures, GET /v1/webhooks/:id/metrics's view). A known mix of outcomes is attempted through
// the real use cases with a fake clock; the figures are read from the in-memory store and from the DynamoDB store
// (dynalite, the embedded store's engine) alike.
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoDeliveryFigures, FIGURE_SHARDS } from '../../lambdas/adapters/dynamodb/delivery-figures';
import { type AttemptDeps, attemptDelivery, testWebhook } from '../../lambdas/app/webhooks/attempts';
import { countAttempt, type DeliveryFigureStore, readFigures } from '../../lambdas/app/webhooks/delivery-figures';
import { FIGURE_TALLY_MAX_HOLD_MS, FigureTally } from '../../lambdas/app/webhooks/figure-tally';
import type { DeliveryJob, Tenant, Webhook } from '../../lambdas/app/webhooks/ports';
import { NotFoundError } from '../../lambdas/domain/errors';
import {
  bucketOf,
  expiryOf,
  figureOf,
  hourOf,
  hourOfAttempt,
  hoursOf,
  percentile,
} from '../../lambdas/domain/webhooks/delivery-figures';
import { metricsView } from '../../lambdas/handlers/http/webhook-metrics';
import { dynaliteInMemory, useDynamoTables } from '../support/dynamo';
import {
  FakeClock,
  InMemoryDeliveryRepository,
  InMemoryWebhookRepository,
  RecordingRetryScheduler,
  ScriptedSender,
  seededRandom,
} from '../support/fakes';
import { InMemoryDeliveryFigures } from '../support/figure-fake';

const T0 = Date.UTC(2026, 11, 7, 9, 30, 0);
const TENANT: Tenant = { accountId: 'acct_fig', mode: 'live' };

const webhook = (id: string): Webhook => ({
  ...TENANT,
  id,
  url: `https://hooks.example.com/${id}`,
  events: ['email.delivered'],
  format: 'standard',
  secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
  active: true,
  createdAt: new Date(T0 - 86_400_000).toISOString(),
  updatedAt: new Date(T0 - 86_400_000).toISOString(),
});

const job = (webhookId: string, n: number, attempt = 1): DeliveryJob => ({
  deliveryId: `dlv_${String(n).padStart(24, '0')}`,
  webhookId,
  attempt,
  ...(attempt === 1
    ? {
        seed: {
          accountId: TENANT.accountId,
          mode: TENANT.mode,
          eventId: `evt_${n}`,
          event: 'email.delivered',
          format: 'standard' as const,
          payload: '{}',
          createdAt: T0,
        },
      }
    : { accountId: TENANT.accountId }),
});

/**
 * The known mix, on wh_a (retry schedule: one retry), and one success on wh_b an hour later:
 * d1 200 in 40 ms (succeeded); d2 500 in 120 ms (retrying), then 200 in 80 ms (succeeded); d3 timed out after
 * 10 s (retrying), then 503 in 600 ms (failed); a test send answered 404 in 30 ms (failed).
 */
async function attemptTheMix(store: DeliveryFigureStore) {
  const clock = new FakeClock(T0);
  const webhooks = new InMemoryWebhookRepository();
  await webhooks.create(webhook('wh_a'));
  await webhooks.create(webhook('wh_b'));
  const sender = new ScriptedSender(clock);
  const deps: AttemptDeps = {
    webhooks,
    deliveries: new InMemoryDeliveryRepository(),
    sender,
    retries: new RecordingRetryScheduler(),
    clock,
    random: seededRandom(),
    policy: { delaysSeconds: [1] },
    claimMs: 60_000,
    retentionSeconds: 30 * 86_400,
    countFigures: (attempt, figure) => countAttempt({ figures: store }, attempt, figure),
  };
  const answer = async (j: DeliveryJob, outcome: Parameters<ScriptedSender['answers']>[0]) => {
    sender.answers(outcome);
    await attemptDelivery(deps, j);
  };
  await answer(job('wh_a', 1), { statusCode: 200, durationMs: 40 });
  await answer(job('wh_a', 2), { statusCode: 500, error: 'HTTP 500', durationMs: 120 });
  await answer(job('wh_a', 3), { statusCode: null, error: 'timed out after 10000 ms', durationMs: 10_000 });
  clock.advance(2_000);
  await answer(job('wh_a', 2, 2), { statusCode: 200, durationMs: 80 });
  await answer(job('wh_a', 3, 2), { statusCode: 503, error: 'HTTP 503', durationMs: 600 });
  sender.answers({ statusCode: 404, error: 'HTTP 404', durationMs: 30 });
  await testWebhook(deps, TENANT, 'wh_a');
  clock.advance(3_600_000);
  await answer(job('wh_b', 4), { statusCode: 200, durationMs: 45 });
  return { clock, webhooks };
}

describe('the figures of an attempt (domain)', () => {
  it('its outcome comes from the delivery after it, its latency only when a request went out', () => {
    expect(figureOf({ deliveryStatus: 'succeeded', errorClass: null, requested: true, durationMs: 40 })).toEqual({
      outcome: 'succeeded',
      errorClass: null,
      bucket: 1,
    });
    expect(figureOf({ deliveryStatus: 'pending', errorClass: 'http_5xx', requested: true, durationMs: 120 })).toEqual({
      outcome: 'retrying',
      errorClass: 'http_5xx',
      bucket: 3,
    });
    expect(
      figureOf({ deliveryStatus: 'failed', errorClass: 'webhook_paused', requested: false, durationMs: 0 }),
    ).toEqual({ outcome: 'failed', errorClass: 'webhook_paused', bucket: null });
  });

  it('buckets latencies by their upper bound, the slowest in the open last bucket', () => {
    expect([0, 25, 26, 1000, 10_000, 10_001].map(bucketOf)).toEqual([0, 0, 1, 7, 13, 14]);
  });

  it('estimates percentiles inside the bucket where they fall', () => {
    // 10 requests: 9 in (25, 50], 1 in (5000, 7500].
    const latency = Array.from({ length: 15 }, () => 0);
    latency[1] = 9;
    latency[12] = 1;
    expect(percentile(latency, 0.5)).toBe(39); // 25 + 25 * 5/9
    expect(percentile(latency, 0.95)).toBe(6250); // 5000 + 2500 * 0.5
    expect(
      percentile(
        latency.map(() => 0),
        0.5,
      ),
    ).toBeNull();
  });

  it('keeps an hour 8 days after it ends, and a window ends with the current hour', () => {
    expect(hourOf(T0)).toBe('2026-12-07T09');
    expect(expiryOf('2026-12-07T09')).toBe(Date.UTC(2026, 11, 15, 10) / 1000);
    const day = hoursOf('24h', T0);
    expect(day).toHaveLength(24);
    expect([day[0], day.at(-1)]).toEqual(['2026-12-06T10', '2026-12-07T09']);
    expect(hoursOf('7d', T0)).toHaveLength(168);
  });
});

describe.each([
  ['in memory', () => new InMemoryDeliveryFigures()],
  ['in DynamoDB (dynalite)', () => new DynamoDeliveryFigures(tables().doc, tables().tables.deliveries)],
] as const)('a known mix of outcomes, counted as attempted and read back (%s)', (_name, makeStore) => {
  it("gives each webhook's hours and the account's totals", async () => {
    const store = makeStore();
    const { clock, webhooks } = await attemptTheMix(store);

    const one = await readFigures({ webhooks, figures: store, clock }, TENANT, '24h', 'wh_a');
    const all = await readFigures({ webhooks, figures: store, clock }, TENANT, '24h');
    const view = metricsView(all, null);

    const hourA = one.hours.find((h) => h.hour === '2026-12-07T09');
    expect(hourA).toMatchObject({ succeeded: 2, retrying: 2, failed: 2 });
    expect(hourA?.errors).toEqual({ http_5xx: 2, timeout: 1, http_4xx: 1 });
    expect(one.hours.filter((h) => h.succeeded + h.retrying + h.failed > 0)).toHaveLength(1);
    expect(view.totals).toMatchObject({ attempts: 7, succeeded: 3, retrying: 2, failed: 2 });
    expect(view.totals.errors).toEqual([
      { error_class: 'http_5xx', count: 2 },
      { error_class: 'timeout', count: 1 },
      { error_class: 'http_4xx', count: 1 },
    ]);
    expect(view.data.at(-1)).toMatchObject({ hour: '2026-12-07T10:00:00.000Z', succeeded: 1, attempts: 1 });
    expect(view.webhooks.map((w) => [w.webhook_id, w.totals.attempts, w.success_rate_by_hour.at(-2)])).toEqual(
      expect.arrayContaining([
        ['wh_a', 6, 2 / 6],
        ['wh_b', 1, null],
      ]),
    );
    // Seven latencies: 30, 40, 45, 80, 120, 600 ms and 10 s: the median in (50, 100], the 95th past 7.5 s.
    expect(view.totals.p50_ms).toBeGreaterThan(50);
    expect(view.totals.p50_ms).toBeLessThanOrEqual(100);
    expect(view.totals.p95_ms).toBeGreaterThan(7_500);
  });

  it("answers 404 for another tenant's webhook, and reads nothing of it", async () => {
    const store = makeStore();
    const { clock, webhooks } = await attemptTheMix(store);

    await expect(
      readFigures({ webhooks, figures: store, clock }, { accountId: 'acct_other', mode: 'live' }, '24h', 'wh_a'),
    ).rejects.toBeInstanceOf(NotFoundError);
    const other = await readFigures(
      { webhooks, figures: store, clock },
      { accountId: 'acct_other', mode: 'live' },
      '7d',
    );
    expect(metricsView(other, null).totals.attempts).toBe(0);
  });
});

const tables = useDynamoTables(dynaliteInMemory);

describe("the worker's tally", () => {
  const ok = { outcome: 'succeeded', errorClass: null, bucket: 1 } as const;
  const bad = { outcome: 'retrying', errorClass: 'http_5xx', bucket: 3 } as const;

  it('holds 5 s of attempts and writes them as one ADD per webhook and hour', async () => {
    const clock = new FakeClock(T0);
    const store = new InMemoryDeliveryFigures();
    const tally = new FigureTally(store, clock);
    for (let i = 0; i < 50; i++) tally.add({ webhookId: 'wh_a', at: clock.now(), spread: `d${i}` }, i % 5 ? ok : bad);
    tally.add({ webhookId: 'wh_b', at: clock.now(), spread: 'x' }, ok);

    await tally.settle();
    const beforeDue = store.adds;
    clock.advance(FIGURE_TALLY_MAX_HOLD_MS);
    await tally.settle();

    expect(beforeDue).toBe(0);
    expect(store.adds).toBe(2);
    const [a] = await store.read('wh_a', '2026-12-07T09', '2026-12-07T09');
    expect(a).toMatchObject({ succeeded: 40, retrying: 10, errors: { http_5xx: 10 } });
    expect(a?.latency.slice(0, 4)).toEqual([0, 40, 0, 10]);
  });

  it('writes at once once the oldest has been held 5 s, and a new hour apart', async () => {
    const clock = new FakeClock(Date.UTC(2026, 11, 7, 9, 59, 57));
    const store = new InMemoryDeliveryFigures();
    const tally = new FigureTally(store, clock);
    tally.add({ webhookId: 'wh_a', at: clock.now(), spread: 'a' }, ok);
    clock.advance(FIGURE_TALLY_MAX_HOLD_MS);
    tally.add({ webhookId: 'wh_a', at: clock.now(), spread: 'b' }, ok);
    await tally.flush();

    expect((await store.read('wh_a', '2026-12-07T09', '2026-12-07T10')).map((h) => [h.hour, h.succeeded])).toEqual([
      ['2026-12-07T09', 1],
      ['2026-12-07T10', 1],
    ]);
  });

  it('reports a failed write and what it lost, and throws nothing', async () => {
    const clock = new FakeClock(T0);
    const lost: unknown[] = [];
    const tally = new FigureTally({ add: () => Promise.reject(new Error('throttled')) }, clock, {
      failed: (error, what) => lost.push([(error as Error).message, what]),
    });
    tally.add({ webhookId: 'wh_a', at: T0, spread: 'a' }, ok);
    await tally.flush();
    expect(lost).toEqual([['throttled', { webhookId: 'wh_a', attempts: 1 }]]);
  });
});

describe('the DynamoDB items', () => {
  it('are one ADD-only item per webhook, hour and shard, with a TTL, outside every delivery partition', async () => {
    const { doc, tables: names } = tables();
    const store = new DynamoDeliveryFigures(doc, names.deliveries);
    const hour = '2026-12-07T09';
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        store.add(
          'wh_items',
          hour,
          hourOfAttempt(hour, { outcome: 'succeeded', errorClass: null, bucket: 2 }),
          `dlv_${i}#1`,
        ),
      ),
    );

    const scan = await doc.send(new ScanCommand({ TableName: names.deliveries }));
    const items = (scan.Items ?? []).filter((item) => String(item.webhookId).startsWith('fig#wh_items#'));
    expect(items.length).toBeGreaterThan(1);
    expect(items.length).toBeLessThanOrEqual(FIGURE_SHARDS);
    expect(items.every((item) => item.id === hour && item.expiresAt === expiryOf(hour))).toBe(true);
    expect(items.reduce((n, item) => n + Number(item.succeeded), 0)).toBe(40);
    const read = await store.read('wh_items', hour, hour);
    expect(read.reduce((n, row) => n + row.succeeded, 0)).toBe(40);
    expect(read.reduce((n, row) => n + (row.latency[2] ?? 0), 0)).toBe(40);
  });
});
