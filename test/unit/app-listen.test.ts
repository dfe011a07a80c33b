// Unit tests of listen sessions (lambdas/app/listen) on the in-memory fake and a fake clock: a session ends after
// LISTEN_IDLE_SECONDS without a poll and each poll restarts that; a poll waits for a first event with bounded
// reads; the newest second is held back; the cap holds against concurrent openings; the fan-out puts an event on
// the live sessions of its account and mode that take it, with the exact standard payload, and nowhere else.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KeyedSlots } from '../../lambdas/adapters/in-process/keyed-slots';
import { InProcessListenSignals, notifyingSessions } from '../../lambdas/adapters/in-process/listen-signals';
import { InProcessOpenPolls } from '../../lambdas/adapters/in-process/open-polls';
import { processEvent } from '../../lambdas/app/events/process-event';
import {
  createListenSession,
  endListenSession,
  type ListenDeps,
  pollListenEvents,
} from '../../lambdas/app/listen/listen-sessions';
import { relayToListeners } from '../../lambdas/app/listen/relay-event';
import { LimitExceededError, NotFoundError, RateLimitedError, ValidationError } from '../../lambdas/domain/errors';
import type { SendflowEvent } from '../../lambdas/domain/events';
import {
  LISTEN_FALLBACK_READ_MS,
  LISTEN_IDLE_SECONDS,
  LISTEN_POLL_RETRY_SECONDS,
  LISTEN_SESSIONS_PER_ACCOUNT,
  LISTEN_SETTLE_MS,
} from '../../lambdas/domain/listen';
import { PLANS } from '../../lambdas/domain/plans';
import { renderPayload } from '../../lambdas/domain/webhooks/render';
import {
  FakeClock,
  InMemoryEmailHistory,
  InMemorySuppressionList,
  InMemoryWebhookRepository,
  RecordingDeliveryQueue,
  seededRandom,
} from '../support/fakes';
import { InMemoryListenSessionRepository } from '../support/listen-fake';

const T0 = Date.UTC(2026, 10, 26, 4, 0, 0);
const TENANT = { accountId: 'acct_listen', mode: 'test' as const };
/** A poll's caller: the tenant and its plan (the plan sets the cap on open polls). */
const CALLER = { ...TENANT, plan: 'scale' as const };

function setup() {
  const clock = new FakeClock(T0);
  const listenSessions = new InMemoryListenSessionRepository();
  let reads = 0;
  const counted = Object.assign(Object.create(listenSessions) as InMemoryListenSessionRepository, {
    readEvents: (...args: Parameters<InMemoryListenSessionRepository['readEvents']>) => {
      reads++;
      return listenSessions.readEvents(...args);
    },
  });
  const deps: ListenDeps = {
    listenSessions: counted,
    clock,
    random: seededRandom('listen'),
    sleep: async (ms) => clock.advance(ms),
  };
  return { clock, deps, store: listenSessions, reads: () => reads };
}

const event = (type: SendflowEvent['type'], overrides: Partial<SendflowEvent> = {}): SendflowEvent => ({
  id: `evt_${type.replace('.', '_')}_${Math.random().toString(36).slice(2, 8)}`,
  type,
  ...TENANT,
  timestamp: new Date(T0).toISOString(),
  emailId: 'email_01listen',
  to: 'ada@example.com',
  data: { subject: 'Hi' },
  ...overrides,
});

describe('listen sessions: expiry', () => {
  it('ends a session not polled for LISTEN_IDLE_SECONDS; every poll restarts the count', async () => {
    // Arrange
    const { clock, deps } = setup();
    const session = await createListenSession(deps, TENANT, {});
    expect(session.expiresAt).toBe(T0 / 1000 + LISTEN_IDLE_SECONDS);

    // Act: polls just inside the idle time keep it alive, well past its first expiry.
    for (let i = 0; i < 3; i++) {
      clock.advance((LISTEN_IDLE_SECONDS - 1) * 1000);
      await pollListenEvents(deps, CALLER, session.id, { after: null, waitMs: 0 });
    }
    // Then it is left idle for the whole idle time.
    clock.advance(LISTEN_IDLE_SECONDS * 1000);

    // Assert: gone, for the poll and for the fan-out (which puts nothing on it).
    await expect(pollListenEvents(deps, CALLER, session.id, { after: null, waitMs: 0 })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(await relayToListeners(deps, event('email.sent'))).toBe(0);
  });

  it('an expired session no longer counts toward the cap', async () => {
    const { clock, deps } = setup();
    for (let i = 0; i < LISTEN_SESSIONS_PER_ACCOUNT; i++) await createListenSession(deps, TENANT, {});
    await expect(createListenSession(deps, TENANT, {})).rejects.toBeInstanceOf(LimitExceededError);
    clock.advance(LISTEN_IDLE_SECONDS * 1000);
    await expect(createListenSession(deps, TENANT, {})).resolves.toMatchObject({ accountId: TENANT.accountId });
  });
});

describe('listen sessions: the cap', () => {
  it('holds against concurrent openings: of 8 at once, exactly 5 stay, across both modes', async () => {
    const { deps, store } = setup();
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => createListenSession(deps, { ...TENANT, mode: i % 2 ? 'live' : 'test' }, {})),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(LISTEN_SESSIONS_PER_ACCOUNT);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason)).toEqual(
      Array(3).fill(expect.any(LimitExceededError)),
    );
    expect(await store.listLive(TENANT.accountId, T0)).toHaveLength(LISTEN_SESSIONS_PER_ACCOUNT);
  });

  it('refuses an unknown event name, naming it; stores legacy names normalized', async () => {
    const { deps } = setup();
    await expect(createListenSession(deps, TENANT, { events: ['delivered', 'email.opend'] })).rejects.toMatchObject({
      constructor: ValidationError,
      details: [{ path: 'events.1', message: expect.stringContaining('email.opened') }],
    });
    expect((await createListenSession(deps, TENANT, { events: ['delivered'] })).events).toEqual(['email.delivered']);
  });
});

describe('listen sessions: polling', () => {
  it('with no signals (AWS), waits up to waitMs for a first event with one read a second, then answers empty', async () => {
    const { clock, deps, reads } = setup();
    const session = await createListenSession(deps, TENANT, {});
    const result = await pollListenEvents(deps, CALLER, session.id, { after: null, waitMs: 20_000 });
    expect(result.events).toEqual([]);
    expect(result.next).toBeNull();
    expect(clock.now()).toBe(T0 + 20_000);
    expect(reads()).toBe(21);
  });

  it('waits no longer than the deployment allows (on AWS 0: a poll answers at once and holds no function)', async () => {
    const { clock, deps, reads } = setup();
    const session = await createListenSession(deps, TENANT, {});
    const result = await pollListenEvents({ ...deps, listenMaxWaitMs: 0 }, CALLER, session.id, {
      after: null,
      waitMs: 20_000,
    });
    expect(result.events).toEqual([]);
    expect(clock.now()).toBe(T0);
    expect(reads()).toBe(1);
  });

  it('returns an event once it is a second old (settled), then the next poll starts after it', async () => {
    const { clock, deps } = setup();
    const session = await createListenSession(deps, TENANT, {});
    const sent = event('email.sent');
    expect(await relayToListeners(deps, sent)).toBe(1);

    // At once: held back. A poll that waits gets it a second later.
    expect((await pollListenEvents(deps, CALLER, session.id, { after: null, waitMs: 0 })).events).toEqual([]);
    const first = await pollListenEvents(deps, CALLER, session.id, { after: null, waitMs: 5_000 });
    expect(clock.now()).toBe(T0 + 1_000);
    expect(first.events.map((e) => [e.eventId, e.payload])).toEqual([[sent.id, renderPayload(sent, 'standard')]]);

    const delivered = event('email.delivered');
    await relayToListeners(deps, delivered);
    const second = await pollListenEvents(deps, CALLER, session.id, { after: first.next, waitMs: 5_000 });
    expect(second.events.map((e) => e.eventId)).toEqual([delivered.id]);
  });

  it("another tenant's poll or end finds no session", async () => {
    const { deps } = setup();
    const session = await createListenSession(deps, TENANT, {});
    for (const other of [
      { accountId: 'acct_other', mode: 'test' as const },
      { accountId: TENANT.accountId, mode: 'live' as const },
    ]) {
      await expect(
        pollListenEvents(deps, { ...other, plan: 'scale' }, session.id, { after: null, waitMs: 0 }),
      ).rejects.toBeInstanceOf(NotFoundError);
      await expect(endListenSession(deps, other, session.id)).rejects.toBeInstanceOf(NotFoundError);
    }
    await endListenSession(deps, TENANT, session.id);
    await expect(endListenSession(deps, TENANT, session.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('listen sessions: the fan-out', () => {
  it('puts an event on the live sessions of its account and mode that take it, and on no other', async () => {
    // Arrange: one session per case.
    const { clock, deps, store } = setup();
    const all = await createListenSession(deps, TENANT, {});
    const delivered = await createListenSession(deps, TENANT, { events: ['email.delivered'] });
    const sent = await createListenSession(deps, TENANT, { events: ['email.sent'] });
    const live = await createListenSession(deps, { ...TENANT, mode: 'live' }, {});
    const other = await createListenSession(deps, { accountId: 'acct_other', mode: 'test' }, {});

    // Act: through the events queue's use case, as the dispatcher runs it.
    const e = event('email.delivered');
    await processEvent(
      {
        webhooks: new InMemoryWebhookRepository(),
        deliveryQueue: new RecordingDeliveryQueue(),
        clock,
        emailHistory: new InMemoryEmailHistory(),
        suppressions: new InMemorySuppressionList(),
        listenSessions: store,
      },
      e,
    );

    // Assert
    const held = (id: string) => [...(store.events.get(id)?.values() ?? [])].map((x) => x.eventId);
    expect(held(all.id)).toEqual([e.id]);
    expect(held(delivered.id)).toEqual([e.id]);
    expect(held(sent.id)).toEqual([]);
    expect(held(live.id)).toEqual([]);
    expect(held(other.id)).toEqual([]);
  });

  it('is best effort: a failing relay is reported, and the event is still recorded and processed (never redelivered for it)', async () => {
    // Arrange: a session store that fails every relay read.
    const { clock, deps, store } = setup();
    await createListenSession(deps, TENANT, {});
    const failing = Object.assign(Object.create(store) as InMemoryListenSessionRepository, {
      listLive: async () => {
        throw new Error('throttled');
      },
    });
    const history = new InMemoryEmailHistory();
    const reported: unknown[] = [];

    // Act
    const e = event('email.delivered');
    await processEvent(
      {
        webhooks: new InMemoryWebhookRepository(),
        deliveryQueue: new RecordingDeliveryQueue(),
        clock,
        emailHistory: history,
        suppressions: new InMemorySuppressionList(),
        listenSessions: failing,
        listenRelayFailed: (_event, error) => reported.push(error),
      },
      e,
    );

    // Assert
    expect(reported).toEqual([new Error('throttled')]);
    expect((await history.latest(e.emailId as string, 10)).events.map((x) => x.id)).toEqual([e.id]);
  });

  it('never relays a webhook test event (not of the catalog)', async () => {
    const { deps } = setup();
    await createListenSession(deps, TENANT, {});
    expect(await relayToListeners(deps, event('test'))).toBe(0);
  });
});

/**
 * The local runtime's wiring: real timers faked by vitest (the clock is Date.now), the in-process signals that
 * wake a poll when the fan-out puts an event on its session, the open-poll count and the account's slots.
 */
function wired(options: { slots?: KeyedSlots } = {}) {
  vi.useFakeTimers({ now: T0 });
  const clock = { now: () => Date.now() };
  const store = new InMemoryListenSessionRepository();
  const signals = new InProcessListenSignals(clock);
  let reads = 0;
  const counted = Object.assign(Object.create(store) as InMemoryListenSessionRepository, {
    readEvents: (...args: Parameters<InMemoryListenSessionRepository['readEvents']>) => {
      reads++;
      return store.readEvents(...args);
    },
  });
  const listenSessions = notifyingSessions(counted, signals);
  const deps: ListenDeps = {
    listenSessions,
    clock,
    random: seededRandom('listen-wired'),
    listenSignals: signals,
    openPolls: new InProcessOpenPolls(),
    ...(options.slots ? { accountSlots: options.slots } : {}),
  };
  const relay = (e: SendflowEvent) => relayToListeners({ listenSessions, clock }, e);
  return { deps, relay, reads: () => reads };
}

describe('listen sessions: a waiting poll costs no store reads while nothing arrives (issue 28)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reads at its start and once per fallback interval, not once a second', async () => {
    // Arrange
    const { deps, reads } = wired();
    const session = await createListenSession(deps, TENANT, {});

    // Act: a 20 s poll on a session nothing arrives on.
    const poll = pollListenEvents(deps, CALLER, session.id, { after: null, waitMs: 20_000 });
    await vi.advanceTimersByTimeAsync(20_000);
    const result = await poll;

    // Assert: answered empty at the end of its wait, after 2 reads (21 when it read every second).
    expect(result.events).toEqual([]);
    expect(Date.now()).toBe(T0 + 20_000);
    expect(reads()).toBe(Math.ceil(20_000 / LISTEN_FALLBACK_READ_MS));
    expect(reads()).toBeLessThanOrEqual(2);
  });

  it('is woken by an event put on its session and answers it once settled, with one read for it', async () => {
    // Arrange: a poll waiting on a session.
    const { deps, relay, reads } = wired();
    const session = await createListenSession(deps, TENANT, {});
    let answered = false;
    const poll = pollListenEvents(deps, CALLER, session.id, { after: null, waitMs: 20_000 }).finally(() => {
      answered = true;
    });
    await vi.advanceTimersByTimeAsync(3_000);

    // Act: the fan-out puts an event on it 3 s in.
    const sent = event('email.sent');
    expect(await relay(sent)).toBe(1);
    await vi.advanceTimersByTimeAsync(LISTEN_SETTLE_MS - 1);
    expect(answered).toBe(false); // not yet settled
    await vi.advanceTimersByTimeAsync(1);

    // Assert: answered as soon as the event is a second old: the first read, then the one the event caused.
    const result = await poll;
    expect(result.events.map((e) => e.eventId)).toEqual([sent.id]);
    expect(Date.now()).toBe(T0 + 3_000 + LISTEN_SETTLE_MS);
    expect(reads()).toBe(2);
  });

  it('answers an event put on the session just before it began (not yet settled at its first read)', async () => {
    const { deps, relay } = wired();
    const session = await createListenSession(deps, TENANT, {});
    const sent = event('email.sent');
    await relay(sent);
    await vi.advanceTimersByTimeAsync(500);

    const poll = pollListenEvents(deps, CALLER, session.id, { after: null, waitMs: 20_000 });
    await vi.advanceTimersByTimeAsync(LISTEN_SETTLE_MS);

    expect((await poll).events.map((e) => e.eventId)).toEqual([sent.id]);
    expect(Date.now()).toBe(T0 + 500 + LISTEN_SETTLE_MS);
  });
});

describe('listen sessions: open polls count toward the account (issue 28)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("caps an account's open polls by plan: the next is 429 listen_polls_exceeded naming the limit; an ended one frees a place", async () => {
    // Arrange: a free-plan account with as many polls waiting as its plan allows.
    const { deps } = wired();
    const free = { ...CALLER, plan: 'free' as const };
    const limit = PLANS.free.listenPolls;
    const session = await createListenSession(deps, TENANT, {});
    const waiting = Array.from({ length: limit }, () =>
      pollListenEvents(deps, free, session.id, { after: null, waitMs: 20_000 }),
    );
    await vi.advanceTimersByTimeAsync(10);

    // Act
    const refused = await pollListenEvents(deps, free, session.id, { after: null, waitMs: 0 }).catch((e) => e);

    // Assert: 429 with its own code, the limit and the plan named, and a retry_after.
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect(refused).toMatchObject({
      status: 429,
      code: 'listen_polls_exceeded',
      retryAfterSeconds: LISTEN_POLL_RETRY_SECONDS,
    });
    expect((refused as Error).message).toContain(`${limit} open listen polls`);
    expect((refused as Error).message).toContain('plan free');
    // Another account is not held to this one's count.
    const other = { accountId: 'acct_other', mode: 'test' as const };
    const theirs = await createListenSession(deps, other, {});
    await expect(
      pollListenEvents(deps, { ...other, plan: 'free' }, theirs.id, { after: null, waitMs: 0 }),
    ).resolves.toMatchObject({ events: [] });
    // Once the waiting polls answer, a poll is taken again.
    await vi.advanceTimersByTimeAsync(20_000);
    await Promise.all(waiting);
    await expect(pollListenEvents(deps, free, session.id, { after: null, waitMs: 0 })).resolves.toMatchObject({
      events: [],
    });
  });

  it('a larger plan allows more open polls than a smaller one', () => {
    expect(PLANS.free.listenPolls).toBeGreaterThanOrEqual(1);
    expect(PLANS.scale.listenPolls).toBeGreaterThan(PLANS.free.listenPolls);
    expect(PLANS.scale.listenPolls).toBeLessThanOrEqual(LISTEN_SESSIONS_PER_ACCOUNT * 2);
  });

  it("gives the request's slot back while it waits, and takes one again, in turn, before it reads", async () => {
    // Arrange: one slot per account; the poll's request holds it, as the local gateway runs it.
    const slots = new KeyedSlots(1);
    const { deps, relay, reads } = wired({ slots });
    const session = await createListenSession(deps, TENANT, {});
    const poll = slots.run(TENANT.accountId, () =>
      pollListenEvents(deps, CALLER, session.id, { after: null, waitMs: 20_000 }),
    );
    await vi.advanceTimersByTimeAsync(100);

    // Assert 1: read once, then waiting with no slot held: the account's next request runs at once.
    expect(reads()).toBe(1);
    expect(slots.inFlight(TENANT.accountId)).toBe(0);
    let release = () => {};
    const busy = slots.run(TENANT.accountId, () => new Promise<void>((resolve) => (release = resolve)));
    expect(slots.inFlight(TENANT.accountId)).toBe(1);

    // Act: an event wakes the poll while that request holds the slot.
    const sent = event('email.sent');
    await relay(sent);
    await vi.advanceTimersByTimeAsync(LISTEN_SETTLE_MS + 100);

    // Assert 2: the poll waits its turn before reading; once the slot is free it reads and answers.
    expect(reads()).toBe(1);
    release();
    await busy;
    await vi.advanceTimersByTimeAsync(10);
    expect((await poll).events.map((e) => e.eventId)).toEqual([sent.id]);
    expect(reads()).toBe(2);
    expect(slots.inFlight(TENANT.accountId)).toBe(0);
  });
});
