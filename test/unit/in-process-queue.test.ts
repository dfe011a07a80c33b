// Unit tests for the local SQS (lambdas/adapters/in-process/queue.ts): the message contract the Lambda event
// source gives our handlers — batches, concurrent pollers, per-message delays, the visibility timeout and
// partial batch failures, redrive to the dead letters — plus idle()/settled()/stop() and the request counts
// the benchmarks' cost model reads. Real timers, but only tens of milliseconds.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { QueueJournal } from '../../lambdas/adapters/in-process/journal';
import { InProcessQueue, type QueueOptions } from '../../lambdas/adapters/in-process/queue';

const OPTIONS: QueueOptions = { batchSize: 10, visibilityTimeoutMs: 40, maxReceiveCount: 3, concurrency: 2 };

const queues: InProcessQueue[] = [];
function newQueue(options: Partial<QueueOptions> = {}): InProcessQueue {
  const queue = new InProcessQueue('test-queue', { ...OPTIONS, ...options });
  queues.push(queue);
  return queue;
}

afterEach(async () => {
  await Promise.all(queues.splice(0).map((queue) => queue.stop()));
});

const bodies = (n: number, prefix = 'm') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (briefly) until `condition` holds; fails the test instead of hanging. */
async function until(condition: () => boolean, timeoutMs = 1_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(2);
  }
}

interface Received {
  readonly bodies: string[];
  readonly receiveCounts: number[];
  readonly at: number;
}

/** A handler that records every batch and answers with `answer` (default: every record succeeds). */
function recordingHandler(
  answer: (event: SQSEvent) => SQSBatchResponse | undefined | Promise<never> = () => undefined,
) {
  const batches: Received[] = [];
  const handler = async (event: SQSEvent) => {
    batches.push({
      bodies: event.Records.map((r) => r.body),
      receiveCounts: event.Records.map((r) => Number(r.attributes.ApproximateReceiveCount)),
      at: performance.now(),
    });
    return answer(event);
  };
  return { batches, handler };
}

/** A handler whose batches stay in flight until released, to observe concurrency. */
function blockingHandler() {
  let active = 0;
  let peak = 0;
  const releases: (() => void)[] = [];
  const seen: string[] = [];
  const handler = async (event: SQSEvent) => {
    seen.push(...event.Records.map((r) => r.body));
    active += 1;
    peak = Math.max(peak, active);
    await new Promise<void>((resolve) => releases.push(resolve));
    active -= 1;
    return undefined;
  };
  return {
    handler,
    active: () => active,
    peak: () => peak,
    seen: () => seen,
    releaseAll: () => {
      for (const release of releases.splice(0)) release();
    },
  };
}

describe('InProcessQueue: batches', () => {
  it('delivers every message once, in batches of at most batchSize, with SQS-shaped records', async () => {
    // Arrange
    const queue = newQueue({ batchSize: 4, concurrency: 1 });
    const { batches, handler } = recordingHandler();
    queue.consume(handler);
    let seen: SQSEvent | undefined;
    const inspect = newQueue({ batchSize: 4, concurrency: 1 });
    inspect.consume(async (event) => {
      seen = event;
      return undefined;
    });

    // Act
    queue.send(bodies(11));
    inspect.send(['{"hello":"world"}']);
    await Promise.all([queue.idle(), inspect.idle()]);

    // Assert
    expect(batches.map((b) => b.bodies.length)).toEqual([4, 4, 3]);
    expect(batches.flatMap((b) => b.bodies)).toEqual(bodies(11));
    const record = seen?.Records[0];
    expect(record).toMatchObject({
      body: '{"hello":"world"}',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:local:000000000000:test-queue',
      attributes: { ApproximateReceiveCount: '1' },
    });
    expect(record?.messageId).toMatch(/^[0-9a-f-]{36}$/);
    expect(record?.receiptHandle).toBe(record?.messageId);
    expect(Number(record?.attributes.SentTimestamp)).toBeGreaterThan(Date.now() - 5_000);
  });

  it('queues messages sent before a consumer exists and delivers them when one attaches', async () => {
    // Arrange
    const queue = newQueue();
    queue.send(bodies(3));
    const { batches, handler } = recordingHandler();
    expect(queue.depth).toBe(3);

    // Act
    queue.consume(handler);
    await queue.idle();

    // Assert
    expect(batches.flatMap((b) => b.bodies)).toEqual(bodies(3));
    expect(queue.depth).toBe(0);
  });
});

describe('InProcessQueue: concurrency', () => {
  it('never has more than `concurrency` batches in flight (batchSize 1)', async () => {
    // Arrange
    const queue = newQueue({ batchSize: 1, concurrency: 3 });
    const blocking = blockingHandler();
    queue.consume(blocking.handler);

    // Act
    queue.send(bodies(8));
    await until(() => blocking.active() === 3);
    await sleep(10);
    const whileBlocked = blocking.active();
    const done = queue.idle();
    while (queue.depth > 0) {
      blocking.releaseAll();
      await sleep(2);
    }
    await done;

    // Assert
    expect(whileBlocked).toBe(3);
    expect(blocking.peak()).toBe(3);
  });

  it('runs up to `concurrency` batches at once when batches hold several messages', async () => {
    // Arrange
    const queue = newQueue({ batchSize: 2, concurrency: 3 });
    const blocking = blockingHandler();
    queue.consume(blocking.handler);

    try {
      // Act
      queue.send(bodies(10));
      await sleep(20);

      // Assert
      expect(blocking.active()).toBe(3);
    } finally {
      while (queue.depth > 0) {
        blocking.releaseAll();
        await sleep(2);
      }
    }
  });
});

describe('InProcessQueue: delays', () => {
  it('holds messages sent with fractional delaySeconds until the delay has passed', async () => {
    // Arrange
    const queue = newQueue();
    const { batches, handler } = recordingHandler();
    queue.consume(handler);
    const sentAt = performance.now();

    // Act
    queue.send(['later'], 0.06);
    queue.send(['now']);
    await sleep(15);
    const early = batches.flatMap((b) => b.bodies);
    await queue.idle();

    // Assert
    expect(early).toEqual(['now']);
    expect(batches.map((b) => b.bodies)).toEqual([['now'], ['later']]);
    expect((batches[1]?.at ?? 0) - sentAt).toBeGreaterThanOrEqual(58);
  });

  it('counts delayed messages in depth; idle() waits for them, settled() does not', async () => {
    // Arrange
    const queue = newQueue();
    const { batches, handler } = recordingHandler();
    queue.consume(handler);

    // Act
    queue.send(['delayed'], 0.05);
    const depthWhileDelayed = queue.depth;
    await queue.settled();
    const afterSettled = batches.length;
    await queue.idle();

    // Assert
    expect(depthWhileDelayed).toBe(1);
    expect(afterSettled).toBe(0);
    expect(batches.map((b) => b.bodies)).toEqual([['delayed']]);
    expect(queue.depth).toBe(0);
  });
});

describe('InProcessQueue: failures, visibility timeout and redrive', () => {
  it('re-delivers only the reported failures, after the visibility timeout, with ApproximateReceiveCount + 1', async () => {
    // Arrange: the first delivery of m1 and m3 fails.
    const queue = newQueue({ visibilityTimeoutMs: 40 });
    const { batches, handler } = recordingHandler((event) => ({
      batchItemFailures: event.Records.filter((r) => r.attributes.ApproximateReceiveCount === '1')
        .filter((r) => r.body === 'm1' || r.body === 'm3')
        .map((r) => ({ itemIdentifier: r.messageId })),
    }));
    queue.consume(handler);

    // Act
    queue.send(bodies(4));
    await queue.idle();

    // Assert: each re-delivered message becomes visible on its own timer, so it may come in its own batch.
    const [first, ...again] = batches;
    expect(first?.bodies).toEqual(bodies(4));
    expect(again.flatMap((b) => b.bodies).sort()).toEqual(['m1', 'm3']);
    expect(again.flatMap((b) => b.receiveCounts)).toEqual([2, 2]);
    for (const batch of again) expect(batch.at - (first?.at ?? 0)).toBeGreaterThanOrEqual(38);
    expect(queue.deadLetters).toEqual([]);
  });

  it('treats a thrown handler as a failure of the whole batch', async () => {
    // Arrange
    const queue = newQueue({ visibilityTimeoutMs: 20 });
    let calls = 0;
    const { batches, handler } = recordingHandler(() => {
      calls += 1;
      if (calls === 1) return Promise.reject(new Error('DynamoDB is down'));
      return undefined;
    });
    queue.consume(handler);

    // Act
    queue.send(bodies(3));
    await queue.idle();

    // Assert
    const [first, ...again] = batches;
    expect(first?.bodies).toEqual(bodies(3));
    expect(again.flatMap((b) => b.bodies).sort()).toEqual(bodies(3));
    expect(again.flatMap((b) => b.receiveCounts)).toEqual([2, 2, 2]);
    expect(queue.stats.deleteRequests).toBe(again.length);
  });

  it('redrives a message to deadLetters after maxReceiveCount receives, and stops delivering it', async () => {
    // Arrange
    const queue = newQueue({ visibilityTimeoutMs: 10, maxReceiveCount: 3 });
    const { batches, handler } = recordingHandler((event) => ({
      batchItemFailures: event.Records.filter((r) => r.body === 'poison').map((r) => ({ itemIdentifier: r.messageId })),
    }));
    queue.consume(handler);

    // Act
    queue.send(['poison', 'fine']);
    await queue.idle();
    await sleep(30);

    // Assert
    expect(batches.map((b) => b.bodies)).toEqual([['poison', 'fine'], ['poison'], ['poison']]);
    expect(batches.map((b) => b.receiveCounts)).toEqual([[1, 1], [2], [3]]);
    expect(queue.deadLetters.map((m) => ({ body: m.body, receiveCount: m.receiveCount }))).toEqual([
      { body: 'poison', receiveCount: 3 },
    ]);
    expect(queue.depth).toBe(0);
  });

  it('redrives to its DLQ queue when given one (as SQS does): the DLQ gets the body, this queue acks it', async () => {
    // Arrange
    const dlq = newQueue();
    const queue = newQueue({ visibilityTimeoutMs: 10, maxReceiveCount: 2, redriveTo: dlq });
    queue.consume(async (event) => ({
      batchItemFailures: event.Records.filter((r) => r.body === 'poison').map((r) => ({ itemIdentifier: r.messageId })),
    }));
    const { batches: inDlq, handler } = recordingHandler(() => ({ batchItemFailures: [] }));
    dlq.consume(handler);

    // Act
    queue.send(['poison', 'fine']);
    await queue.idle();
    await dlq.idle();

    // Assert: counted as dead-lettered here, handed to the DLQ's consumer once with a fresh receive count.
    expect(queue.deadLetters.map((m) => m.body)).toEqual(['poison']);
    expect(queue.depth).toBe(0);
    expect(inDlq.map((b) => b.bodies)).toEqual([['poison']]);
    expect(inDlq.map((b) => b.receiveCounts)).toEqual([[1]]);
  });

  it('ignores failure ids that are not in the batch', async () => {
    // Arrange
    const queue = newQueue();
    const { batches, handler } = recordingHandler(() => ({ batchItemFailures: [{ itemIdentifier: 'not-a-message' }] }));
    queue.consume(handler);

    // Act
    queue.send(bodies(2));
    await queue.idle();
    await sleep(OPTIONS.visibilityTimeoutMs + 10);

    // Assert
    expect(batches).toHaveLength(1);
    expect(queue.deadLetters).toEqual([]);
  });
});

describe('InProcessQueue: idle, settled and stop', () => {
  it('idle() resolves at once on an empty queue, and only once every message has been handled', async () => {
    // Arrange
    const queue = newQueue({ batchSize: 1, concurrency: 1 });
    const handled: string[] = [];
    queue.consume(async (event) => {
      await sleep(5);
      handled.push(...event.Records.map((r) => r.body));
      return undefined;
    });
    await queue.idle();

    // Act
    queue.send(bodies(3));
    await queue.idle();

    // Assert
    expect(handled).toEqual(bodies(3));
  });

  it('idle() waits through a re-delivery after the visibility timeout', async () => {
    // Arrange
    const queue = newQueue({ visibilityTimeoutMs: 30 });
    const { batches, handler } = recordingHandler((event) =>
      event.Records[0]?.attributes.ApproximateReceiveCount === '1'
        ? { batchItemFailures: [{ itemIdentifier: event.Records[0].messageId }] }
        : undefined,
    );
    queue.consume(handler);

    // Act
    queue.send(['retry-me']);
    await queue.idle();

    // Assert
    expect(batches.map((b) => b.receiveCounts)).toEqual([[1], [2]]);
  });

  it('settled() waits for batches in flight', async () => {
    // Arrange
    const queue = newQueue();
    let finished = false;
    queue.consume(async () => {
      await sleep(25);
      finished = true;
      return undefined;
    });

    // Act
    queue.send(['slow']);
    await queue.settled();

    // Assert
    expect(finished).toBe(true);
  });

  it('stop() refuses later sends, drops delayed messages and pending re-deliveries, and waits for batches in flight', async () => {
    // Arrange
    const queue = newQueue({ visibilityTimeoutMs: 20 });
    const { batches, handler } = recordingHandler((event) => ({
      batchItemFailures: event.Records.filter((r) => r.body === 'fails').map((r) => ({ itemIdentifier: r.messageId })),
    }));
    let inFlightDone = false;
    queue.consume(async (event) => {
      if (event.Records.some((r) => r.body === 'slow')) {
        await sleep(20);
        inFlightDone = true;
      }
      return handler(event);
    });
    queue.send(['fails']);
    await until(() => batches.length === 1);
    queue.send(['delayed'], 0.03);
    queue.send(['slow']);

    // Act
    await queue.stop();
    const send = () => queue.send(['after-stop']);
    await sleep(60);

    // Assert
    expect(inFlightDone).toBe(true);
    expect(send).toThrow('queue test-queue is stopped');
    expect(batches.map((b) => b.bodies)).toEqual([['fails'], ['slow']]);
  });
});

describe('InProcessQueue: after stop()', () => {
  it('depth no longer counts the delayed messages stop() dropped, and idle() resolves', async () => {
    // Arrange
    const queue = newQueue();
    queue.consume(async () => undefined);
    queue.send(['delayed'], 0.05);

    // Act
    await queue.stop();
    const idle = await Promise.race([queue.idle().then(() => 'idle'), sleep(100).then(() => 'still waiting')]);

    // Assert
    expect(queue.depth).toBe(0);
    expect(idle).toBe('idle');
  });
});

describe('InProcessQueue: stats in SQS request terms', () => {
  it('counts ceil(n/10) send requests per send call and every message sent', async () => {
    // Arrange
    const queue = newQueue();

    // Act
    queue.send(bodies(25));
    queue.send(bodies(10));
    queue.send(bodies(1));
    queue.send([]);

    // Assert
    expect(queue.stats.sendRequests).toBe(3 + 1 + 1 + 0);
    expect(queue.stats.messagesSent).toBe(36);
  });

  it('counts one receive per batch and one delete per batch with at least one success', async () => {
    // Arrange: 8 messages in batches of 3 → [3, 3, 2]; the whole second batch fails once, one of the third.
    const queue = newQueue({ batchSize: 3, concurrency: 1, visibilityTimeoutMs: 10 });
    const sizes: number[] = [];
    queue.consume(async (event) => {
      sizes.push(event.Records.length);
      const fresh = event.Records.filter((r) => r.attributes.ApproximateReceiveCount === '1');
      if (sizes.length === 2) return { batchItemFailures: fresh.map((r) => ({ itemIdentifier: r.messageId })) };
      if (sizes.length === 3)
        return { batchItemFailures: fresh.slice(0, 1).map((r) => ({ itemIdentifier: r.messageId })) };
      return undefined;
    });

    // Act
    queue.send(bodies(8));
    await queue.idle();

    // Assert: 3 first batches, then however the 4 re-deliveries were batched; only the all-failed batch
    // makes no DeleteMessageBatch.
    expect(sizes.slice(0, 3)).toEqual([3, 3, 2]);
    expect(sizes.slice(3).reduce((a, b) => a + b, 0)).toBe(4);
    expect(queue.stats.receiveRequests).toBe(sizes.length);
    expect(queue.stats.deleteRequests).toBe(sizes.length - 1);
    expect(queue.stats.sendRequests).toBe(1);
    expect(queue.stats.messagesSent).toBe(8);
  });
});

describe('fair groups and one pending message per key', () => {
  const groupOf = (body: string) => body.split(':')[0];

  it('hands out ready messages round-robin across groups, so a burst of one group does not starve another', async () => {
    // Arrange: one poller, one message a batch; group a sends 50, then group b sends 3.
    const queue = newQueue({ batchSize: 1, concurrency: 1, groupOf });
    queue.send(bodies(50, 'a:'));
    queue.send(bodies(3, 'b:'));
    const { handler, batches } = recordingHandler();

    // Act
    queue.consume(handler);
    await queue.idle();

    // Assert: b's three go out among the first six, interleaved with a's; every message once.
    const order = batches.flatMap((b) => b.bodies);
    expect(order.slice(0, 6)).toEqual(['a:0', 'b:0', 'a:1', 'b:1', 'a:2', 'b:2']);
    expect(order).toHaveLength(53);
    expect(new Set(order).size).toBe(53);
  });

  it('keeps batches for groups with nothing in flight: one group holding every poller does not make another wait', async () => {
    // Arrange: two pollers, one message a batch, two reserved; group a's batches never end.
    const queue = newQueue({ batchSize: 1, concurrency: 2, reservedBatches: 2, groupOf });
    const blocking = blockingHandler();
    queue.consume(blocking.handler);
    queue.send(bodies(6, 'a:'));
    await until(() => blocking.active() === 2);

    // Act: b and c send while a holds both pollers and has 4 more ready.
    queue.send(['b:0', 'b:1']);
    queue.send(['c:0']);
    await until(() => blocking.active() === 4);
    await sleep(20);

    // Assert: b's first and c's went out at once, in the reserved batches; a waits for its own pollers, and so
    // does b's second (b has one in flight now): at most concurrency + reservedBatches at once.
    expect(blocking.seen()).toEqual(['a:0', 'a:1', 'b:0', 'c:0']);
    expect(blocking.peak()).toBe(4);
    while (queue.depth > 0) {
      blocking.releaseAll();
      await sleep(2);
    }
    expect(blocking.seen()).toHaveLength(9);
  });

  it('skips a send whose key already has a pending message becoming visible no later (a restart re-queues nothing held)', async () => {
    // Arrange
    const keyOf = (body: string) => body.split(':')[1];
    const queue = newQueue({ batchSize: 1, concurrency: 1, dedupeKey: keyOf });
    const blocking = blockingHandler();

    // Act: e1 twice while pending (ready), e2 in flight then again, e3 delayed then due now.
    queue.send(['x:e1']);
    queue.send(['y:e1']);
    queue.send(['x:e3'], 0.2);
    queue.send(['y:e3']);
    queue.consume(blocking.handler);
    await until(() => blocking.active() === 1);
    const depthWhileBusy = queue.depth;
    const done = queue.idle();
    while (queue.depth > 0) {
      blocking.releaseAll();
      await sleep(2);
    }
    await done;
    queue.send(['z:e1']);
    await until(() => blocking.active() === 1);
    blocking.releaseAll();
    await queue.idle();

    // Assert: y:e1 was redundant (x:e1 pending, visible no later); y:e3 is earlier than the delayed x:e3, so it goes.
    expect(depthWhileBusy).toBe(3);
    expect(blocking.seen().sort()).toEqual(['x:e1', 'x:e3', 'y:e3', 'z:e1']);
  });

  it('with replace, a send of a key drops its pending message (delayed or ready) and takes its place', async () => {
    // Arrange
    const keyOf = (body: string) => body.split(':')[1];
    const queue = newQueue({ batchSize: 1, concurrency: 1, dedupeKey: keyOf });
    const seen: string[] = [];

    // Act: e1 due in 50 ms, moved to 150 ms, then back to 100 ms; a plain send at 200 ms is redundant; e2 is
    // ready (no consumer yet) and moved to 120 ms.
    queue.send(['old:e1'], 0.05);
    queue.send(['moved:e1'], 0.15, { replace: true });
    queue.send(['back:e1'], 0.1, { replace: true });
    queue.send(['late:e1'], 0.2);
    queue.send(['ready:e2']);
    queue.send(['moved:e2'], 0.12, { replace: true });
    const depth = queue.depth;
    queue.consume(async (event) => {
      for (const record of event.Records) seen.push(record.body);
      return { batchItemFailures: [] };
    });
    await sleep(70);
    const early = [...seen];
    await queue.idle();
    await sleep(120);

    // Assert: one message a key, the last one; nothing fired at the times it replaced.
    expect(depth).toBe(2);
    expect(early).toEqual([]);
    expect(seen).toEqual(['back:e1', 'moved:e2']);
  });

  it('with replace, a message in flight is not taken back (its handler runs); the new one still goes', async () => {
    const keyOf = (body: string) => body.split(':')[1];
    const queue = newQueue({ batchSize: 1, concurrency: 1, dedupeKey: keyOf });
    const blocking = blockingHandler();
    queue.send(['first:e1']);
    queue.consume(blocking.handler);
    await until(() => blocking.active() === 1);
    queue.send(['moved:e1'], 0.02, { replace: true });
    const done = queue.idle();
    while (queue.depth > 0) {
      blocking.releaseAll();
      await sleep(2);
    }
    await done;
    expect(blocking.seen()).toEqual(['first:e1', 'moved:e1']);
  });

  it('with replace and a journal, the dropped message is acked on disk: a restart holds the new one only', async () => {
    // Arrange
    const dir = mkdtempSync(join(tmpdir(), 'sf-queue-replace-'));
    const path = join(dir, 'sends.journal');
    const keyOf = (body: string) => body.split(':')[1];
    const queue = new InProcessQueue('sends', { ...OPTIONS, dedupeKey: keyOf, journal: QueueJournal.open(path) });

    // Act: a send moved three times, then a stop (nothing consumed).
    queue.send(['a:e1'], 60);
    for (const [i, delay] of [120, 30, 90].entries()) queue.send([`move${i}:e1`], delay, { replace: true });
    await queue.stop();
    const reopened = QueueJournal.open(path);

    // Assert
    expect(reopened.messages().map((m) => m.body)).toEqual(['move2:e1']);
    reopened.close();
  });
});
