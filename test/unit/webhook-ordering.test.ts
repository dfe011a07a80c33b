// Unit tests of per-email ordering (lambdas/app/webhooks/ordering.ts, wired into attemptDelivery and
// dispatchEvent) on the in-memory fakes with a fake clock: an unordered webhook never touches a lane; a later
// event is held while an earlier one of the same email is unfinished, and woken when it finishes (succeeded or
// failed for good); other emails are never held; a held row is in the reconciler's due list (the backstop); a
// stale lane entry never blocks; a finish that races the hold is not lost.
import { describe, expect, it } from 'vitest';
import { type AttemptDeps, attemptDelivery } from '../../lambdas/app/webhooks/attempts';
import { DEAD_LETTER_LIMIT, failDeadLettered } from '../../lambdas/app/webhooks/dead-letters';
import { dispatchEvent } from '../../lambdas/app/webhooks/dispatch-event';
import { releaseReserved, reserveSent } from '../../lambdas/app/webhooks/ordering';
import type { Delivery, DeliveryJob, Webhook } from '../../lambdas/app/webhooks/ports';
import { eventSequence } from '../../lambdas/domain/email/sequence';
import type { SendflowEvent } from '../../lambdas/domain/events';
import { HOLD_RECHECK_MS, LANE_LIMIT } from '../../lambdas/domain/webhooks/ordering';
import {
  FakeClock,
  InMemoryDeliveryRepository,
  InMemoryOrderLanes,
  InMemoryWebhookRepository,
  RecordingDeliveryQueue,
  RecordingRetryScheduler,
  ScriptedSender,
  seededRandom,
} from '../support/fakes';
import { EMAIL_A, EMAIL_B, eventOf, T0, TENANT, webhookOf } from '../support/ordering-fixtures';

function setup(ordering?: Webhook['ordering'], delaysSeconds: readonly number[] = [1, 30]) {
  const clock = new FakeClock(T0 + 5_000);
  const webhooks = new InMemoryWebhookRepository();
  const deliveries = new InMemoryDeliveryRepository();
  const orderLanes = new InMemoryOrderLanes();
  const sender = new ScriptedSender(clock);
  const retries = new RecordingRetryScheduler();
  const queue = new RecordingDeliveryQueue();
  const deps: AttemptDeps = {
    webhooks,
    deliveries,
    sender,
    retries,
    clock,
    random: seededRandom(),
    policy: { delaysSeconds },
    claimMs: 60_000,
    retentionSeconds: 30 * 86_400,
    orderLanes,
  };
  const webhook = webhookOf(ordering);
  /**
   * The first-attempt jobs the dispatcher queues for an event (one webhook here), wired as both runtimes wire it:
   * an ordered webhook's delivery enters its lane first. `{laned: false}`: as a release before that queued them.
   */
  const dispatch = async (event: SendflowEvent, { laned = true } = {}): Promise<DeliveryJob> => {
    const lanes = laned ? { orderLanes, retentionSeconds: deps.retentionSeconds } : {};
    await dispatchEvent({ webhooks, deliveryQueue: queue, clock, ...lanes }, event);
    return queue.sent.at(-1)?.jobs[0] as DeliveryJob;
  };
  const row = (job: DeliveryJob) => deliveries.items.get(`${job.webhookId}#${job.deliveryId}`) as Delivery;
  /** Runs every job the pipeline queued since `from` (wake-ups and retries), as the queue would. */
  const runQueued = async (from: number) => {
    const jobs = retries.scheduled.slice(from).map((s) => s.job);
    for (const job of jobs) await attemptDelivery(deps, job);
    return jobs;
  };
  return { clock, webhooks, deliveries, orderLanes, sender, retries, deps, webhook, dispatch, row, runQueued };
}

describe('an unordered webhook', () => {
  it('costs nothing more: its rows carry no email or sequence and no lane is read or written', async () => {
    // Arrange
    const t = setup();
    await t.webhooks.create(t.webhook);
    const sent = await t.dispatch(eventOf(EMAIL_A, 'email.sent', 10, 1));
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    t.sender.answers((n) => (n === 1 ? { statusCode: 503, error: 'HTTP 503' } : { statusCode: 200 }));

    // Act
    await attemptDelivery(t.deps, sent);
    await attemptDelivery(t.deps, delivered);

    // Assert: the later event went while the earlier one is pending its retry.
    expect(t.sender.requests).toHaveLength(2);
    expect(sent.seed).not.toHaveProperty('sequence');
    expect(t.row(sent)).not.toHaveProperty('emailId');
    expect(t.row(delivered).status).toBe('succeeded');
    expect(t.orderLanes.lanes.size).toBe(0);
  });
});

describe('ordering: "per_email"', () => {
  it('queues the email and the sequence of the event with the delivery', async () => {
    const t = setup('per_email');
    await t.webhooks.create(t.webhook);
    const event = eventOf(EMAIL_A, 'email.sent', 10, 1);

    const job = await t.dispatch(event);

    expect(job.seed).toMatchObject({ emailId: EMAIL_A, sequence: eventSequence(event) });
  });

  it('holds a later event of the email while an earlier one is retrying, without a request', async () => {
    // Arrange
    const t = setup('per_email');
    await t.webhooks.create(t.webhook);
    const sent = await t.dispatch(eventOf(EMAIL_A, 'email.sent', 10, 1));
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    t.sender.answers({ statusCode: 503, error: 'HTTP 503' });
    await attemptDelivery(t.deps, sent);

    // Act
    const outcome = await attemptDelivery(t.deps, delivered);

    // Assert
    expect(outcome).toBe('held');
    expect(t.sender.requests).toHaveLength(1);
    const held = t.row(delivered);
    expect(held).toMatchObject({ status: 'pending', attempts: 0, waitingFor: t.row(sent).sequence });
    expect(held.claim).toBeUndefined();
    // The backstop: due a margin after the earlier one's next attempt, so the reconciler finds it if no wake-up comes.
    expect(held.nextAttemptAt).toBe((t.row(sent).nextAttemptAt as number) + HOLD_RECHECK_MS);
    const due = await t.deliveries.listDue(Number.MAX_SAFE_INTEGER, 10);
    expect(due.map((d) => d.id)).toContain(delivered.deliveryId);
  });

  it('holds every later event until the same backstop: a held event is no blocker of its own (no growing chain)', async () => {
    // Arrange
    const t = setup('per_email');
    await t.webhooks.create(t.webhook);
    const sent = await t.dispatch(eventOf(EMAIL_A, 'email.sent', 10, 1));
    const later = [
      await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2)),
      await t.dispatch(eventOf(EMAIL_A, 'email.opened', 1_900, 3)),
      await t.dispatch(eventOf(EMAIL_A, 'email.opened', 2_900, 4)),
    ];
    t.sender.answers({ statusCode: 503, error: 'HTTP 503' });
    await attemptDelivery(t.deps, sent);

    // Act
    for (const job of later) expect(await attemptDelivery(t.deps, job)).toBe('held');

    // Assert: each is due a margin after the one attempt they wait for, not a minute after the one before it.
    const backstop = (t.row(sent).nextAttemptAt as number) + HOLD_RECHECK_MS;
    expect(later.map((job) => t.row(job).nextAttemptAt)).toEqual([backstop, backstop, backstop]);
  });

  it(`orders at most LANE_LIMIT (${LANE_LIMIT}) unfinished events of an email: one past it goes at once, outside the lane`, async () => {
    // Arrange: the first event retrying, LANE_LIMIT - 1 held behind it (the lane is full).
    const t = setup('per_email');
    await t.webhooks.create(t.webhook);
    const first = await t.dispatch(eventOf(EMAIL_A, 'email.sent', 10, 1));
    t.sender.answers((n) => (n === 1 ? { statusCode: 503, error: 'HTTP 503' } : { statusCode: 200 }));
    await attemptDelivery(t.deps, first);
    for (let i = 1; i < LANE_LIMIT; i++) {
      const job = await t.dispatch(eventOf(EMAIL_A, 'email.opened', 1_000 + i, (i % 250) + 2));
      expect(await attemptDelivery(t.deps, job)).toBe('held');
    }

    // Act: one more.
    const past = await t.dispatch(eventOf(EMAIL_A, 'email.opened', 5_000, 255));
    const outcome = await attemptDelivery(t.deps, past);

    // Assert: attempted now, and the lane stays at its limit.
    expect(outcome).toBe('attempted');
    expect(t.row(past)).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(t.orderLanes.lanes.get(`${t.webhook.id}#${EMAIL_A}`)?.size).toBe(LANE_LIMIT);
  });

  it('wakes the held event when the earlier one succeeds, and it is then attempted', async () => {
    // Arrange
    const t = setup('per_email');
    await t.webhooks.create(t.webhook);
    const sent = await t.dispatch(eventOf(EMAIL_A, 'email.sent', 10, 1));
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    t.sender.answers((n) => (n === 1 ? { statusCode: 503, error: 'HTTP 503' } : { statusCode: 200 }));
    await attemptDelivery(t.deps, sent);
    await attemptDelivery(t.deps, delivered);
    const before = t.retries.scheduled.length;

    // Act: the retry of the first event succeeds.
    t.clock.advance(1_000);
    await attemptDelivery(t.deps, { deliveryId: sent.deliveryId, webhookId: sent.webhookId, attempt: 2 });
    const woken = await t.runQueued(before);

    // Assert
    expect(woken).toEqual([
      { deliveryId: delivered.deliveryId, webhookId: delivered.webhookId, attempt: 1, accountId: TENANT.accountId },
    ]);
    expect(t.sender.requests.map((r) => JSON.parse(r.body).type)).toEqual([
      'email.sent',
      'email.sent',
      'email.delivered',
    ]);
    expect(t.row(delivered)).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(t.row(delivered)).not.toHaveProperty('waitingFor');
    expect(t.orderLanes.lanes.get(`${t.webhook.id}#${EMAIL_A}`)?.size).toBe(0);
  });

  it('wakes a paced webhook’s held event with its pace (the worker paces the jobs that carry it)', async () => {
    // Arrange: per_email and 1 request a second.
    const t = setup('per_email');
    await t.webhooks.create({ ...t.webhook, rateLimitPerSecond: 1 });
    const sent = await t.dispatch(eventOf(EMAIL_A, 'email.sent', 10, 1));
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    t.sender.answers((n) => (n === 1 ? { statusCode: 503, error: 'HTTP 503' } : { statusCode: 200 }));
    await attemptDelivery(t.deps, sent);
    expect(await attemptDelivery(t.deps, delivered)).toBe('held');
    const before = t.retries.scheduled.length;

    // Act: the earlier one succeeds on its retry.
    t.clock.advance(1_000);
    await attemptDelivery(t.deps, { deliveryId: sent.deliveryId, webhookId: sent.webhookId, attempt: 2 });

    // Assert
    expect(t.retries.scheduled.slice(before).map((s) => s.job)).toEqual([
      {
        deliveryId: delivered.deliveryId,
        webhookId: delivered.webhookId,
        attempt: 1,
        accountId: TENANT.accountId,
        ratePerSecond: 1,
      },
    ]);
  });

  it('wakes the held event when the earlier one fails for good (no retry left)', async () => {
    const t = setup('per_email', []);
    await t.webhooks.create(t.webhook);
    const sent = await t.dispatch(eventOf(EMAIL_A, 'email.sent', 10, 1));
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    let release: () => void = () => {};
    t.sender.answers((n) =>
      n === 1 ? new Promise((r) => (release = () => r({ statusCode: 500, error: 'HTTP 500' }))) : { statusCode: 200 },
    );

    // The first is in flight (its first attempt, no retry to follow) while the second arrives.
    const first = attemptDelivery(t.deps, sent);
    await new Promise((r) => setTimeout(r, 0));
    expect(await attemptDelivery(t.deps, delivered)).toBe('held');
    release();
    await first;
    await t.runQueued(0);

    expect(t.row(sent).status).toBe('failed');
    expect(t.row(delivered).status).toBe('succeeded');
  });

  it('waits only for earlier events sent to this webhook: one of an unsubscribed type, or from before, is not waited for', async () => {
    // Arrange: the webhook takes delivered and opened only; the email's sent never reaches it, and its delivered
    // came before the option was on (its delivery carries no sequence: it is in no lane).
    const t = setup();
    await t.webhooks.create({ ...t.webhook, events: ['email.delivered', 'email.opened'] });
    expect(await t.dispatch(eventOf(EMAIL_A, 'email.sent', 10, 1))).toBeUndefined();
    const before = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    t.sender.answers({ statusCode: 503, error: 'HTTP 503' });
    await attemptDelivery(t.deps, before);
    await t.webhooks.update(TENANT, t.webhook.id, { ordering: 'per_email' }, new Date(T0).toISOString());
    const opened = await t.dispatch(eventOf(EMAIL_A, 'email.opened', 5_000, 3));

    // Act
    const outcome = await attemptDelivery(t.deps, opened);

    // Assert: attempted at once, though the earlier delivered is still retrying.
    expect(outcome).toBe('attempted');
    expect(t.row(before).status).toBe('pending');
    expect(t.sender.requests.map((r) => JSON.parse(r.body).type)).toEqual(['email.delivered', 'email.opened']);
  });

  it('never holds another email: its events flow while the first email waits', async () => {
    const t = setup('per_email');
    await t.webhooks.create(t.webhook);
    const sentA = await t.dispatch(eventOf(EMAIL_A, 'email.sent', 10, 1));
    const deliveredA = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    const sentB = await t.dispatch(eventOf(EMAIL_B, 'email.sent', 20, 3));
    const deliveredB = await t.dispatch(eventOf(EMAIL_B, 'email.delivered', 950, 4));
    t.sender.answers((n) => (n === 1 ? { statusCode: 503, error: 'HTTP 503' } : { statusCode: 200 }));

    await attemptDelivery(t.deps, sentA);
    expect(await attemptDelivery(t.deps, deliveredA)).toBe('held');
    expect(await attemptDelivery(t.deps, sentB)).toBe('attempted');
    expect(await attemptDelivery(t.deps, deliveredB)).toBe('attempted');

    expect(t.row(sentB).status).toBe('succeeded');
    expect(t.row(deliveredB).status).toBe('succeeded');
    expect(t.row(deliveredA).status).toBe('pending');
  });

  it('holds again a held event the reconciler re-queues while the earlier one is still unfinished', async () => {
    const t = setup('per_email');
    await t.webhooks.create(t.webhook);
    const sent = await t.dispatch(eventOf(EMAIL_A, 'email.sent', 10, 1));
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    t.sender.answers({ statusCode: 503, error: 'HTTP 503' });
    await attemptDelivery(t.deps, sent);
    await attemptDelivery(t.deps, delivered);

    t.clock.advance(HOLD_RECHECK_MS * 2);
    const again = await attemptDelivery(t.deps, {
      deliveryId: delivered.deliveryId,
      webhookId: delivered.webhookId,
      attempt: 1,
    });

    expect(again).toBe('held');
    expect(t.sender.requests).toHaveLength(1);
    expect(t.row(delivered)).toMatchObject({ status: 'pending', attempts: 0 });
  });

  it('is not blocked by a stale lane entry (a delivery that finished but never left): it is taken out', async () => {
    const t = setup('per_email');
    await t.webhooks.create(t.webhook);
    const sent = await t.dispatch(eventOf(EMAIL_A, 'email.sent', 10, 1));
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    await attemptDelivery(t.deps, sent);
    // As if its worker stopped between storing the result and leaving the lane.
    await t.orderLanes.enter(
      { webhookId: t.webhook.id, emailId: EMAIL_A },
      { deliveryId: sent.deliveryId, sequence: t.row(sent).sequence as number },
      0,
    );

    expect(await attemptDelivery(t.deps, delivered)).toBe('attempted');
    expect([...(t.orderLanes.lanes.get(`${t.webhook.id}#${EMAIL_A}`)?.keys() ?? [])]).toEqual([]);
  });

  it('does not lose the wake-up when the earlier one finishes while the later one is being held', async () => {
    // Arrange: the earlier one is in flight; it finishes right as the later one's hold is stored.
    const t = setup('per_email');
    await t.webhooks.create(t.webhook);
    const sent = await t.dispatch(eventOf(EMAIL_A, 'email.sent', 10, 1));
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    let finish: () => void = () => {};
    t.sender.answers((n) =>
      n === 1 ? new Promise((r) => (finish = () => r({ statusCode: 200 }))) : { statusCode: 200 },
    );
    const first = attemptDelivery(t.deps, sent);
    await new Promise((r) => setTimeout(r, 0));
    const record = t.deliveries.record.bind(t.deliveries);
    let wokenEarly = 0;
    t.deliveries.record = async (delivery, attempt) => {
      if (delivery.id === delivered.deliveryId && delivery.waitingFor !== undefined) {
        // The earlier one ends now, and its wake-up is handled at once, before this hold is stored: it finds the
        // claim still taken, and is skipped.
        finish();
        await first;
        wokenEarly = t.retries.scheduled.length;
        expect(await t.runQueued(0)).toHaveLength(1);
        expect(t.sender.requests).toHaveLength(1);
      }
      return record(delivery, attempt);
    };

    // Act
    expect(await attemptDelivery(t.deps, delivered)).toBe('held');
    t.deliveries.record = record;
    await t.runQueued(wokenEarly);

    // Assert
    expect(t.row(delivered).status).toBe('succeeded');
    expect(t.sender.requests.map((r) => JSON.parse(r.body).type)).toEqual(['email.sent', 'email.delivered']);
  });

  it('wakes the held event when the earlier one ends failed from the dead-letter queue (its job kept failing in our code)', async () => {
    // Arrange: the earlier one's worker hangs (its claim then lapses); it has dead-lettered before.
    const t = setup('per_email');
    await t.webhooks.create(t.webhook);
    const sent = await t.dispatch(eventOf(EMAIL_A, 'email.sent', 10, 1));
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    t.sender.answers((n) => (n === 1 ? new Promise(() => {}) : { statusCode: 200 }));
    void attemptDelivery(t.deps, sent);
    await new Promise((r) => setTimeout(r, 0));
    expect(await attemptDelivery(t.deps, delivered)).toBe('held');
    const stuck = t.row(sent);
    t.deliveries.items.set(`${sent.webhookId}#${sent.deliveryId}`, { ...stuck, deadLetters: DEAD_LETTER_LIMIT - 1 });
    t.clock.advance(120_000);
    const before = t.retries.scheduled.length;

    // Act
    const outcome = await failDeadLettered(t.deps, sent);
    await t.runQueued(before);

    // Assert
    expect(outcome).toBe('failed');
    expect(t.row(sent).status).toBe('failed');
    expect(t.row(delivered)).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it('ends a held event failed (webhook paused) when woken on a paused webhook, and wakes the next one', async () => {
    const t = setup('per_email', []);
    await t.webhooks.create(t.webhook);
    const sent = await t.dispatch(eventOf(EMAIL_A, 'email.sent', 10, 1));
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    const opened = await t.dispatch(eventOf(EMAIL_A, 'email.opened', 5_000, 3));
    let finish: () => void = () => {};
    t.sender.answers((n) =>
      n === 1 ? new Promise((r) => (finish = () => r({ statusCode: 200 }))) : { statusCode: 200 },
    );
    const first = attemptDelivery(t.deps, sent);
    await new Promise((r) => setTimeout(r, 0));
    expect(await attemptDelivery(t.deps, delivered)).toBe('held');
    expect(await attemptDelivery(t.deps, opened)).toBe('held');

    await t.webhooks.update(TENANT, t.webhook.id, { active: false }, new Date(T0).toISOString());
    finish();
    await first;
    await t.runQueued(0);
    await t.runQueued(1);

    expect(t.row(delivered)).toMatchObject({ status: 'failed', attempts: 1 });
    expect(t.row(opened)).toMatchObject({ status: 'failed', attempts: 1 });
    expect(t.sender.requests).toHaveLength(1);
  });

  it('attempts a delivery queued before the option was turned off at once (the held mark is dropped)', async () => {
    const t = setup('per_email');
    await t.webhooks.create(t.webhook);
    const sent = await t.dispatch(eventOf(EMAIL_A, 'email.sent', 10, 1));
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    t.sender.answers((n) => (n === 1 ? { statusCode: 503, error: 'HTTP 503' } : { statusCode: 200 }));
    await attemptDelivery(t.deps, sent);
    await attemptDelivery(t.deps, delivered);

    await t.webhooks.update(TENANT, t.webhook.id, { ordering: 'none' }, new Date(T0).toISOString());
    await attemptDelivery(t.deps, { deliveryId: delivered.deliveryId, webhookId: delivered.webhookId, attempt: 1 });

    expect(t.row(delivered)).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(t.row(delivered)).not.toHaveProperty('waitingFor');
  });
});

describe('an earlier event is in its lane before a later one is looked at (issue 27)', () => {
  const sentOf = (afterMs: number, byte: number) => eventOf(EMAIL_A, 'email.sent', afterMs, byte);
  const typesSent = (t: ReturnType<typeof setup>) => t.sender.requests.map((r) => JSON.parse(r.body).type);

  it("holds a later event whose first attempt comes before the earlier one's: the earlier entered at its fan-out", async () => {
    // Arrange: both fanned out; the later event's job happens to run first.
    const t = setup('per_email');
    await t.webhooks.create(t.webhook);
    const sent = await t.dispatch(sentOf(10, 1));
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    expect(await t.orderLanes.read({ webhookId: t.webhook.id, emailId: EMAIL_A })).toEqual([
      expect.objectContaining({ deliveryId: sent.deliveryId, rowBy: expect.any(Number) }),
      expect.objectContaining({ deliveryId: delivered.deliveryId, rowBy: expect.any(Number) }),
    ]);

    // Act
    const first = await attemptDelivery(t.deps, delivered);
    await attemptDelivery(t.deps, sent);
    await t.runQueued(0);

    // Assert: held without a request until email.sent succeeded, then woken and sent.
    expect(first).toBe('held');
    expect(typesSent(t)).toEqual(['email.sent', 'email.delivered']);
    expect(t.row(delivered)).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it('(the regression) jobs queued without entering at the fan-out let the later event overtake', async () => {
    const t = setup('per_email');
    await t.webhooks.create(t.webhook);
    const sent = await t.dispatch(sentOf(10, 1), { laned: false });
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2), { laned: false });

    expect(await attemptDelivery(t.deps, delivered)).toBe('attempted');
    await attemptDelivery(t.deps, sent);

    expect(typesSent(t)).toEqual(['email.delivered', 'email.sent']);
  });

  it('holds what the provider tells of a copy behind its email.sent, reserved before the hand-over', async () => {
    // Arrange: email.sent reserved (the send worker, before the provider); the provider's delivered fanned out and
    // attempted before the send worker has fanned out email.sent.
    const t = setup('per_email');
    await t.webhooks.create(t.webhook);
    const sentEvent = sentOf(10, 1);
    const reserved = await reserveSent(t.deps, [sentEvent], t.clock.now() + 60_000);
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));

    // Act
    const first = await attemptDelivery(t.deps, delivered);
    const sent = await t.dispatch(sentEvent);
    t.sender.answers((n) => (n === 1 ? { statusCode: 500, error: 'HTTP 500' } : { statusCode: 200 }));
    await attemptDelivery(t.deps, sent);
    t.clock.advance(1_000);
    await attemptDelivery(t.deps, { deliveryId: sent.deliveryId, webhookId: sent.webhookId, attempt: 2 });
    await t.runQueued(0);

    // Assert
    expect(reserved).toHaveLength(1);
    expect(reserved[0]?.entry.deliveryId).toBe(sent.deliveryId);
    expect(first).toBe('held');
    expect(typesSent(t)).toEqual(['email.sent', 'email.sent', 'email.delivered']);
  });

  it('reserves only for active per_email webhooks that take email.sent, and nothing for an unordered one', async () => {
    const t = setup();
    await t.webhooks.create(t.webhook);
    await t.webhooks.create({ ...t.webhook, id: 'wh_02paused', ordering: 'per_email', active: false });
    await t.webhooks.create({ ...t.webhook, id: 'wh_03nosent', ordering: 'per_email', events: ['email.opened'] });

    expect(await reserveSent(t.deps, [sentOf(10, 1)], t.clock.now() + 60_000)).toEqual([]);
    expect(t.orderLanes.lanes.size).toBe(0);
  });

  it('a copy the provider did not take leaves its lanes and wakes the event it held', async () => {
    const t = setup('per_email');
    await t.webhooks.create(t.webhook);
    const sentEvent = sentOf(10, 1);
    const reserved = await reserveSent(t.deps, [sentEvent], t.clock.now() + 60_000);
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    expect(await attemptDelivery(t.deps, delivered)).toBe('held');

    await releaseReserved(t.deps, reserved, new Set([sentEvent.id]));
    await t.runQueued(0);

    expect(typesSent(t)).toEqual(['email.delivered']);
    expect(await t.orderLanes.read({ webhookId: t.webhook.id, emailId: EMAIL_A })).toEqual([]);
  });

  it('a reservation whose row never came stops holding at its end (a send worker that died mid-hand-over)', async () => {
    const t = setup('per_email');
    await t.webhooks.create(t.webhook);
    await reserveSent(t.deps, [sentOf(10, 1)], t.clock.now() + 30_000);
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    expect(await attemptDelivery(t.deps, delivered)).toBe('held');

    // The reconciler's look after the reservation ended.
    t.clock.set(t.row(delivered).nextAttemptAt as number);
    const outcome = await attemptDelivery(t.deps, {
      deliveryId: delivered.deliveryId,
      webhookId: delivered.webhookId,
      attempt: 1,
    });

    expect(outcome).toBe('attempted');
    expect(await t.orderLanes.read({ webhookId: t.webhook.id, emailId: EMAIL_A })).toEqual([]);
  });

  it('looks at a long-held event less and less often: the backstop grows with the time it has been held', async () => {
    const t = setup('per_email');
    await t.webhooks.create(t.webhook);
    await t.dispatch(sentOf(10, 1));
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    expect(await attemptDelivery(t.deps, delivered)).toBe('held');
    expect(t.row(delivered).nextAttemptAt).toBe(t.clock.now() + HOLD_RECHECK_MS);

    // An hour later (a backlog ahead of email.sent's first attempt), the reconciler looks again.
    t.clock.advance(3_600_000);
    await attemptDelivery(t.deps, { deliveryId: delivered.deliveryId, webhookId: delivered.webhookId, attempt: 1 });

    expect(t.row(delivered).nextAttemptAt).toBe(t.clock.now() + t.clock.now() - t.row(delivered).createdAt);
  });
});
