// Unit tests of the events-queue use case (lambdas/app/events/process-event.ts) on in-memory fakes: a permanent
// bounce or a complaint suppresses the recipient in the event's account and mode (first reason kept), a
// transient or undetermined bounce does not; every email event is recorded in its email's history once; the
// event is fanned out to subscribed webhooks; a redelivery changes nothing but re-queues the same deliveries;
// a step that fails (fan-out, suppression) never holds back the others, and fails the event so it is retried;
// the history is written last, once every other step is done, so an event it holds was fanned out.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  type ProcessEventDeps,
  processEvent,
  processEvents,
  suppressionReason,
} from '../../lambdas/app/events/process-event';
import type { Webhook } from '../../lambdas/app/webhooks/ports';
import type { SendflowEvent } from '../../lambdas/domain/events';
import { deliveryIdFor } from '../../lambdas/domain/webhooks/render';
import {
  FakeClock,
  InMemoryEmailHistory,
  InMemorySuppressionList,
  InMemoryWebhookRepository,
  RecordingDeliveryQueue,
} from '../support/fakes';

const T0 = Date.UTC(2025, 5, 10, 9, 0, 0);
const TENANT = { accountId: 'acct_events', mode: 'live' as const };
const EMAIL_ID = 'email_01jxevents';

function newEvent(type: SendflowEvent['type'], overrides: Partial<SendflowEvent> = {}): SendflowEvent {
  return {
    id: `evt_${type.replace('email.', '')}_ada`,
    type,
    ...TENANT,
    timestamp: new Date(T0 + 2_000).toISOString(),
    emailId: EMAIL_ID,
    to: 'ada@example.com',
    data: { from: 'Acme <billing@acme.example>', subject: 'Invoice' },
    ...overrides,
  };
}

const bounce = (bounceType: string, overrides: Partial<SendflowEvent> = {}) =>
  newEvent('email.bounced', {
    ...overrides,
    data: {
      from: 'Acme <billing@acme.example>',
      subject: 'Invoice',
      bounce_type: bounceType,
      bounce_sub_type: 'General',
    },
  });

function setup() {
  const clock = new FakeClock(T0 + 5_000);
  const webhooks = new InMemoryWebhookRepository();
  const deliveryQueue = new RecordingDeliveryQueue();
  const emailHistory = new InMemoryEmailHistory();
  const suppressions = new InMemorySuppressionList();
  const deps: ProcessEventDeps = { webhooks, deliveryQueue, clock, emailHistory, suppressions };
  return { clock, webhooks, deliveryQueue, emailHistory, suppressions, deps };
}

const webhook = (overrides: Partial<Webhook> = {}): Webhook => ({
  ...TENANT,
  id: 'wh_01bounces',
  url: 'https://hooks.example.com/sendflow',
  events: ['email.bounced', 'email.complained'],
  format: 'standard',
  secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
  active: true,
  createdAt: new Date(T0 - 86_400_000).toISOString(),
  updatedAt: new Date(T0 - 86_400_000).toISOString(),
  ...overrides,
});

describe('suppressionReason', () => {
  it.each([
    ['a permanent bounce', bounce('Permanent'), 'hard_bounce'],
    [
      'a permanent bounce SES refused for its own account-level list (not a recipient verdict)',
      newEvent('email.bounced', {
        data: {
          bounce_type: 'Permanent',
          bounce_sub_type: 'OnAccountSuppressionList',
          refused_by_account_suppression_list: true,
        },
      }),
      null,
    ],
    [
      'a permanent bounce marked not refused by the account list',
      newEvent('email.bounced', { data: { bounce_type: 'Permanent', refused_by_account_suppression_list: false } }),
      'hard_bounce',
    ],
    ['a transient bounce', bounce('Transient'), null],
    ['an undetermined bounce', bounce('Undetermined'), null],
    ['a bounce without a type', newEvent('email.bounced'), null],
    ['a complaint', newEvent('email.complained'), 'complaint'],
    ['a delivery', newEvent('email.delivered'), null],
    ['a failure', newEvent('email.failed', { data: { reason: 'suppressed_by_provider' } }), null],
    ['an unsubscribe (suppressed by its own use case)', newEvent('email.unsubscribed'), null],
  ])('%s → %s', (_name, event, reason) => {
    expect(suppressionReason(event)).toBe(reason);
  });
});

describe('processEvent', () => {
  let s: ReturnType<typeof setup>;
  beforeEach(async () => {
    s = setup();
  });

  it('a permanent bounce suppresses the recipient as hard_bounce, at the event’s time, naming the email', async () => {
    // Act
    await processEvent(s.deps, bounce('Permanent'));

    // Assert
    const found = await s.suppressions.find(TENANT, ['ada@example.com', 'bob@example.com']);
    expect([...found.values()]).toEqual([
      {
        address: 'ada@example.com',
        reason: 'hard_bounce',
        createdAt: new Date(T0 + 2_000).toISOString(),
        emailId: EMAIL_ID,
      },
    ]);
  });

  it('a transient bounce suppresses no one, but is still recorded in the history', async () => {
    // Act
    await processEvent(s.deps, bounce('Transient'));

    // Assert
    expect(s.suppressions.items.size).toBe(0);
    expect((await s.emailHistory.latest(EMAIL_ID, 100)).events.map((e) => e.type)).toEqual(['email.bounced']);
  });

  it('a complaint suppresses the recipient as complaint', async () => {
    // Act
    await processEvent(s.deps, newEvent('email.complained'));

    // Assert
    expect((await s.suppressions.find(TENANT, ['ada@example.com'])).get('ada@example.com')?.reason).toBe('complaint');
  });

  it('keeps the first reason: a complaint after a hard bounce leaves hard_bounce', async () => {
    // Act
    await processEvent(s.deps, bounce('Permanent'));
    await processEvent(s.deps, newEvent('email.complained', { timestamp: new Date(T0 + 9_000).toISOString() }));

    // Assert
    expect((await s.suppressions.find(TENANT, ['ada@example.com'])).get('ada@example.com')).toMatchObject({
      reason: 'hard_bounce',
      createdAt: new Date(T0 + 2_000).toISOString(),
    });
  });

  it('suppresses only in the event’s account and mode', async () => {
    // Act
    await processEvent(s.deps, bounce('Permanent'));

    // Assert
    expect((await s.suppressions.find({ ...TENANT, mode: 'test' }, ['ada@example.com'])).size).toBe(0);
    expect((await s.suppressions.find({ accountId: 'acct_other', mode: 'live' }, ['ada@example.com'])).size).toBe(0);
  });

  it('suppresses nothing for a bounce without a recipient', async () => {
    // Arrange
    const { to: _to, ...event } = bounce('Permanent');

    // Act
    await processEvent(s.deps, event);

    // Assert
    expect(s.suppressions.items.size).toBe(0);
  });

  it('records each event in its email’s history with id, type, recipient and time, read back by time', async () => {
    // Arrange
    const sent = newEvent('email.sent', { timestamp: new Date(T0 + 1_000).toISOString() });
    const delivered = newEvent('email.delivered', { to: 'bob@example.com', id: 'evt_delivered_bob' });
    const opened = newEvent('email.opened', { id: 'evt_opened_noto' });
    const { to: _to, ...openedWithoutTo } = opened;

    // Act: they arrive out of order.
    await processEvent(s.deps, delivered);
    await processEvent(s.deps, sent);
    await processEvent(s.deps, openedWithoutTo);

    // Assert: by time, ties (delivered and opened) by id.
    expect((await s.emailHistory.latest(EMAIL_ID, 100)).events).toEqual([
      { id: sent.id, type: 'email.sent', to: 'ada@example.com', timestamp: sent.timestamp },
      { id: delivered.id, type: 'email.delivered', to: 'bob@example.com', timestamp: delivered.timestamp },
      { id: opened.id, type: 'email.opened', timestamp: opened.timestamp },
    ]);
  });

  it('a redelivered event changes nothing: history and suppression once; the same deliveries are queued again', async () => {
    // Arrange
    await s.webhooks.create(webhook());
    const event = bounce('Permanent');

    // Act
    await processEvent(s.deps, event);
    await processEvent(s.deps, event);

    // Assert
    expect((await s.emailHistory.latest(EMAIL_ID, 100)).events).toHaveLength(1);
    expect(s.suppressions.items.size).toBe(1);
    const queued = s.deliveryQueue.sent.map((batch) => batch.jobs.map((j) => j.deliveryId));
    expect(queued).toEqual([[deliveryIdFor(event.id, 'wh_01bounces')], [deliveryIdFor(event.id, 'wh_01bounces')]]);
  });

  it('fans the event out to the tenant’s active webhooks that subscribe to it, and only those', async () => {
    // Arrange
    await s.webhooks.create(webhook());
    await s.webhooks.create(webhook({ id: 'wh_02paused', active: false }));
    await s.webhooks.create(webhook({ id: 'wh_03delivered', events: ['email.delivered'] }));
    await s.webhooks.create(webhook({ id: 'wh_04testmode', mode: 'test' }));

    // Act
    await processEvent(s.deps, newEvent('email.complained'));

    // Assert
    expect(s.deliveryQueue.sent.flatMap((b) => b.jobs.map((j) => j.webhookId))).toEqual(['wh_01bounces']);
  });

  it('processes an event that names no email (a domain event): nothing appended, nothing suppressed, still fanned out', async () => {
    // Arrange
    await s.webhooks.create(webhook({ events: ['domain.updated'] }));
    const event: SendflowEvent = {
      id: 'evt_domain',
      type: 'domain.updated',
      ...TENANT,
      timestamp: new Date(T0).toISOString(),
      data: { id: 'dom_01', name: 'acme.example', status: 'verified' },
    };

    // Act
    await processEvent(s.deps, event);

    // Assert
    expect((await s.emailHistory.latest(EMAIL_ID, 100)).events).toEqual([]);
    expect(s.suppressions.items.size).toBe(0);
    expect(s.deliveryQueue.sent.flatMap((b) => b.jobs.map((j) => j.webhookId))).toEqual(['wh_01bounces']);
  });

  it('suppresses and records even when the email is not stored (no error; only a stored email shows history)', async () => {
    // Act
    await processEvent(s.deps, bounce('Permanent', { emailId: 'email_unknown' }));

    // Assert
    expect((await s.suppressions.find(TENANT, ['ada@example.com'])).get('ada@example.com')?.emailId).toBe(
      'email_unknown',
    );
    expect((await s.emailHistory.latest('email_unknown', 10)).events).toHaveLength(1);
  });
});

describe('processEvent when a step fails', () => {
  let s: ReturnType<typeof setup>;
  beforeEach(async () => {
    s = setup();
    await s.webhooks.create(webhook());
  });
  const failing = (message: string) => async () => {
    throw new Error(message);
  };

  it('a failed history write (the email item once passed 400 KB here) does not hold back the fan-out, and fails the event for a retry', async () => {
    // Arrange
    s.emailHistory.record = failing('Item size has exceeded the maximum allowed size');
    const event = bounce('Permanent');

    // Act
    const processing = processEvent(s.deps, event);

    // Assert: the deliveries are queued, the suppression is written, and the queue sees the failure.
    await expect(processing).rejects.toThrow('maximum allowed size');
    expect(s.deliveryQueue.sent.flatMap((b) => b.jobs.map((j) => j.deliveryId))).toEqual([
      deliveryIdFor(event.id, 'wh_01bounces'),
    ]);
    expect(s.suppressions.items.size).toBe(1);
  });

  it('the retry of that event records the history and queues the same deliveries again (the worker skips them)', async () => {
    // Arrange
    const record = s.emailHistory.record.bind(s.emailHistory);
    s.emailHistory.record = failing('throttled');
    const event = bounce('Permanent');
    await expect(processEvent(s.deps, event)).rejects.toThrow('throttled');

    // Act
    s.emailHistory.record = record;
    await processEvent(s.deps, event);

    // Assert
    expect((await s.emailHistory.latest(EMAIL_ID, 10)).events.map((e) => e.id)).toEqual([event.id]);
    const queued = s.deliveryQueue.sent.map((batch) => batch.jobs.map((j) => j.deliveryId));
    expect(queued).toEqual([[deliveryIdFor(event.id, 'wh_01bounces')], [deliveryIdFor(event.id, 'wh_01bounces')]]);
  });

  it('a failed fan-out records no history and notes no status (both follow the fan-out), and fails the event', async () => {
    // Arrange
    s.deliveryQueue.send = failing('SQS unavailable');

    // Act / Assert
    await expect(processEvent(s.deps, bounce('Permanent'))).rejects.toThrow('SQS unavailable');
    expect((await s.emailHistory.latest(EMAIL_ID, 10)).events).toEqual([]);
    expect(s.emailHistory.statuses.size).toBe(0);
    expect(s.suppressions.items.size).toBe(1);
  });

  it('writes the history last, once the fan-out is done: a worker killed before finds the event unrecorded', async () => {
    // Arrange: what the history holds when the fan-out's jobs are sent.
    const seen: number[] = [];
    const send = s.deliveryQueue.send.bind(s.deliveryQueue);
    s.deliveryQueue.send = async (jobs, delay) => {
      seen.push((await s.emailHistory.latest(EMAIL_ID, 10)).events.length);
      return send(jobs, delay);
    };

    // Act
    await processEvent(s.deps, bounce('Permanent'));

    // Assert
    expect(seen).toEqual([0]);
    expect((await s.emailHistory.latest(EMAIL_ID, 10)).events).toHaveLength(1);
  });

  it('two failed steps fail the event with both reasons', async () => {
    // Arrange
    s.deliveryQueue.send = failing('SQS unavailable');
    s.suppressions.add = failing('throttled');

    // Act
    const processing = processEvent(s.deps, bounce('Permanent'));

    // Assert
    await expect(processing).rejects.toBeInstanceOf(AggregateError);
    await expect(processing).rejects.toMatchObject({
      errors: [
        expect.objectContaining({ message: 'SQS unavailable' }),
        expect.objectContaining({ message: 'throttled' }),
      ],
    });
  });
});

describe('processEvents (a batch processed where it arrives: the send worker’s email.sent)', () => {
  it('lists a tenant’s webhooks once, sends the batch’s delivery jobs together, and records every event', async () => {
    // Arrange
    const s = setup();
    await s.webhooks.create(webhook({ events: ['email.sent'] }));
    let listings = 0;
    const list = s.webhooks.list.bind(s.webhooks);
    s.webhooks.list = (tenant) => {
      listings += 1;
      return list(tenant);
    };
    const events = ['ada', 'bob', 'cy'].map((name) =>
      newEvent('email.sent', { id: `evt_sent_${name}`, to: `${name}@example.com` }),
    );

    // Act
    const failed = await processEvents(s.deps, events);

    // Assert
    expect(failed).toEqual([]);
    expect(listings).toBe(1);
    expect(s.deliveryQueue.sent).toHaveLength(1);
    expect(s.deliveryQueue.sent[0]?.jobs.map((j) => j.deliveryId)).toEqual(
      events.map((e) => deliveryIdFor(e.id, 'wh_01bounces')),
    );
    const history = await s.emailHistory.latest(EMAIL_ID, 100);
    expect(history.events.map((e) => e.id).sort()).toEqual(events.map((e) => e.id).sort());
  });

  it('returns only the events whose processing failed (for the caller to retry through the queue)', async () => {
    // Arrange
    const s = setup();
    const record = s.emailHistory.record.bind(s.emailHistory);
    s.emailHistory.record = async (emailId, entry) => {
      if (entry.id === 'evt_sent_bob') throw new Error('history write throttled');
      return record(emailId, entry);
    };
    const events = ['ada', 'bob'].map((name) =>
      newEvent('email.sent', { id: `evt_sent_${name}`, to: `${name}@example.com` }),
    );

    // Act
    const failed = await processEvents(s.deps, events);

    // Assert
    expect(failed.map((e) => e.id)).toEqual(['evt_sent_bob']);
    expect((await s.emailHistory.latest(EMAIL_ID, 100)).events.map((e) => e.id)).toEqual(['evt_sent_ada']);
  });
});
