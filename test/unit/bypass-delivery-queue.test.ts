// The shared lane's bypass (issue 29; lambdas/app/webhooks/bypass-delivery-queue.ts): first attempts skip a
// backlog of the deliveries queue, everything else stays where it was, and a process looks at the queues' depth at
// most once a second; on a fake clock with recording queues.
import { beforeEach, describe, expect, it } from 'vitest';
import { BypassDeliveryQueue, type QueueDepth } from '../../lambdas/app/webhooks/bypass-delivery-queue';
import type { DeliveryJob } from '../../lambdas/app/webhooks/ports';
import { FakeClock, RecordingDeliveryQueue } from '../support/fakes';

class ScriptedDepth implements QueueDepth {
  looks = 0;
  constructor(public depth: number | Error) {}
  async ready(): Promise<number> {
    this.looks += 1;
    if (this.depth instanceof Error) throw this.depth;
    return this.depth;
  }
}

const job = (n: number, attempt = 1): DeliveryJob => ({
  deliveryId: `dlv_${n}`,
  webhookId: 'wh_1',
  attempt,
  accountId: 'acct_1',
});

describe('BypassDeliveryQueue', () => {
  const options = { behindMessages: 50_000, checkEveryMs: 1_000 };
  let clock: FakeClock;
  let main: RecordingDeliveryQueue;
  let bypass: RecordingDeliveryQueue;
  let mainDepth: ScriptedDepth;
  let bypassDepth: ScriptedDepth;
  let queue: BypassDeliveryQueue;

  beforeEach(() => {
    clock = new FakeClock(0);
    main = new RecordingDeliveryQueue();
    bypass = new RecordingDeliveryQueue();
    mainDepth = new ScriptedDepth(0);
    bypassDepth = new ScriptedDepth(0);
    queue = new BypassDeliveryQueue(
      { queue: main, depth: mainDepth },
      { queue: bypass, depth: bypassDepth },
      clock,
      options,
    );
  });

  it('sends first attempts to the deliveries queue while it is under the mark', async () => {
    mainDepth.depth = 49_999;

    await queue.send([job(1), job(2)]);

    expect(main.sent.flatMap((s) => s.jobs.map((j) => j.deliveryId))).toEqual(['dlv_1', 'dlv_2']);
    expect(bypass.sent).toEqual([]);
  });

  it('sends first attempts to the bypass while the deliveries queue is behind; a retry and a delayed job stay', async () => {
    // Arrange: a million ready in the deliveries queue (an outage's backlog), the bypass nearly empty.
    mainDepth.depth = 1_000_000;
    bypassDepth.depth = 200;

    // Act
    await queue.send([job(1), job(2, 2), job(3)]);
    await queue.send([job(4)], 5);

    // Assert
    expect(bypass.sent).toEqual([{ jobs: [job(1), job(3)], delaySeconds: undefined }]);
    expect(main.sent).toEqual([
      { jobs: [job(2, 2)], delaySeconds: undefined },
      { jobs: [job(4)], delaySeconds: 5 },
    ]);
  });

  it('stays with the deliveries queue when the bypass is the deeper of the two, or the look fails', async () => {
    mainDepth.depth = 60_000;
    bypassDepth.depth = 80_000;
    await queue.send([job(1)]);
    clock.advance(1_000);
    mainDepth.depth = new Error('throttled');
    await queue.send([job(2)]);

    expect(main.sent.flatMap((s) => s.jobs.map((j) => j.deliveryId))).toEqual(['dlv_1', 'dlv_2']);
    expect(bypass.sent).toEqual([]);
  });

  it('looks at most once a second, every send meanwhile sharing the answer, and goes back once caught up', async () => {
    // Arrange: behind at first.
    mainDepth.depth = 1_000_000;

    // Act: 20 sends in the same second, then the deliveries queue caught up and a second passed.
    await Promise.all(Array.from({ length: 20 }, (_, n) => queue.send([job(n)])));
    const looksInTheSecond = mainDepth.looks + bypassDepth.looks;
    mainDepth.depth = 10_000;
    await queue.send([job(98)]);
    clock.advance(1_000);
    await queue.send([job(99)]);

    // Assert
    expect(looksInTheSecond).toBe(2);
    expect(bypass.sent.flatMap((s) => s.jobs)).toHaveLength(21);
    expect(main.sent.flatMap((s) => s.jobs.map((j) => j.deliveryId))).toEqual(['dlv_99']);
  });
});
