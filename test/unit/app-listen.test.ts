// Unit tests of listen sessions (lambdas/app/listen) on the in-memory fake and a fake clock: a session ends after
// LISTEN_IDLE_SECONDS without a poll and each poll restarts that; a poll waits for a first event with bounded
// reads; the newest second is held back; the cap holds against concurrent openings; the fan-out puts an event on
// the live sessions of its account and mode that take it, with the exact standard payload, and nowhere else.
import { describe, expect, it } from 'vitest';
import { processEvent } from '../../lambdas/app/events/process-event';
import {
  createListenSession,
  endListenSession,
  type ListenDeps,
  pollListenEvents,
} from '../../lambdas/app/listen/listen-sessions';
import { relayToListeners } from '../../lambdas/app/listen/relay-event';
import { LimitExceededError, NotFoundError, ValidationError } from '../../lambdas/domain/errors';
import type { SendflowEvent } from '../../lambdas/domain/events';
import { LISTEN_IDLE_SECONDS, LISTEN_SESSIONS_PER_ACCOUNT } from '../../lambdas/domain/listen';
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
      await pollListenEvents(deps, TENANT, session.id, { after: null, waitMs: 0 });
    }
    // Then it is left idle for the whole idle time.
    clock.advance(LISTEN_IDLE_SECONDS * 1000);

    // Assert: gone, for the poll and for the fan-out (which puts nothing on it).
    await expect(pollListenEvents(deps, TENANT, session.id, { after: null, waitMs: 0 })).rejects.toBeInstanceOf(
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
  it('waits up to waitMs for a first event with one read a second, then answers empty with the same cursor', async () => {
    const { clock, deps, reads } = setup();
    const session = await createListenSession(deps, TENANT, {});
    const result = await pollListenEvents(deps, TENANT, session.id, { after: null, waitMs: 20_000 });
    expect(result.events).toEqual([]);
    expect(result.next).toBeNull();
    expect(clock.now()).toBe(T0 + 20_000);
    expect(reads()).toBe(21);
  });

  it('waits no longer than the deployment allows (on AWS 0: a poll answers at once and holds no function)', async () => {
    const { clock, deps, reads } = setup();
    const session = await createListenSession(deps, TENANT, {});
    const result = await pollListenEvents({ ...deps, listenMaxWaitMs: 0 }, TENANT, session.id, {
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
    expect((await pollListenEvents(deps, TENANT, session.id, { after: null, waitMs: 0 })).events).toEqual([]);
    const first = await pollListenEvents(deps, TENANT, session.id, { after: null, waitMs: 5_000 });
    expect(clock.now()).toBe(T0 + 1_000);
    expect(first.events.map((e) => [e.eventId, e.payload])).toEqual([[sent.id, renderPayload(sent, 'standard')]]);

    const delivered = event('email.delivered');
    await relayToListeners(deps, delivered);
    const second = await pollListenEvents(deps, TENANT, session.id, { after: first.next, waitMs: 5_000 });
    expect(second.events.map((e) => e.eventId)).toEqual([delivered.id]);
  });

  it("another tenant's poll or end finds no session", async () => {
    const { deps } = setup();
    const session = await createListenSession(deps, TENANT, {});
    for (const other of [
      { accountId: 'acct_other', mode: 'test' as const },
      { accountId: TENANT.accountId, mode: 'live' as const },
    ]) {
      await expect(pollListenEvents(deps, other, session.id, { after: null, waitMs: 0 })).rejects.toBeInstanceOf(
        NotFoundError,
      );
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
