// Unit tests of GatheredDeliveryQueue (lambdas/app/webhooks/gathered-delivery-queue.ts): a batch's first
// fan-out held until every member sent or is done, then sent in tens; delayed and late sends go at once.
import { describe, expect, it } from 'vitest';
import { GatheredDeliveryQueue } from '../../lambdas/app/webhooks/gathered-delivery-queue';
import type { DeliveryJob } from '../../lambdas/app/webhooks/ports';
import { RecordingDeliveryQueue } from '../support/fakes';

const job = (n: number): DeliveryJob => ({ deliveryId: `dlv_${n}`, webhookId: 'wh_1', attempt: 2, accountId: 'acct' });
const jobs = (from: number, count: number) => Array.from({ length: count }, (_, i) => job(from + i));

describe('GatheredDeliveryQueue', () => {
  it('holds the sends until every member sent or is done, then sends them in tens, in arrival order', async () => {
    // Arrange
    const inner = new RecordingDeliveryQueue();
    const gathered = new GatheredDeliveryQueue(inner, 3);
    const [a, b, c] = [gathered.member(), gathered.member(), gathered.member()];

    // Act
    const sentA = a?.queue.send(jobs(0, 7));
    const sentB = b?.queue.send(jobs(7, 6));
    await new Promise((resolve) => setImmediate(resolve));
    const before = inner.sent.length;
    c?.done();
    await Promise.all([sentA, sentB]);

    // Assert
    expect(before).toBe(0);
    expect(inner.sent.map((s) => s.jobs.map((j) => j.deliveryId))).toEqual([
      jobs(0, 10).map((j) => j.deliveryId),
      jobs(10, 3).map((j) => j.deliveryId),
    ]);
  });

  it('sends its tens together, not one after another (a backlog skimmed, a fan-out of 500, waits one round trip)', async () => {
    // Arrange: an inner queue whose sends stay in flight until released.
    const started: number[] = [];
    const releases: (() => void)[] = [];
    const inner = {
      send: (sent: readonly DeliveryJob[]) =>
        new Promise<void>((resolve) => {
          started.push(sent.length);
          releases.push(resolve);
        }),
    };
    const gathered = new GatheredDeliveryQueue(inner, 1);

    // Act
    const sent = gathered.member().queue.send(jobs(0, 25));
    await new Promise((resolve) => setImmediate(resolve));

    // Assert: all three requests are in flight before any has answered.
    expect(started).toEqual([10, 10, 5]);
    for (const release of releases) release();
    await sent;
  });

  it('sends a delayed send, and a send after the flush, at once and as given', async () => {
    // Arrange
    const inner = new RecordingDeliveryQueue();
    const gathered = new GatheredDeliveryQueue(inner, 2);
    const [a, b] = [gathered.member(), gathered.member()];

    // Act
    await a?.queue.send(jobs(0, 2), 30);
    b?.done();
    await b?.queue.send(jobs(2, 1));

    // Assert
    expect(inner.sent).toEqual([
      { jobs: jobs(0, 2), delaySeconds: 30 },
      { jobs: jobs(2, 1), delaySeconds: undefined },
    ]);
  });

  it('sends at once when the batch has no members to wait for', async () => {
    const inner = new RecordingDeliveryQueue();
    await new GatheredDeliveryQueue(inner, 0).member().queue.send(jobs(0, 1));
    expect(inner.sent).toHaveLength(1);
  });
});
