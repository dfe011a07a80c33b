// The delivery worker's webhook cache (adapters/in-process/webhook-cache.ts) on a fake clock: a webhook read is
// kept for exactly the bound, never longer: a pause, a deletion or a new URL reaches the reads (and so the
// attempts) once the bound has passed since the read that found the old state began.

import type { SQSEvent } from 'aws-lambda';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { CachedWebhookReads } from '../../lambdas/adapters/in-process/webhook-cache';
import type { Tenant, Webhook } from '../../lambdas/app/webhooks/ports';
import { deliveryIdFor } from '../../lambdas/domain/webhooks/render';
import { createDeliveryWorkerHandler } from '../../lambdas/handlers/queue/delivery-worker';
import { encodeJob } from '../../lambdas/handlers/queue/messages';
import {
  FakeClock,
  InMemoryDeliveryRepository,
  InMemoryWebhookRepository,
  inMemoryRecoveryDeps,
  ScriptedSender,
} from '../support/fakes';

const T0 = Date.UTC(2026, 10, 26, 1, 0, 0);
const TENANT: Tenant = { accountId: 'acct_one', mode: 'live' };
const hook = (id: string): Webhook => ({
  ...TENANT,
  id,
  url: `https://hooks.example.com/${id}`,
  events: ['email.delivered'],
  format: 'standard',
  secret: `whsec_${Buffer.alloc(32, 3).toString('base64')}`,
  active: true,
  createdAt: new Date(T0 - 60_000).toISOString(),
  updatedAt: new Date(T0 - 60_000).toISOString(),
});

describe('CachedWebhookReads', () => {
  let clock: FakeClock;
  let source: InMemoryWebhookRepository;
  let cache: CachedWebhookReads;

  beforeEach(async () => {
    clock = new FakeClock(T0);
    source = new InMemoryWebhookRepository();
    await source.create(hook('wh_a'));
    await source.create(hook('wh_b'));
    cache = new CachedWebhookReads(source, clock, 1_000);
  });

  it('reads a batch once per second: within 999 ms from the cache, at 1,000 ms from the table again', async () => {
    // Arrange
    const getMany = vi.spyOn(source, 'getMany');
    const refs = [
      { ...TENANT, id: 'wh_a' },
      { ...TENANT, id: 'wh_b' },
    ];

    // Act
    const first = await cache.getMany(refs);
    await source.update(TENANT, 'wh_a', { active: false }, new Date(T0 + 10).toISOString());
    clock.advance(999);
    const cached = await cache.getMany(refs);
    clock.advance(1);
    const fresh = await cache.getMany(refs);

    // Assert
    expect(getMany).toHaveBeenCalledTimes(2);
    expect(first.map((w) => w.active)).toEqual([true, true]);
    expect(cached.find((w) => w.id === 'wh_a')?.active).toBe(true);
    expect(fresh.find((w) => w.id === 'wh_a')?.active).toBe(false);
  });

  it('reads only what it lacks, keeps "not found", and sees a deletion after the bound', async () => {
    // Arrange
    await cache.get(TENANT, 'wh_a');
    const getMany = vi.spyOn(source, 'getMany');
    const get = vi.spyOn(source, 'get');

    // Act
    const both = await cache.getMany([
      { ...TENANT, id: 'wh_a' },
      { ...TENANT, id: 'wh_gone' },
    ]);
    const goneAgain = await cache.get(TENANT, 'wh_gone');
    await source.delete(TENANT, 'wh_a');
    const beforeBound = await cache.get(TENANT, 'wh_a');
    clock.advance(1_000);
    const afterBound = await cache.get(TENANT, 'wh_a');

    // Assert
    expect(getMany.mock.calls.map(([refs]) => refs.map((r) => r.id))).toEqual([['wh_gone']]);
    expect(both.map((w) => w.id)).toEqual(['wh_a']);
    expect(goneAgain).toBeNull();
    expect(beforeBound?.id).toBe('wh_a');
    expect(afterBound).toBeNull();
    expect(get).toHaveBeenCalledTimes(1);
  });
});

describe('delivery worker with the webhook cache', () => {
  it('makes no request to a webhook paused 1 s before the batch: the attempt fails "webhook paused"', async () => {
    // Arrange: a batch at T0 reads the webhook (active); it is paused 10 ms later
    const clock = new FakeClock(T0);
    const webhooks = new InMemoryWebhookRepository();
    await webhooks.create(hook('wh_a'));
    const sender = new ScriptedSender(clock);
    const deliveries = new InMemoryDeliveryRepository();
    const deps = inMemoryRecoveryDeps(clock, { webhooks, deliveries, sender });
    const handler = createDeliveryWorkerHandler({
      ...deps,
      webhookReads: new CachedWebhookReads(webhooks, clock, 1_000),
    });
    const job = (n: number) => {
      const eventId = `evt_${n}`;
      return encodeJob({
        deliveryId: deliveryIdFor(eventId, 'wh_a'),
        webhookId: 'wh_a',
        attempt: 1,
        seed: {
          ...TENANT,
          eventId,
          event: 'email.delivered',
          format: 'standard',
          payload: '{"type":"email.delivered"}',
          createdAt: clock.now(),
        },
      });
    };
    const batch = (n: number) => ({ Records: [{ messageId: `m${n}`, body: job(n) }] }) as unknown as SQSEvent;
    await handler(batch(1));
    clock.advance(10);
    await webhooks.update(TENANT, 'wh_a', { active: false }, new Date(clock.now()).toISOString());

    // Act: a batch 990 ms after the first read (within the bound), then one at the bound
    clock.advance(980);
    await handler(batch(2));
    clock.advance(10);
    await handler(batch(3));

    // Assert: the first two were sent (the second within the stated second); the third was not
    expect(sender.requests).toHaveLength(2);
    const third = deliveries.items.get(`wh_a#${deliveryIdFor('evt_3', 'wh_a')}`);
    expect(third?.status).toBe('failed');
    expect(third?.attemptLog.at(-1)?.error).toBe('webhook paused');
  });
});
