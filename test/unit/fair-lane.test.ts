// The slow lane's fair order (issue 29, item 4): each job entering the lane gets a wait from its tenant's virtual
// start time (start-time fair queuing, per container), so a tenant's surplus waits behind the others' jobs and a
// tenant with nothing queued enters at once.
import { describe, expect, it } from 'vitest';
import { FairDeliveryQueue, FairLaneOrder } from '../../lambdas/app/webhooks/fair-lane';
import type { DeliveryJob, DeliveryQueue } from '../../lambdas/app/webhooks/ports';
import { AWS_LANE_POLICY } from '../../lambdas/domain/webhooks/endpoint-health';
import { deliveryLanes } from '../../lambdas/runtime/services';
import { FakeClock, RecordingDeliveryQueue, RecordingRecoveryQueue, RecordingRetryScheduler } from '../support/fakes';

const T0 = Date.UTC(2026, 11, 7, 12, 0, 0);
const POLICY = { roundMs: 2_000, maxDelaySeconds: 900 };

const job = (account: string, n: number, attempt = 1): DeliveryJob => ({
  deliveryId: `dlv_${account}_${n}`,
  webhookId: `wh_${account}`,
  attempt,
  accountId: account,
});

describe('FairLaneOrder', () => {
  it("interleaves the tenants' jobs that enter together: each tenant's next job one round after its last", () => {
    const clock = new FakeClock(T0);
    const order = new FairLaneOrder(POLICY, clock);
    const waits = ['a', 'a', 'a', 'b', 'a', 'b', 'c'].map((t) => order.delayMs(t));
    expect(waits).toEqual([0, 2_000, 4_000, 0, 6_000, 2_000, 0]);
  });

  it('lets a tenant with nothing queued in at once while another waits for its turns', () => {
    const clock = new FakeClock(T0);
    const order = new FairLaneOrder(POLICY, clock);
    for (let i = 0; i < 100; i++) order.delayMs('busy');
    clock.advance(10_000);
    expect(order.delayMs('quiet')).toBe(0);
    // The busy tenant's next job goes after the 100 it has queued (its virtual time moved on with the clock).
    expect(order.delayMs('busy')).toBe(100 * 2_000 - 10_000);
  });

  it('never lets a job in before its own delay (a retry), and counts it from there', () => {
    const clock = new FakeClock(T0);
    const order = new FairLaneOrder(POLICY, clock);
    expect(order.delayMs('a', 30_000)).toBe(30_000);
    expect(order.delayMs('a', 1_000)).toBe(32_000);
    expect(order.delayMs('b', 1_000)).toBe(1_000);
  });

  it('forgets a tenant once its turns are past', () => {
    const clock = new FakeClock(T0);
    const order = new FairLaneOrder(POLICY, clock);
    for (let i = 0; i < 5; i++) order.delayMs('a');
    clock.advance(60_000);
    expect(order.delayMs('a')).toBe(0);
    expect(order.tenants).toBe(1);
  });
});

describe('FairDeliveryQueue', () => {
  it("sends each job with its tenant's wait (at least the caller's), the queue's longest wait at most", async () => {
    const clock = new FakeClock(T0);
    const inner = new RecordingDeliveryQueue();
    const queue = new FairDeliveryQueue(inner, new FairLaneOrder({ roundMs: 300_000, maxDelaySeconds: 900 }, clock));
    await queue.send([job('a', 1), job('a', 2), job('b', 1), job('a', 3), job('a', 4)]);
    await queue.send([job('b', 2, 2)], 30);
    const delays = inner.sent.flatMap((s) => s.jobs.map((j) => [j.deliveryId, s.delaySeconds ?? 0] as const));
    expect(Object.fromEntries(delays)).toEqual({
      dlv_a_1: 0,
      dlv_b_1: 0,
      dlv_a_2: 300,
      dlv_a_3: 600,
      dlv_a_4: 900,
      dlv_b_2: 300,
    });
  });

  it('hands a queue that takes a wait per message the whole call in one send', async () => {
    const clock = new FakeClock(T0);
    const each: { job: DeliveryJob; delaySeconds: number }[][] = [];
    const inner: DeliveryQueue & {
      sendEach: (e: readonly { job: DeliveryJob; delaySeconds: number }[]) => Promise<void>;
    } = {
      send: async () => {
        throw new Error('send without per-message waits');
      },
      sendEach: async (entries) => {
        each.push([...entries]);
      },
    };
    const queue = new FairDeliveryQueue(inner, new FairLaneOrder(POLICY, clock));
    await queue.send([job('a', 1), job('a', 2), job('b', 1)], 1);
    expect(each).toHaveLength(1);
    expect(each[0]?.map((e) => e.delaySeconds)).toEqual([1, 3, 1]);
  });
});

describe('deliveryLanes with a fair round', () => {
  const lanes = (fairRoundMs: number | null) => {
    const clock = new FakeClock(T0);
    const slow = new RecordingDeliveryQueue();
    const retries = new RecordingRetryScheduler();
    const built = deliveryLanes(
      { queue: slow, steps: new RecordingRecoveryQueue(), arn: 'arn:slow', maxDelaySeconds: 900 },
      new RecordingDeliveryQueue(),
      retries,
      { ...AWS_LANE_POLICY, fairRoundMs },
      clock,
    );
    return { built, slow, retries };
  };

  it("orders the slow lane's moves and retries by tenant, a Scheduler retry at its turn too", async () => {
    const { built, slow, retries } = lanes(60_000);
    await built.slowLane.send([job('a', 1), job('a', 2), job('b', 1)]);
    await built.slowRetries.schedule(job('a', 3, 2), 1);
    await built.slowRetries.schedule(job('b', 2, 5), 1_800);
    expect(slow.sent.map((s) => [s.jobs.map((j) => j.deliveryId).join(','), s.delaySeconds])).toEqual([
      ['dlv_a_1,dlv_b_1', 0],
      ['dlv_a_2', 60],
      ['dlv_a_3', 120],
    ]);
    expect(retries.scheduled.map((r) => [r.job.deliveryId, r.delaySeconds])).toEqual([['dlv_b_2', 1_800]]);
  });

  it('leaves the waits alone without one (the AWS default today)', async () => {
    const { built, slow } = lanes(null);
    await built.slowLane.send([job('a', 1), job('a', 2)]);
    await built.slowRetries.schedule(job('a', 3, 2), 30);
    expect(slow.sent.map((s) => s.delaySeconds)).toEqual([undefined, 30]);
  });
});
