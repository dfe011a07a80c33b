// Contract suite for the ListenSessionRepository port, run against DynamoListenSessionRepository (dynalite,
// DynamoDB Local) and the in-memory fake: sessions are the tenant's alone, live until their expiry (which a touch
// moves), listed per account for the fan-out and the cap; events are read in cursor order within their range.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { ListenEvent, ListenSession, ListenSessionRepository } from '../../../lambdas/app/listen/ports';
import { listenCursor, settledBefore } from '../../../lambdas/domain/listen';
import type { RepositoryHarness } from './harness';

const T0 = Date.UTC(2026, 10, 26, 4, 0, 0);
const sec = (ms: number) => Math.floor(ms / 1000);
const unique = () => randomBytes(8).toString('hex');

const session = (overrides: Partial<ListenSession> = {}): ListenSession => ({
  id: `ls_${unique()}`,
  accountId: `acct_${unique()}`,
  mode: 'test',
  secret: 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=',
  events: null,
  createdAt: T0,
  expiresAt: sec(T0) + 300,
  ...overrides,
});

const event = (sessionId: string, atMs: number, overrides: Partial<ListenEvent> = {}): ListenEvent => {
  const eventId = `evt_${unique()}`;
  return {
    sessionId,
    cursor: listenCursor(atMs, eventId),
    eventId,
    type: 'email.sent',
    payload: JSON.stringify({ id: eventId, type: 'email.sent' }),
    expiresAt: sec(atMs) + 300,
    ...overrides,
  };
};

export function listenSessionRepositoryContract(harness: RepositoryHarness<ListenSessionRepository>): void {
  const repo = () => harness.shared();

  it('finds a session by its tenant only: another account or the other mode can neither touch nor delete it', async () => {
    // Arrange
    const s = session({ events: ['email.delivered'] });
    await repo().create(s);

    // Act / Assert
    expect(await repo().touch({ accountId: 'acct_other', mode: 'test' }, s.id, sec(T0) + 900, T0)).toBeNull();
    expect(await repo().touch({ accountId: s.accountId, mode: 'live' }, s.id, sec(T0) + 900, T0)).toBeNull();
    expect(await repo().delete({ accountId: 'acct_other', mode: 'test' }, s.id)).toBe(false);
    expect(await repo().delete({ accountId: s.accountId, mode: 'live' }, s.id)).toBe(false);
    expect(await repo().touch(s, s.id, s.expiresAt, T0)).toEqual(s);
  });

  it("lists the account's live sessions of both modes, oldest first, and leaves out expired ones", async () => {
    const accountId = `acct_${unique()}`;
    const first = session({ accountId, id: `ls_a${unique()}` });
    const live = session({ accountId, id: `ls_b${unique()}`, mode: 'live' });
    const expired = session({ accountId, id: `ls_c${unique()}`, expiresAt: sec(T0) - 1 });
    for (const s of [live, expired, first]) await repo().create(s);
    await repo().create(session());

    expect((await repo().listLive(accountId, T0)).map((s) => s.id)).toEqual([first.id, live.id]);
    expect(await repo().touch(expired, expired.id, sec(T0) + 300, T0)).toBeNull();
  });

  it('a touch moves a live session’s expiry; an expired session cannot be revived', async () => {
    const s = session();
    await repo().create(s);
    const touched = await repo().touch(s, s.id, sec(T0) + 600, T0 + 200_000);
    expect(touched).toEqual({ ...s, expiresAt: sec(T0) + 600 });
    expect((await repo().listLive(s.accountId, T0 + 500_000)).map((x) => x.id)).toEqual([s.id]);
    expect(await repo().touch(s, s.id, sec(T0) + 1200, T0 + 600_000)).toBeNull();
    expect(await repo().listLive(s.accountId, T0 + 600_000)).toEqual([]);
  });

  it('a deleted session is gone; deleting it again finds nothing', async () => {
    const s = session();
    await repo().create(s);
    expect(await repo().delete(s, s.id)).toBe(true);
    expect(await repo().touch(s, s.id, s.expiresAt, T0)).toBeNull();
    expect(await repo().listLive(s.accountId, T0)).toEqual([]);
    expect(await repo().delete(s, s.id)).toBe(false);
  });

  it('reads events in cursor order, after `after`, below `before`, at most `limit`, unexpired', async () => {
    // Arrange: four events a second apart, the first already expired at the read; one on another session.
    const sessionId = `ls_${unique()}`;
    const [e0, e1, e2, e3] = [0, 1, 2, 3].map((i) =>
      event(sessionId, T0 + i * 1000, i === 0 ? { expiresAt: sec(T0) + 5 } : {}),
    ) as [ListenEvent, ListenEvent, ListenEvent, ListenEvent];
    await repo().putEvents([e3, e1, e0, e2, event(`ls_${unique()}`, T0)]);
    const now = T0 + 10_000;

    // Act / Assert
    expect(await repo().readEvents(sessionId, { after: null, before: settledBefore(now), limit: 10 }, now)).toEqual([
      e1,
      e2,
      e3,
    ]);
    expect(await repo().readEvents(sessionId, { after: e1.cursor, before: settledBefore(now), limit: 1 }, now)).toEqual(
      [e2],
    );
    // `before` holds back what is not settled yet (written within the last second at the read).
    expect(
      await repo().readEvents(sessionId, { after: e1.cursor, before: settledBefore(T0 + 3_500), limit: 10 }, now),
    ).toEqual([e2]);
    expect(
      await repo().readEvents(sessionId, { after: e3.cursor, before: settledBefore(now), limit: 10 }, now),
    ).toEqual([]);
    // A bound past `before` reads nothing (no inverted key range).
    expect(await repo().readEvents(sessionId, { after: e3.cursor, before: settledBefore(T0), limit: 10 }, now)).toEqual(
      [],
    );
  });

  it('putting the same cursor twice keeps one event (a redelivered write)', async () => {
    const sessionId = `ls_${unique()}`;
    const e = event(sessionId, T0);
    await repo().putEvents([e]);
    await repo().putEvents([e]);
    expect(
      await repo().readEvents(sessionId, { after: null, before: settledBefore(T0 + 5_000), limit: 10 }, T0),
    ).toEqual([e]);
  });
}
