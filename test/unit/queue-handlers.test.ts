// The SQS handlers' batch reads, on the in-memory fakes: the delivery worker reads the webhooks of a batch's
// first attempts in one getMany and a retry's webhook in one get, and the dispatcher lists a tenant's webhooks
// once per batch. A bad record or a failed read fails only the records it concerns.
import type { SQSEvent } from 'aws-lambda';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { REARM_DELAY_MS } from '../../lambdas/app/webhooks/dead-letters';
import { EndpointGate } from '../../lambdas/app/webhooks/endpoint-gate';
import type { DeliveryJob, RecoveryStep, Tenant, Webhook } from '../../lambdas/app/webhooks/ports';
import { type RecoveryDeps, startRecovery } from '../../lambdas/app/webhooks/recoveries';
import type { SendflowEvent } from '../../lambdas/domain/events';
import { timeOrderedId } from '../../lambdas/domain/ids';
import { AWS_LANE_POLICY } from '../../lambdas/domain/webhooks/endpoint-health';
import { deliveryIdFor, renderPayload } from '../../lambdas/domain/webhooks/render';
import { createDeliveryWorkerHandler, type Lanes } from '../../lambdas/handlers/queue/delivery-worker';
import { createDispatcherHandler } from '../../lambdas/handlers/queue/dispatcher';
import { deliveryMessageAccount, encodeEvent, encodeJob, encodeStep } from '../../lambdas/handlers/queue/messages';
import { decodeSend, encodeSend } from '../../lambdas/handlers/queue/send-worker';
import {
  FakeClock,
  InMemoryDeliveryRepository,
  InMemoryEmailHistory,
  InMemoryRecoveryRepository,
  InMemorySuppressionList,
  InMemoryWebhookRepository,
  inMemoryRecoveryDeps,
  RecordingDeliveryQueue,
  RecordingRecoveryQueue,
  RecordingRetryScheduler,
  ScriptedSender,
  seededRandom,
} from '../support/fakes';

const T0 = Date.UTC(2025, 5, 1, 9, 0, 0);
const LIVE: Tenant = { accountId: 'acct_one', mode: 'live' };
const TEST: Tenant = { accountId: 'acct_two', mode: 'test' };

const webhook = (tenant: Tenant, id: string): Webhook => ({
  ...tenant,
  id,
  url: `https://hooks.example.com/${id}`,
  events: ['email.delivered'],
  format: 'standard',
  secret: `whsec_${Buffer.alloc(32, 3).toString('base64')}`,
  active: true,
  createdAt: new Date(T0 - 60_000).toISOString(),
  updatedAt: new Date(T0 - 60_000).toISOString(),
});

const event = (tenant: Tenant, n: number): SendflowEvent => ({
  id: `evt_${String(n).padStart(4, '0')}`,
  type: 'email.delivered',
  accountId: tenant.accountId,
  mode: tenant.mode,
  timestamp: new Date(T0 - 1_000).toISOString(),
  emailId: `em_${n}`,
  to: 'user@example.com',
  data: { from: 'billing@acme.example', subject: 'Invoice' },
});

const firstJob = (e: SendflowEvent, hook: Webhook): DeliveryJob => ({
  deliveryId: deliveryIdFor(e.id, hook.id),
  webhookId: hook.id,
  attempt: 1,
  seed: {
    accountId: e.accountId,
    mode: e.mode,
    eventId: e.id,
    event: e.type,
    format: hook.format,
    payload: renderPayload(e, hook.format),
    createdAt: T0,
  },
});

const sqsEvent = (bodies: readonly string[]): SQSEvent =>
  ({ Records: bodies.map((body, i) => ({ messageId: `m${i}`, body })) }) as unknown as SQSEvent;

describe('delivery worker batch', () => {
  let webhooks: InMemoryWebhookRepository;
  let deliveries: InMemoryDeliveryRepository;
  let sender: ScriptedSender;
  let deps: RecoveryDeps;
  const hooks = [webhook(LIVE, 'wh_a'), webhook(LIVE, 'wh_b'), webhook(TEST, 'wh_c')];

  beforeEach(async () => {
    const clock = new FakeClock(T0);
    webhooks = new InMemoryWebhookRepository();
    deliveries = new InMemoryDeliveryRepository();
    sender = new ScriptedSender(clock);
    deps = inMemoryRecoveryDeps(clock, { webhooks, deliveries, sender });
    for (const hook of hooks) await webhooks.create(hook);
  });

  it("reads the webhooks of a batch's first attempts in one getMany and sends every attempt", async () => {
    // Arrange
    const jobs = Array.from({ length: 10 }, (_, n) => {
      const hook = hooks[n % 3] as Webhook;
      return firstJob(event(hook, n), hook);
    });
    const getMany = vi.spyOn(webhooks, 'getMany');
    const get = vi.spyOn(webhooks, 'get');

    // Act
    const result = await createDeliveryWorkerHandler(deps)(sqsEvent(jobs.map(encodeJob)));

    // Assert
    expect(result.batchItemFailures).toEqual([]);
    expect(getMany).toHaveBeenCalledTimes(1);
    expect(get).not.toHaveBeenCalled();
    expect(new Set(getMany.mock.calls[0]?.[0].map((ref) => `${ref.accountId}#${ref.mode}#${ref.id}`))).toEqual(
      new Set(['acct_one#live#wh_a', 'acct_one#live#wh_b', 'acct_two#test#wh_c']),
    );
    expect(sender.requests.map((r) => r.url).sort()).toEqual(
      jobs.map((j) => `https://hooks.example.com/${j.webhookId}`).sort(),
    );
    for (const job of jobs)
      expect(deliveries.items.get(`${job.webhookId}#${job.deliveryId}`)?.status).toBe('succeeded');
  });

  it("reads a retry's webhook once per batch with get, after the claim gave its tenant", async () => {
    // Arrange
    const hook = hooks[0] as Webhook;
    const firsts = [0, 1].map((n) => firstJob(event(LIVE, n), hook));
    sender.answers({ statusCode: 500 });
    await createDeliveryWorkerHandler(deps)(sqsEvent(firsts.map(encodeJob)));
    sender.answers({ statusCode: 200 });
    (deps.clock as FakeClock).advance(1_000);
    const get = vi.spyOn(webhooks, 'get');
    const getMany = vi.spyOn(webhooks, 'getMany');

    // Act
    const retries = firsts.map((job) => ({ deliveryId: job.deliveryId, webhookId: job.webhookId, attempt: 2 }));
    const result = await createDeliveryWorkerHandler(deps)(sqsEvent(retries.map(encodeJob)));

    // Assert
    expect(result.batchItemFailures).toEqual([]);
    expect(get).toHaveBeenCalledTimes(1);
    expect(get).toHaveBeenCalledWith(expect.objectContaining(LIVE), hook.id);
    expect(getMany).not.toHaveBeenCalled();
    expect(sender.requests).toHaveLength(4);
  });

  it('fails a malformed record alone', async () => {
    // Arrange
    const hook = hooks[0] as Webhook;
    const good = firstJob(event(LIVE, 1), hook);

    // Act
    const result = await createDeliveryWorkerHandler(deps)(sqsEvent(['{"deliveryId":', encodeJob(good)]));

    // Assert
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'm0' }]);
    expect(sender.requests).toHaveLength(1);
  });

  it('falls back to one read per webhook when the batch read fails: an unreadable webhook fails only its own', async () => {
    // Arrange
    const [a, b] = hooks as [Webhook, Webhook];
    const jobs = [firstJob(event(LIVE, 0), a), firstJob(event(LIVE, 1), b), firstJob(event(LIVE, 2), a)];
    vi.spyOn(webhooks, 'getMany').mockRejectedValue(new Error('item wh_b is not a valid webhook'));
    const get = vi.spyOn(webhooks, 'get');
    get.mockImplementation(async (_tenant, id) => {
      if (id === b.id) throw new Error('item wh_b is not a valid webhook');
      return structuredClone(a);
    });

    // Act
    const result = await createDeliveryWorkerHandler(deps)(sqsEvent(jobs.map(encodeJob)));

    // Assert
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }]);
    expect(sender.requests.map((r) => r.url)).toEqual([a.url, a.url]);
    expect(get).toHaveBeenCalledTimes(2);
  });

  it("never uses another tenant's webhook with the same id", async () => {
    // Arrange
    const live = { ...webhook(LIVE, 'wh_same'), url: 'https://live.example.com/hook' };
    const test = { ...webhook(TEST, 'wh_same'), url: 'https://test.example.com/hook' };
    await webhooks.create(live);
    await webhooks.create(test);
    const jobs = [firstJob(event(LIVE, 0), live), firstJob(event(TEST, 1), test), firstJob(event(LIVE, 2), live)];

    // Act
    const result = await createDeliveryWorkerHandler(deps)(sqsEvent(jobs.map(encodeJob)));

    // Assert
    expect(result.batchItemFailures).toEqual([]);
    const sentTo = new Map(sender.requests.map((r) => [JSON.parse(r.body).id as string, r.url]));
    expect(Object.fromEntries(sentTo)).toEqual({
      evt_0000: live.url,
      evt_0001: test.url,
      evt_0002: live.url,
    });
  });

  it('leaves no unhandled rejection when a failed getMany is awaited by no record (every claim taken)', async () => {
    // Arrange
    const job = firstJob(event(LIVE, 7), hooks[0] as Webhook);
    await createDeliveryWorkerHandler(deps)(sqsEvent([encodeJob(job)]));
    vi.spyOn(webhooks, 'getMany').mockRejectedValue(new Error('DynamoDB unavailable'));
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);

    // Act
    const result = await createDeliveryWorkerHandler(deps)(sqsEvent([encodeJob(job)]));
    await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', unhandled);

    // Assert
    expect(result.batchItemFailures).toEqual([]);
    expect(unhandled).not.toHaveBeenCalled();
    expect(sender.requests).toHaveLength(1);
  });

  it('re-arms the jobs of a deliveries DLQ as due retries, sending nothing; one a live claim holds fails alone (tried again)', async () => {
    // Arrange: job 0 has no row (it failed before its claim), job 1 a row claimed now (an attempt in flight).
    const [lost, held] = [0, 1].map((n) => firstJob(event(LIVE, n), hooks[0] as Webhook));
    if (!lost || !held) throw new Error('two jobs');
    await deliveries.createClaimed({
      id: held.deliveryId,
      webhookId: held.webhookId,
      ...(held.seed as NonNullable<typeof held.seed>),
      status: 'pending',
      attempts: 0,
      maxAttempts: 5,
      attemptLog: [],
      response: '',
      nextAttemptAt: T0,
      deliveredAt: null,
      claim: { attempt: 1, until: T0 + 40_000 },
    });
    const dlq = sqsEvent([encodeJob(lost), encodeJob(held)]);
    for (const record of dlq.Records) record.eventSourceARN = 'arn:deliveries-dlq';

    // Act
    const result = await createDeliveryWorkerHandler({
      ...deps,
      isDeadLetter: (record) => record.eventSourceARN === 'arn:deliveries-dlq',
    })(dlq);

    // Assert
    expect(sender.requests).toEqual([]);
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }]);
    expect(deliveries.items.get(`${lost.webhookId}#${lost.deliveryId}`)).toMatchObject({
      status: 'pending',
      attempts: 0,
      deadLetters: 1,
      nextAttemptAt: T0 + REARM_DELAY_MS,
    });
    expect(deliveries.items.get(`${held.webhookId}#${held.deliveryId}`)).toMatchObject({ status: 'pending' });
  });
});

/** A dispatcher on fakes, with one webhook in each tenant (wh_a live, wh_c test). */
async function dispatcher() {
  const webhooks = new InMemoryWebhookRepository();
  const deliveryQueue = new RecordingDeliveryQueue();
  await webhooks.create(webhook(LIVE, 'wh_a'));
  await webhooks.create(webhook(TEST, 'wh_c'));
  const handler = createDispatcherHandler({
    webhooks,
    deliveryQueue,
    clock: new FakeClock(T0),
    emailHistory: new InMemoryEmailHistory(),
    suppressions: new InMemorySuppressionList(),
  });
  return { webhooks, deliveryQueue, handler };
}

describe('delivery worker lanes', () => {
  const SLOW_ARN = 'arn:aws:sqs:local:000000000000:slow';
  const hook = webhook(LIVE, 'wh_slow');
  let deps: RecoveryDeps & { lanes: Lanes };
  let sender: ScriptedSender;
  let slowLane: RecordingDeliveryQueue;
  let sharedLane: RecordingDeliveryQueue;
  let clock: FakeClock;
  let deliveries: InMemoryDeliveryRepository;
  let slowSteps: RecordingRecoveryQueue;
  let slowRetries: RecordingRetryScheduler;

  beforeEach(async () => {
    clock = new FakeClock(T0);
    deliveries = new InMemoryDeliveryRepository();
    slowSteps = new RecordingRecoveryQueue();
    slowRetries = new RecordingRetryScheduler();
    sender = new ScriptedSender(clock);
    slowLane = new RecordingDeliveryQueue();
    sharedLane = new RecordingDeliveryQueue();
    const webhooks = new InMemoryWebhookRepository();
    await webhooks.create(hook);
    deps = {
      webhooks,
      deliveries,
      sender,
      retries: new RecordingRetryScheduler(),
      recoveries: new InMemoryRecoveryRepository(),
      recoveryQueue: new RecordingRecoveryQueue(),
      clock,
      random: seededRandom(),
      policy: { delaysSeconds: [1] },
      claimMs: 40_000,
      retentionSeconds: 86_400,
      lanes: {
        gate: new EndpointGate(
          { perEndpoint: 2, busyWaitMs: 0, busyDelaySeconds: 1, slowAfterMs: 2_000, slowForMs: 60_000 },
          clock,
        ),
        slowLane,
        slowSteps,
        sharedLane,
        busyDelaySeconds: 1,
        isSlowLane: (record) => record.eventSourceARN === SLOW_ARN,
        slowRetries,
      },
    };
  });

  const inLane = (bodies: string[], arn: string) => {
    const event = sqsEvent(bodies);
    for (const record of event.Records) record.eventSourceARN = arn;
    return event;
  };

  it("attempts an endpoint's share of a batch and sends the rest back to the shared lane a second later", async () => {
    // Arrange: five jobs for one healthy endpoint, in flight together.
    const jobs = [0, 1, 2, 3, 4].map((n) => firstJob(event(LIVE, n), hook));

    // Act
    const result = await createDeliveryWorkerHandler(deps)(inLane(jobs.map(encodeJob), 'arn:shared'));

    // Assert: not the slow lane, which is for slow endpoints only.
    expect(result.batchItemFailures).toEqual([]);
    expect(sender.requests).toHaveLength(2);
    expect(slowLane.sent).toEqual([]);
    expect(sharedLane.sent.map((s) => s.delaySeconds)).toEqual([1, 1, 1]);
    expect(sharedLane.sent.flatMap((s) => s.jobs.map((j) => j.deliveryId))).toEqual(
      jobs.slice(2).map((j) => j.deliveryId),
    );
  });

  it('after a slow outcome sends every job of that endpoint to the slow lane, where they are attempted', async () => {
    // Arrange: one attempt that times out after 10 s marks the endpoint slow.
    sender.answers({ statusCode: null, durationMs: 10_000, error: 'timed out' });
    await createDeliveryWorkerHandler(deps)(inLane([encodeJob(firstJob(event(LIVE, 0), hook))], 'arn:shared'));
    sender.answers({ statusCode: 200 });
    const next = firstJob(event(LIVE, 1), hook);

    // Act
    await createDeliveryWorkerHandler(deps)(inLane([encodeJob(next)], 'arn:shared'));
    const diverted = slowLane.sent.flatMap((s) => s.jobs);
    await createDeliveryWorkerHandler(deps)(inLane(diverted.map(encodeJob), SLOW_ARN));

    // Assert
    expect(diverted.map((j) => j.deliveryId)).toEqual([next.deliveryId]);
    expect(sender.requests).toHaveLength(2);
    expect(deliveries.items.get(`${hook.id}#${next.deliveryId}`)?.status).toBe('succeeded');
  });
  it("sends a slow endpoint's recovery step to the slow lane, unattempted, where it runs", async () => {
    // Arrange: two deliveries that ended failed (their attempts timed out: the endpoint is now slow).
    sender.answers({ statusCode: null, durationMs: 10_000, error: 'timed out' });
    // Time-ordered event ids, as the API makes them: recovery windows are ranges of ids.
    const jobs = [0, 1].map((n) =>
      firstJob({ ...event(LIVE, n), id: timeOrderedId('evt', T0 - 1_000, seededRandom(`${n}`)) }, hook),
    );
    await createDeliveryWorkerHandler(deps)(inLane(jobs.map(encodeJob), 'arn:shared'));
    for (const [key, row] of deliveries.items) {
      const { claim: _claim, ...rest } = row;
      deliveries.items.set(key, { ...rest, status: 'failed', nextAttemptAt: null });
    }
    sender.answers({ statusCode: 200 });
    clock.advance(1_000);
    const job = await startRecovery(deps, LIVE, hook.id, { since: new Date(T0 - 3_600_000).toISOString() });
    const step = (deps.recoveryQueue as RecordingRecoveryQueue).sent[0]?.step;
    const requests = sender.requests.length;

    // Act
    await createDeliveryWorkerHandler(deps)(inLane([encodeStep(step as RecoveryStep)], 'arn:shared'));
    const diverted = slowSteps.sent.map((s) => s.step);
    await createDeliveryWorkerHandler(deps)(inLane(diverted.map(encodeStep), SLOW_ARN));

    // Assert
    expect(diverted).toEqual([step]);
    expect(sender.requests.length - requests).toBe(2);
    expect(await deps.recoveries.get(hook.id, job.id, clock.now())).toMatchObject({ status: 'completed', total: 2 });
  });

  it('waits for the retry of a slow attempt in the slow lane, and of a fast failure as any retry', async () => {
    // Arrange: one attempt times out (slow), another fails fast with a 500.
    sender.answers((n) =>
      n === 1 ? { statusCode: null, durationMs: 10_000, error: 'timed out' } : { statusCode: 500, durationMs: 40 },
    );
    const [slowJob, fastJob] = [0, 1].map((n) => firstJob(event(LIVE, n), hook)) as [DeliveryJob, DeliveryJob];

    // Act
    await createDeliveryWorkerHandler(deps)(inLane([encodeJob(slowJob)], 'arn:shared'));
    await createDeliveryWorkerHandler(deps)(inLane([encodeJob(fastJob)], SLOW_ARN));

    // Assert: attempt 2 of each, 1 s later (the policy), each where its first attempt's time says.
    expect(slowRetries.scheduled).toEqual([
      { job: expect.objectContaining({ deliveryId: slowJob.deliveryId, attempt: 2 }), delaySeconds: 1 },
    ]);
    expect((deps.retries as RecordingRetryScheduler).scheduled).toEqual([
      { job: expect.objectContaining({ deliveryId: fastJob.deliveryId, attempt: 2 }), delaySeconds: 1 },
    ]);
  });
});

describe('delivery worker lanes on AWS (issue 29)', () => {
  const SLOW_ARN = 'arn:aws:sqs:local:000000000000:slow';
  const healthy = webhook(LIVE, 'wh_healthy');
  // No success for a minute, 3 failed deliveries (every worker's count on the item).
  const failing: Webhook = { ...webhook(LIVE, 'wh_failing'), failingSince: T0 - 60_000, failedDeliveries: 3 };
  // As many failures, begun a second ago: a busy healthy endpoint's 5xx that a success will clear.
  const blip: Webhook = { ...webhook(LIVE, 'wh_blip'), failingSince: T0 - 1_000, failedDeliveries: 3 };
  let deps: RecoveryDeps & { lanes: Lanes };
  let sender: ScriptedSender;
  let slowLane: RecordingDeliveryQueue;
  let sharedLane: RecordingDeliveryQueue;

  beforeEach(async () => {
    const clock = new FakeClock(T0);
    sender = new ScriptedSender(clock);
    slowLane = new RecordingDeliveryQueue();
    sharedLane = new RecordingDeliveryQueue();
    const webhooks = new InMemoryWebhookRepository();
    await webhooks.create(healthy);
    await webhooks.create(failing);
    await webhooks.create(blip);
    deps = {
      ...inMemoryRecoveryDeps(clock, { webhooks, sender }),
      lanes: {
        gate: new EndpointGate(AWS_LANE_POLICY, clock),
        slowLane,
        slowSteps: new RecordingRecoveryQueue(),
        sharedLane,
        busyDelaySeconds: 1,
        isSlowLane: (record) => record.eventSourceARN === SLOW_ARN,
        slowRetries: new RecordingRetryScheduler(),
      },
    };
  });

  it("attempts every job of a batch at once, one account's ten included: none goes round the queue", async () => {
    // Arrange: ten jobs of one account for an endpoint that answers in 300 ms.
    sender.answers({ statusCode: 200, durationMs: 300 });
    const jobs = Array.from({ length: 10 }, (_, n) => firstJob(event(LIVE, n), healthy));

    // Act
    const result = await createDeliveryWorkerHandler(deps)(sqsEvent(jobs.map(encodeJob)));

    // Assert
    expect(result.batchItemFailures).toEqual([]);
    expect(sender.requests).toHaveLength(10);
    expect(sharedLane.sent).toEqual([]);
    expect(slowLane.sent).toEqual([]);
  });

  it('attempts a first attempt that waited behind a backlog where it is: the slow lane is for slow endpoints only', async () => {
    // Arrange: the clock is at T0; one job was queued 2 minutes ago (during an outage), one 2 s ago. The shared lane
    // works a backlog off faster than the slow lane would (batches of 500, 300 at once), and fresh first attempts
    // skip it through the bypass; a backlog moved to the slow lane made every slow endpoint's retry wait behind it.
    sender.answers({ statusCode: 200, durationMs: 300 });
    const late = firstJob(event(LIVE, 0), healthy);
    const onTime = firstJob(event(LIVE, 1), healthy);
    const batch = sqsEvent([late, onTime].map(encodeJob));
    for (const [i, sentAt] of [T0 - 120_000, T0 - 2_000].entries()) {
      (batch.Records[i] as { attributes: unknown }).attributes = { SentTimestamp: String(sentAt) };
    }

    // Act
    await createDeliveryWorkerHandler(deps)(batch);

    // Assert: both attempted here; nothing moved.
    expect(slowLane.sent).toEqual([]);
    expect(sender.requests).toHaveLength(2);
  });

  it("moves a failing webhook's first attempts to the slow lane unattempted, in one send, and attempts the rest", async () => {
    // Arrange: 3 jobs for the failing webhook; 2 for a healthy one and 1 for one whose streak is a second old.
    const moved = [0, 1, 2].map((n) => firstJob(event(LIVE, n), failing));
    const kept = [firstJob(event(LIVE, 3), healthy), firstJob(event(LIVE, 4), healthy), firstJob(event(LIVE, 5), blip)];

    // Act
    await createDeliveryWorkerHandler(deps)(sqsEvent([...moved, ...kept].map(encodeJob)));

    // Assert
    expect(slowLane.sent).toHaveLength(1);
    expect(slowLane.sent[0]?.jobs.map((j) => j.deliveryId)).toEqual(moved.map((j) => j.deliveryId));
    expect(sender.requests.map((r) => r.url)).toEqual([healthy.url, healthy.url, blip.url]);
  });
});

describe('dispatcher batch', () => {
  it("lists each tenant's webhooks once per batch and fans every event out", async () => {
    // Arrange
    const { webhooks, deliveryQueue, handler } = await dispatcher();
    const list = vi.spyOn(webhooks, 'list');
    const events = Array.from({ length: 10 }, (_, n) => event(n < 7 ? LIVE : TEST, n));

    // Act
    const first = await handler(sqsEvent(events.map(encodeEvent)));
    const second = await handler(sqsEvent(events.slice(0, 1).map(encodeEvent)));

    // Assert
    expect(first.batchItemFailures).toEqual([]);
    expect(second.batchItemFailures).toEqual([]);
    expect(list.mock.calls.map(([tenant]) => `${tenant.accountId}#${tenant.mode}`)).toEqual([
      'acct_one#live',
      'acct_two#test',
      'acct_one#live',
    ]);
    const jobs = deliveryQueue.sent.flatMap((s) => s.jobs);
    expect(jobs.map((j) => j.webhookId)).toEqual([...Array(7).fill('wh_a'), ...Array(3).fill('wh_c'), 'wh_a']);
  });

  it("fails the events whose tenant's listing failed, queues nothing for them, and lists afresh next batch", async () => {
    // Arrange
    const { webhooks, deliveryQueue, handler } = await dispatcher();
    const list = vi.spyOn(webhooks, 'list').mockRejectedValueOnce(new Error('throttled'));

    // Act
    const failed = await handler(sqsEvent([event(LIVE, 1), event(LIVE, 2), event(TEST, 3)].map(encodeEvent)));
    const retried = await handler(sqsEvent([event(LIVE, 1), event(LIVE, 2)].map(encodeEvent)));

    // Assert
    expect(failed.batchItemFailures).toEqual([{ itemIdentifier: 'm0' }, { itemIdentifier: 'm1' }]);
    expect(retried.batchItemFailures).toEqual([]);
    expect(list).toHaveBeenCalledTimes(3);
    expect(deliveryQueue.sent.flatMap((s) => s.jobs.map((j) => j.deliveryId))).toEqual([
      deliveryIdFor('evt_0003', 'wh_c'),
      deliveryIdFor('evt_0001', 'wh_a'),
      deliveryIdFor('evt_0002', 'wh_a'),
    ]);
  });
});

describe('dispatcher batch: jobs gathered into full sends', () => {
  it("sends a batch's jobs in requests of 10, whatever event they come from", async () => {
    // Arrange: five webhooks on LIVE, ten events: 50 jobs, 5 per event.
    const { webhooks, deliveryQueue, handler } = await dispatcher();
    for (const id of ['wh_b', 'wh_d', 'wh_e', 'wh_f']) await webhooks.create(webhook(LIVE, id));
    const events = Array.from({ length: 10 }, (_, n) => event(LIVE, n));

    // Act
    const result = await handler(sqsEvent(events.map(encodeEvent)));

    // Assert: 5 full sends instead of 10 of five; every job once.
    expect(result.batchItemFailures).toEqual([]);
    expect(deliveryQueue.sent.map((s) => s.jobs.length)).toEqual([10, 10, 10, 10, 10]);
    const ids = deliveryQueue.sent.flatMap((s) => s.jobs.map((j) => j.deliveryId));
    expect(new Set(ids).size).toBe(50);
  });

  it('gathers the jobs of events of several tenants, and of one-job events, into one send', async () => {
    // Arrange: 7 events of LIVE (wh_a) and 3 of TEST (wh_c): 10 jobs.
    const { deliveryQueue, handler } = await dispatcher();
    const events = Array.from({ length: 10 }, (_, n) => event(n < 7 ? LIVE : TEST, n));

    // Act
    await handler(sqsEvent(events.map(encodeEvent)));

    // Assert
    expect(deliveryQueue.sent.map((s) => s.jobs.length)).toEqual([10]);
  });

  it('fails only the events whose jobs were in a send that failed; a retry sends them again', async () => {
    // Arrange: 12 one-job events (sends of 10 and 2), the second send refused once.
    const { deliveryQueue, handler } = await dispatcher();
    const send = deliveryQueue.send.bind(deliveryQueue);
    let calls = 0;
    vi.spyOn(deliveryQueue, 'send').mockImplementation((jobs, delay) => {
      calls += 1;
      return calls === 2 ? Promise.reject(new Error('SQS refused')) : send(jobs, delay);
    });
    const events = Array.from({ length: 12 }, (_, n) => event(LIVE, n));

    // Act
    const result = await handler(sqsEvent(events.map(encodeEvent)));

    // Assert: the ten sent are not failed; the two refused are.
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'm10' }, { itemIdentifier: 'm11' }]);
    expect(deliveryQueue.sent.map((s) => s.jobs.length)).toEqual([10]);
  });

  it('queues nothing and fails nothing for a batch whose events have no subscriber', async () => {
    // Arrange: email.sent, which no webhook subscribes to.
    const { deliveryQueue, handler } = await dispatcher();
    const events = [0, 1, 2].map((n) => ({ ...event(LIVE, n), type: 'email.sent' as const }));

    // Act
    const result = await handler(sqsEvent(events.map(encodeEvent)));

    // Assert
    expect(result.batchItemFailures).toEqual([]);
    expect(deliveryQueue.sent).toEqual([]);
  });
});

describe('message tenants (the local queues group by them, the sends queue dedupes by email)', () => {
  it("reads a first attempt's seed account, a retry's account and a recovery step's account; nothing else", () => {
    const seed = {
      accountId: 'acct_seed',
      mode: 'test',
      eventId: 'evt_1',
      event: 'email.sent',
      format: 'standard',
      payload: '{}',
      createdAt: 1_767_225_600_000,
    };
    expect(deliveryMessageAccount(JSON.stringify({ deliveryId: 'd', webhookId: 'w', attempt: 1, seed }))).toBe(
      'acct_seed',
    );
    expect(
      deliveryMessageAccount(encodeJob({ deliveryId: 'd', webhookId: 'w', attempt: 2, accountId: 'acct_retry' })),
    ).toBe('acct_retry');
    const step = { accountId: 'acct_step', mode: 'test', webhookId: 'w', recoveryId: 'rec_1', step: 0 } as const;
    expect(deliveryMessageAccount(encodeStep(step))).toBe('acct_step');
    expect(deliveryMessageAccount('not json')).toBeUndefined();
  });

  it('decodes a sends message with or without its account, and nothing from another body', () => {
    expect(decodeSend(encodeSend('email_1', 'acct_1'))).toEqual({ emailId: 'email_1', accountId: 'acct_1' });
    expect(decodeSend(encodeSend('email_1'))).toEqual({ emailId: 'email_1' });
    expect(decodeSend('{"nope":1}')).toBeUndefined();
    expect(decodeSend('}')).toBeUndefined();
  });
});
