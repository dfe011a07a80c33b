// Contract suite for the EmailRepository port's scheduling, run against DynamoEmailRepository (dynalite,
// DynamoDB Local) and InMemoryEmailRepository: startSending and cancel end a waiting email's wait at most one
// way; setRecipient moves a recipient only from the state expected (claims, lapses, outcomes); listScheduled
// lists only waiting emails due by a time, soonest first. (DynamoDB-only batch writes are in
// dynamo-email-repository.ts; the event history is email-history.ts.)
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { EmailRecord, EmailRepository } from '../../../lambdas/app/emails/ports';
import { recipients } from '../../../lambdas/domain/email/email';
import { timeOrderedId } from '../../../lambdas/domain/ids';
import type { RepositoryHarness } from './harness';

const T0 = Date.UTC(2025, 3, 1, 10, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

function newEmail(overrides: Partial<EmailRecord> = {}): EmailRecord {
  const id = `email_${randomBytes(8).toString('hex')}`;
  return {
    id,
    accountId: 'acct_contract',
    mode: 'live',
    from: 'Acme <billing@acme.example>',
    to: ['ada@example.com'],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'Invoice',
    text: 'Hello',
    headers: {},
    tags: [],
    createdAt: iso(T0),
    suppressed: [],
    unsubscribeUrls: { 'ada@example.com': `https://api.sendflow.test/v1/unsubscribe/${id}` },
    ...overrides,
  };
}

const scheduled = (atMs: number, overrides: Partial<EmailRecord> = {}) =>
  newEmail({ scheduledAt: iso(atMs), ...overrides });

export function emailRepositoryPortContract(harness: RepositoryHarness<EmailRepository>): void {
  const repo = () => harness.shared();

  it('startSending() starts a waiting email once (sentAt kept from the first start), with empty recipient states', async () => {
    // Arrange
    const email = scheduled(T0 + 3_600_000);
    await repo().createMany([email]);

    // Act
    const started = await repo().startSending(email.id, iso(T0 + 3_600_000));
    const again = await repo().startSending(email.id, iso(T0 + 3_700_000));
    const cancelLate = await repo().cancel(email.id, iso(T0 + 3_601_000));
    const unknown = await repo().startSending('email_unknown', iso(T0));

    // Assert
    expect(started).toEqual({ ...email, sentAt: iso(T0 + 3_600_000), recipientStates: {}, indexed: true });
    expect(again?.sentAt).toBe(iso(T0 + 3_600_000));
    expect(cancelLate).toBeNull();
    expect(unknown).toBeNull();
    expect(await repo().get('email_unknown')).toBeNull();
  });

  it('startSending() of an email sent now (not scheduled: it cannot be cancelled) writes nothing: no sentAt; `indexed` says whether it waits in the schedule index', async () => {
    // Arrange: one stored as usual (indexed), one queued before it was stored (not indexed).
    const [email, queued] = [newEmail(), newEmail({ id: 'email_queued_first' })];
    await repo().createMany([email]);
    await repo().createMany([queued], [], { queued: true });

    // Act
    const started = await repo().startSending(email.id, iso(T0 + 1_000), { scheduled: false });
    const stored = await repo().get(email.id);
    await repo().finishSending(email.id);
    const afterFinish = await repo().startSending(email.id, iso(T0 + 2_000), { scheduled: false });
    const startedQueued = await repo().startSending(queued.id, iso(T0 + 1_000), { scheduled: false });

    // Assert
    expect(started).toEqual({ ...email, recipientStates: {}, indexed: true });
    expect(stored).not.toHaveProperty('sentAt');
    expect(afterFinish).toEqual({ ...email, recipientStates: {}, indexed: false });
    expect(startedQueued).toEqual({ ...queued, recipientStates: {}, indexed: false });
    expect(await repo().startSending('email_unknown', iso(T0), { scheduled: false })).toBeNull();
  });

  it('get() with metadataOnly gives the email item alone: no body, links or recipient states', async () => {
    // Arrange
    const email = newEmail({ html: '<p>Hello</p>', headers: { 'X-Campaign': 'fall' } });
    await repo().createMany([email]);

    // Act
    const meta = await repo().get(email.id, { metadataOnly: true });

    // Assert
    const { html: _html, text: _text, ...rest } = email;
    expect(meta).toEqual({ ...rest, headers: {}, unsubscribeUrls: {} });
    expect(await repo().get('email_unknown', { metadataOnly: true })).toBeNull();
  });

  it('cancel() ends the wait once: canceledAt is set; starting it afterwards is null', async () => {
    // Arrange
    const email = scheduled(T0 + 3_600_000);
    await repo().createMany([email]);

    // Act
    const canceled = await repo().cancel(email.id, iso(T0 + 60_000));
    const again = await repo().cancel(email.id, iso(T0 + 70_000));
    const sendLate = await repo().startSending(email.id, iso(T0 + 3_600_000));

    // Assert
    expect(canceled).toEqual({ ...email, canceledAt: iso(T0 + 60_000) });
    expect(again).toBeNull();
    expect(sendLate).toBeNull();
    expect(await repo().get(email.id)).not.toHaveProperty('sentAt');
  });

  /** A scheduled email accepted now (real time: the table fixes its storage end from the time it is written). */
  const dueIn = (ms: number) => {
    const now = Math.ceil(Date.now() / 1000) * 1000;
    return scheduled(now + ms, { createdAt: iso(now) });
  };

  it('reschedule() moves a waiting email: get shows the new time, the old due time no longer starts it, the new one does', async () => {
    // Arrange
    const email = dueIn(3_600_000);
    await repo().createMany([email]);
    const later = iso(Date.parse(email.scheduledAt as string) + 86_400_000);

    // Act
    const moved = await repo().reschedule(email.id, later);
    const stored = await repo().get(email.id, { metadataOnly: true });
    const oldFiring = await repo().startSending(email.id, iso(Date.now()), { dueBy: email.scheduledAt as string });
    const newFiring = await repo().startSending(email.id, later, { dueBy: later });
    const afterStart = await repo().reschedule(email.id, iso(Date.parse(later) + 1_000));

    // Assert
    expect(moved).toEqual({ kind: 'rescheduled' });
    expect(stored?.scheduledAt).toBe(later);
    expect(oldFiring).toBeNull();
    expect(newFiring?.sentAt).toBe(later);
    expect(afterStart).toEqual({ kind: 'not_waiting' });
  });

  it('startSending() with dueBy goes by the stored time: a send moved earlier starts at its new time', async () => {
    // Arrange: the worker read the old time (a stale read), but the write decides on the stored one.
    const email = dueIn(86_400_000);
    await repo().createMany([email]);
    const soon = iso(Date.now() + 2_000);
    await repo().reschedule(email.id, soon);

    // Act
    const early = await repo().startSending(email.id, iso(Date.now()), { dueBy: iso(Date.now()) });
    const due = await repo().startSending(email.id, soon, { dueBy: iso(Date.parse(soon) + 1_000) });

    // Assert
    expect(early).toBeNull();
    expect(due?.sentAt).toBe(soon);
  });

  it('reschedule() refuses a cancelled, an unscheduled and an unknown email: not_waiting', async () => {
    const canceled = dueIn(3_600_000);
    const now = newEmail();
    await repo().createMany([canceled, now]);
    await repo().cancel(canceled.id, iso(Date.now()));
    const to = iso(Date.now() + 7_200_000);
    expect(await repo().reschedule(canceled.id, to)).toEqual({ kind: 'not_waiting' });
    expect(await repo().reschedule(now.id, to)).toEqual({ kind: 'not_waiting' });
    expect(await repo().reschedule('email_unknown', to)).toEqual({ kind: 'not_waiting' });
    expect((await repo().get(canceled.id))?.scheduledAt).toBe(canceled.scheduledAt);
  });

  it('reschedule() keeps a send within the storage fixed at acceptance (30 days after its first due time, less an hour)', async () => {
    // Arrange
    const email = dueIn(3_600_000);
    await repo().createMany([email]);
    const keptUntil = Date.parse(email.scheduledAt as string) + 30 * 86_400_000;

    // Act
    const tooLate = await repo().reschedule(email.id, iso(keptUntil - 3_600_000 + 1_000));
    const justInTime = await repo().reschedule(email.id, iso(keptUntil - 3_600_000));
    const fromThereTooLate = await repo().reschedule(email.id, iso(keptUntil));

    // Assert
    expect(tooLate).toEqual({ kind: 'beyond_retention', latest: iso(keptUntil - 3_600_000) });
    expect(justInTime).toEqual({ kind: 'rescheduled' });
    // Moving it later again does not extend what is kept.
    expect(fromThereTooLate).toEqual({ kind: 'beyond_retention', latest: iso(keptUntil - 3_600_000) });
  });

  it('of a reschedule and a start at the old time racing, exactly one wins', async () => {
    // Arrange
    const email = dueIn(60_000);
    await repo().createMany([email]);

    // Act
    const [started, moved] = await Promise.all([
      repo().startSending(email.id, iso(Date.now()), { dueBy: email.scheduledAt as string }),
      repo().reschedule(email.id, iso(Date.now() + 600_000)),
    ]);

    // Assert
    expect([started !== null, moved.kind === 'rescheduled'].filter(Boolean)).toHaveLength(1);
  });

  it('of a start and a cancel racing, exactly one wins', async () => {
    // Arrange
    const email = scheduled(T0 + 60_000);
    await repo().createMany([email]);

    // Act
    const [started, canceled] = await Promise.all([
      repo().startSending(email.id, iso(T0 + 60_000)),
      repo().cancel(email.id, iso(T0 + 60_000)),
    ]);

    // Assert
    expect([started, canceled].filter((r) => r !== null)).toHaveLength(1);
    const stored = await repo().get(email.id);
    expect(Boolean(stored?.sentAt) !== Boolean(stored?.canceledAt)).toBe(true);
  });

  it('setRecipient() moves a recipient only from the state expected: one claim wins, its holder settles it', async () => {
    // Arrange
    const email = newEmail({ to: ['a@example.com', 'b@example.com'] });
    await repo().createMany([email]);
    await repo().startSending(email.id, iso(T0));
    const claim = { state: 'claimed', tries: 1, until: T0 + 60_000 } as const;

    // Act
    const claims = await Promise.all(
      [0, 1, 2].map(() => repo().setRecipient(email.id, 0, { state: 'pending' }, claim, [])),
    );
    const byOther = await repo().setRecipient(
      email.id,
      0,
      { state: 'claimed', tries: 2 },
      { state: 'sent', tries: 2 },
      [],
    );
    const notLapsed = await repo().setRecipient(
      email.id,
      0,
      { state: 'lapsed', now: T0 + 60_000 },
      { state: 'failed', tries: 1 },
      [],
    );
    const sent = await repo().setRecipient(
      email.id,
      0,
      { state: 'claimed', tries: 1 },
      { state: 'sent', tries: 1 },
      [],
    );
    const reclaim = await repo().setRecipient(email.id, 0, { state: 'pending' }, claim, []);

    // Assert
    expect(claims.filter((c) => c !== null)).toHaveLength(1);
    expect([byOther, notLapsed, reclaim]).toEqual([null, null, null]);
    expect(sent).not.toBeNull();
    expect((await repo().get(email.id))?.recipientStates).toEqual({ '0': { state: 'sent', tries: 1 } });
  });

  it('setRecipient() takes over a lapsed claim once, records its events, and names suppressed recipients', async () => {
    // Arrange
    const email = newEmail({ to: ['a@example.com', 'b@example.com'] });
    await repo().createMany([email]);
    await repo().startSending(email.id, iso(T0));
    await repo().setRecipient(email.id, 0, { state: 'pending' }, { state: 'claimed', tries: 1, until: T0 }, []);
    const failed = {
      id: 'evt_failed',
      type: 'email.failed' as const,
      accountId: email.accountId,
      mode: email.mode,
      timestamp: iso(T0),
      emailId: email.id,
      to: 'a@example.com',
      data: { reason: 'send_outcome_unknown' },
    };

    // Act
    const lapsed = await repo().setRecipient(
      email.id,
      0,
      { state: 'lapsed', now: T0 + 1 },
      { state: 'failed', tries: 1, reason: 'send_outcome_unknown' },
      [failed],
    );
    const twice = await repo().setRecipient(
      email.id,
      0,
      { state: 'lapsed', now: T0 + 1 },
      { state: 'failed', tries: 1 },
      [],
    );
    await repo().setRecipient(email.id, 1, { state: 'pending' }, { state: 'suppressed', tries: 0 }, []);
    await repo().finishSending(email.id);

    // Assert
    expect(lapsed?.events).toEqual([failed]);
    expect(twice).toBeNull();
    expect((await repo().outbox.due(T0, 10)).flatMap((p) => p.events)).toContainEqual(failed);
    const stored = await repo().get(email.id);
    expect(stored?.suppressed).toEqual(['b@example.com']);
    expect(stored?.recipientStates?.['0']).toEqual({ state: 'failed', tries: 1, reason: 'send_outcome_unknown' });
    expect(await repo().startSending(email.id, iso(T0))).toBeNull();
  });

  it('setRecipient() reopens, once, a claim of an earlier epoch (a runtime that died), whatever its time left', async () => {
    // Arrange: claimed for an hour by the runtime of epoch 5.
    const email = newEmail({ to: ['a@example.com'] });
    await repo().createMany([email]);
    await repo().startSending(email.id, iso(T0));
    const claim = { state: 'claimed', tries: 1, until: T0 + 3_600_000, epoch: 5 } as const;
    await repo().setRecipient(email.id, 0, { state: 'pending' }, claim, []);
    const pending = { state: 'pending', tries: 1 } as const;

    // Act
    const sameEpoch = await repo().setRecipient(email.id, 0, { state: 'orphaned', epoch: 5 }, pending, []);
    const stored = (await repo().get(email.id))?.recipientStates?.['0'];
    const next = await repo().setRecipient(email.id, 0, { state: 'orphaned', epoch: 6 }, pending, []);
    const twice = await repo().setRecipient(email.id, 0, { state: 'orphaned', epoch: 6 }, pending, []);

    // Assert
    expect(sameEpoch).toBeNull();
    expect(stored).toEqual(claim);
    expect(next).not.toBeNull();
    expect(twice).toBeNull();
    expect((await repo().get(email.id))?.recipientStates?.['0']).toEqual(pending);
  });

  it('decideBatch(): the first decision holds (commit or abort), with the committing call’s events; get() never returns it', async () => {
    // Arrange
    const committed = `batch_${randomBytes(6).toString('hex')}`;
    const aborted = `batch_${randomBytes(6).toString('hex')}`;
    const event = {
      id: `evt_${randomBytes(6).toString('hex')}`,
      type: 'email.scheduled' as const,
      accountId: 'acct_contract',
      mode: 'live' as const,
      timestamp: iso(T0),
      data: {},
    };

    // Act
    const undecided = await repo().batchState(committed);
    const commit = await repo().decideBatch(committed, 'committed', [event]);
    const lateAbort = await repo().decideBatch(committed, 'aborted');
    const abort = await repo().decideBatch(aborted, 'aborted');
    const lateCommit = await repo().decideBatch(aborted, 'committed', [event]);

    // Assert
    expect(undecided).toBeNull();
    expect(commit).toEqual({ state: 'committed', pending: { ref: { id: committed }, events: [event] } });
    expect(lateAbort).toEqual({ state: 'committed', pending: null });
    expect(abort.state).toBe('aborted');
    expect(lateCommit).toEqual({ state: 'aborted', pending: null });
    expect([await repo().batchState(committed), await repo().batchState(aborted)]).toEqual(['committed', 'aborted']);
    expect(await repo().get(committed)).toBeNull();
  });

  it('listScheduled() lists only waiting emails due by the time (inclusive), soonest first, with sendAt in ms', async () => {
    // Arrange: fresh storage, since the listing spans every account.
    const fresh = await harness.fresh();
    const soon = scheduled(T0 + 1_000);
    const later = scheduled(T0 + 5_000, { accountId: 'acct_other', mode: 'test' });
    const exactlyDue = scheduled(T0 + 10_000);
    const notYet = scheduled(T0 + 10_001);
    const alreadySent = scheduled(T0 + 2_000, { sentAt: iso(T0 + 2_000) });
    const alreadyCanceled = scheduled(T0 + 3_000, { canceledAt: iso(T0) });
    // Created in an order unlike their due times.
    await fresh.createMany([
      exactlyDue,
      notYet,
      newEmail({ sentAt: iso(T0) }),
      later,
      alreadySent,
      soon,
      alreadyCanceled,
    ]);

    // Act
    const due = await fresh.listScheduled(T0 + 10_000, 100);

    // Assert
    expect(due).toEqual([
      { id: soon.id, sendAt: T0 + 1_000 },
      { id: later.id, sendAt: T0 + 5_000 },
      { id: exactlyDue.id, sendAt: T0 + 10_000 },
    ]);
  });

  it('deferSend() moves a started email’s due time (the reconciler leaves it alone till then), puts a queued one in the index; a cancelled, unknown or not yet started scheduled one stays as it was', async () => {
    // Arrange: a scheduled email started, one not started, a single email queued before it was stored (out of the
    // index), a cancelled one.
    const fresh = await harness.fresh();
    const [started, later, canceled] = [scheduled(T0 + 1_000), scheduled(T0 + 2_000), scheduled(T0 + 3_000)];
    const queued = newEmail({ id: 'email_queued_first' });
    await fresh.createMany([started, later, canceled]);
    await fresh.createMany([queued], [], { queued: true });
    await fresh.startSending(started.id, iso(T0 + 1_000));
    await fresh.cancel(canceled.id, iso(T0));

    // Act
    for (const id of [started.id, later.id, queued.id, canceled.id, 'email_unknown']) {
      await fresh.deferSend(id, T0 + 360_000);
    }

    // Assert
    expect(await fresh.listScheduled(T0 + 359_999, 10)).toEqual([{ id: later.id, sendAt: T0 + 2_000 }]);
    expect(await fresh.listScheduled(T0 + 360_000, 10)).toEqual([
      { id: later.id, sendAt: T0 + 2_000 },
      ...[started.id, queued.id].sort().map((id) => ({ id, sendAt: T0 + 360_000 })),
    ]);
    expect(await fresh.get('email_unknown')).toBeNull();
  });

  it('abandon() fences an id never stored: a queued store of it then fails; an email stored is not abandoned, and storing it again succeeds', async () => {
    // Arrange
    const fresh = await harness.fresh();
    const stored = newEmail({ id: 'email_stored_first' });
    await fresh.createMany([stored], [], { queued: true });
    const late = newEmail({ id: 'email_stored_late' });

    // Act
    const abandoned = await fresh.abandon(late.id);
    const again = await fresh.abandon(late.id);
    const lateStore = expect(fresh.createMany([late], [], { queued: true })).rejects.toThrow();
    const notAbandoned = await fresh.abandon(stored.id);
    // A store retried after its answer was lost meets its own email: the store is done, not refused.
    const retried = fresh.createMany([stored], [], { queued: true });

    // Assert
    expect([abandoned, again, notAbandoned]).toEqual([true, false, false]);
    await expect(retried).resolves.toHaveLength(1);
    await lateStore;
    expect(await fresh.get(late.id)).toBeNull();
    expect(await fresh.get(late.id, { metadataOnly: true })).toBeNull();
    expect(await fresh.startSending(late.id, iso(T0), { scheduled: false })).toBeNull();
    expect(await fresh.get(stored.id)).toEqual(stored);
  });

  it('listScheduled() drops an email once it is sent or cancelled, and honours the limit', async () => {
    // Arrange
    const fresh = await harness.fresh();
    const emails = [1, 2, 3, 4].map((i) => scheduled(T0 + i * 1_000));
    await fresh.createMany(emails);
    const [first, second, third, fourth] = emails.map((e) => e.id);

    // Act
    await fresh.startSending(first as string, iso(T0 + 1_000));
    await fresh.finishSending(first as string);
    await fresh.cancel(third as string, iso(T0 + 1_500));
    const all = await fresh.listScheduled(T0 + 60_000, 100);
    const one = await fresh.listScheduled(T0 + 60_000, 1);

    // Assert
    expect(all.map((e) => e.id)).toEqual([second, fourth]);
    expect(one.map((e) => e.id)).toEqual([second]);
  });

  it('listScheduled() far in the future lists every waiting email; before any is due, none', async () => {
    // Arrange
    const fresh = await harness.fresh();
    const inAMonth = scheduled(T0 + 30 * 86_400_000);
    await fresh.createMany([inAMonth]);

    // Act
    const early = await fresh.listScheduled(T0, 10);
    const eventually = await fresh.listScheduled(Number.MAX_SAFE_INTEGER, 10);

    // Assert
    expect(early).toEqual([]);
    expect(eventually).toEqual([{ id: inAMonth.id, sendAt: T0 + 30 * 86_400_000 }]);
  });

  // --- list ----------------------------------------------------------------------------------------------

  /** `count` emails of one new tenant, one second apart (time-ordered ids), stored shuffled; newest first. */
  async function seedTenant(
    count: number,
    shape: (index: number) => Partial<EmailRecord> = () => ({}),
    tenant = { accountId: `acct_${randomBytes(6).toString('hex')}`, mode: 'live' as const },
  ): Promise<{ tenant: typeof tenant; emails: EmailRecord[] }> {
    const emails = Array.from({ length: count }, (_, i) =>
      newEmail({ id: timeOrderedId('email', T0 + i * 1_000, randomBytes), ...tenant, ...shape(i) }),
    );
    const shuffled = emails.map((email, i) => ({ email, key: (i * 7) % count })).sort((a, b) => a.key - b.key);
    // In several writes (as requests do), batches of up to 30.
    for (let i = 0; i < shuffled.length; i += 30)
      await repo().createMany(shuffled.slice(i, i + 30).map((e) => e.email));
    return { tenant, emails: [...emails].reverse() };
  }
  const idsOf = (emails: readonly EmailRecord[]) => emails.map((email) => email.id);

  it("list() gives the tenant's emails newest first, as get() returns them, and never another tenant's or mode's", async () => {
    // Arrange
    const { tenant, emails } = await seedTenant(5);
    await seedTenant(3, () => ({}), { accountId: tenant.accountId, mode: 'test' as never });
    await seedTenant(3);

    // Act
    const page = await repo().list(tenant, { limit: 20 });

    // Assert
    expect(page.hasMore).toBe(false);
    // Without the bodies and headers, which the list view does not show (they are never read).
    const stored = await Promise.all(emails.map((email) => repo().get(email.id)));
    expect(page.items).toEqual(stored.map((email) => ({ ...email, html: undefined, text: undefined, headers: {} })));
    expect(page.items.every((email) => email.html === undefined && email.text === undefined)).toBe(true);
    expect((await repo().list({ accountId: 'acct_none', mode: 'live' }, { limit: 20 })).items).toEqual([]);
  });

  it('list() has an exact hasMore at page boundaries (limit = count-1, count, count+1)', async () => {
    const { tenant, emails } = await seedTenant(4);
    for (const [limit, more] of [
      [3, true],
      [4, false],
      [5, false],
    ] as const) {
      const page = await repo().list(tenant, { limit });
      expect(idsOf(page.items)).toEqual(idsOf(emails.slice(0, limit)));
      expect(page.hasMore).toBe(more);
    }
  });

  it('list() walks every email with `after` cursors, once each, in order, hasMore false on the last page', async () => {
    // Arrange
    const { tenant, emails } = await seedTenant(23);

    // Act
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await repo().list(tenant, { limit: 5, ...(after ? { after } : {}) });
      seen.push(...idsOf(page.items));
      pages += 1;
      if (!page.hasMore) break;
      after = page.items.at(-1)?.id;
    }

    // Assert
    expect(seen).toEqual(idsOf(emails));
    expect(pages).toBe(5);
  });

  it('list() filters by a recipient (to, cc or bcc; bare and lower-cased), through pages, with exact hasMore', async () => {
    // Arrange: every third email goes to Ada, one of them as "Name <ADA@…>", one as cc.
    const { tenant, emails } = await seedTenant(30, (i) =>
      i % 3 !== 0
        ? { to: [`other${i}@example.com`] }
        : i === 3
          ? { to: ['Ada Lovelace <ADA@Example.com>'] }
          : i === 6
            ? { to: ['bob@example.com'], cc: ['ada@example.com'] }
            : { to: ['ada@example.com'] },
    );
    const ada = emails.filter((email) => recipients(email).some((r) => /ada@example\.com/i.test(r)));
    expect(ada).toHaveLength(10);

    // Act
    const first = await repo().list(tenant, { limit: 4, to: 'ada@example.com' });
    const rest = await repo().list(tenant, { limit: 6, to: 'ada@example.com', after: first.items.at(-1)?.id ?? '' });
    const none = await repo().list(tenant, { limit: 4, to: 'nobody@example.com' });

    // Assert
    expect(idsOf(first.items)).toEqual(idsOf(ada.slice(0, 4)));
    expect(first.hasMore).toBe(true);
    expect(idsOf(rest.items)).toEqual(idsOf(ada.slice(4)));
    expect(rest.hasMore).toBe(false);
    expect(none).toEqual({ items: [], hasMore: false });
  });

  it('list() after an id that is no email (or the oldest) returns the older ones (or none)', async () => {
    const { tenant, emails } = await seedTenant(3);
    // Sorts between the newest and the second: no email has it.
    const between = `${emails[1]?.id ?? ''}0`;
    expect(idsOf((await repo().list(tenant, { limit: 10, after: between })).items)).toEqual(idsOf(emails.slice(1)));
    expect(await repo().list(tenant, { limit: 10, after: emails[2]?.id ?? '' })).toEqual({ items: [], hasMore: false });
  });

  it('list() examines at most `examine` emails: short of a full page it says hasMore and resumeAfter, the last one examined', async () => {
    // Arrange: 300 emails, only the 3 oldest to Ada.
    const { tenant, emails } = await seedTenant(300, (i) => ({
      to: [i < 3 ? 'ada@example.com' : `r${i}@example.com`],
    }));
    const ada = emails.slice(-3);

    // Act
    const first = await repo().list(tenant, { limit: 10, to: 'ada@example.com', examine: 250 });
    const rest = await repo().list(tenant, {
      limit: 10,
      to: 'ada@example.com',
      examine: 250,
      after: first.resumeAfter ?? '',
    });
    const exactly = await repo().list(tenant, { limit: 10, to: 'ada@example.com', examine: 300 });
    const unfiltered = await repo().list(tenant, { limit: 5, examine: 2 });

    // Assert
    expect(first).toEqual({ items: [], hasMore: true, resumeAfter: emails[249]?.id });
    expect(idsOf(rest.items)).toEqual(idsOf(ada));
    expect(rest.hasMore).toBe(false);
    expect(rest.resumeAfter).toBeUndefined();
    // The cap reached on the last email: nothing is left, so no more.
    expect(idsOf(exactly.items)).toEqual(idsOf(ada));
    expect(exactly.hasMore).toBe(false);
    expect(idsOf(unfiltered.items)).toEqual(idsOf(emails.slice(0, 2)));
    expect(unfiltered).toMatchObject({ hasMore: true, resumeAfter: emails[1]?.id });
  });
}
