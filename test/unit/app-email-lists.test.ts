// Unit tests of the two email listings on the in-memory fakes: listEmails' status filter across many chunks
// (lambdas/app/emails/list-emails.ts) and listEmailDeliveries' derived keys, tenant check and bound
// (lambdas/app/webhooks/email-deliveries.ts). An account's listings run one at a time (issue 28).
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KeyedSlots } from '../../lambdas/adapters/in-process/keyed-slots';
import {
  HISTORY_READS_AT_ONCE,
  listEmails,
  STATUS_EXAMINE,
  STATUS_FILTER_CHUNK,
} from '../../lambdas/app/emails/list-emails';
import type { EmailRecord } from '../../lambdas/app/emails/ports';
import { EMAIL_DELIVERY_KEYS, listEmailDeliveries } from '../../lambdas/app/webhooks/email-deliveries';
import type { Delivery, Tenant, Webhook } from '../../lambdas/app/webhooks/ports';
import { statusFromEvent } from '../../lambdas/domain/email/status';
import { NotFoundError } from '../../lambdas/domain/errors';
import { timeOrderedId } from '../../lambdas/domain/ids';
import { deliveryIdFor } from '../../lambdas/domain/webhooks/render';
import {
  FakeClock,
  InMemoryDeliveryRepository,
  InMemoryEmailHistory,
  InMemoryEmailRepository,
  InMemoryWebhookRepository,
} from '../support/fakes';

const T0 = Date.UTC(2025, 5, 1, 9, 0, 0);
const TENANT: Tenant = { accountId: 'acct_lists', mode: 'test' };
const iso = (ms: number) => new Date(ms).toISOString();

function newEmail(i: number, tenant: Tenant = TENANT): EmailRecord {
  return {
    id: timeOrderedId('email', T0 + i * 1_000, randomBytes),
    ...tenant,
    from: 'a@acme.test',
    to: [`r${i}@example.com`],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'Hi',
    text: 'Hi',
    headers: {},
    tags: [],
    createdAt: iso(T0 + i * 1_000),
    suppressed: [],
    unsubscribeUrls: {},
  };
}

function world() {
  const emails = new InMemoryEmailRepository();
  const emailHistory = new InMemoryEmailHistory();
  const webhooks = new InMemoryWebhookRepository();
  const deliveries = new InMemoryDeliveryRepository();
  const clock = new FakeClock(T0 + 86_400_000);
  return { emails, emailHistory, webhooks, deliveries, clock };
}

/** Records an event in the email's history and notes its status, as processEvent does; returns its id. */
async function event(deps: ReturnType<typeof world>, email: EmailRecord, type: string, at: number): Promise<string> {
  const id = timeOrderedId('evt', at, randomBytes);
  await deps.emailHistory.record(email.id, { id, type, timestamp: iso(at), to: email.to[0] ?? '' });
  const noted = statusFromEvent({ type, timestamp: iso(at) });
  if (noted) await deps.emailHistory.noteStatus(email, email.id, noted);
  return id;
}

describe('listEmails: bounded fan-out', () => {
  it.each([
    ['without a filter', undefined],
    ['by the status index', 'bounced'],
    ['by walking the emails (delivered)', 'delivered'],
    ['by walking the emails (queued)', 'queued'],
  ])(
    "reads a page of 100 emails' histories %s at most HISTORY_READS_AT_ONCE at a time, in order",
    async (_, status) => {
      // Arrange: 100 emails, each with the status (delivered when unfiltered; queued: no event); histories that
      // take a moment to read.
      const deps = world();
      const all = Array.from({ length: 100 }, (_, i) => newEmail(i));
      await deps.emails.createMany(all);
      if (status !== 'queued')
        for (const [i, email] of all.entries()) await event(deps, email, `email.${status ?? 'delivered'}`, T0 + i);
      let inFlight = 0;
      let peak = 0;
      const latest = deps.emailHistory.latest.bind(deps.emailHistory);
      deps.emailHistory.latest = async (id, limit) => {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 1));
        inFlight -= 1;
        return latest(id, limit);
      };

      // Act
      const page = await listEmails(deps, TENANT, { limit: 100, ...(status ? { status } : {}) });

      // Assert
      expect(page.items.map(({ email }) => email.id)).toEqual(all.map((e) => e.id).reverse());
      expect(peak).toBe(HISTORY_READS_AT_ONCE);
    },
  );
});

describe('listEmails with a status filter', () => {
  it('goes through several chunks: every matching email exactly once, newest first, exact hasMore', async () => {
    // Arrange: 3 chunks' worth of emails; every 7th bounced, the others delivered, another tenant's bounced too.
    const deps = world();
    const count = STATUS_FILTER_CHUNK * 3 + 7;
    const all = Array.from({ length: count }, (_, i) => newEmail(i));
    await deps.emails.createMany([...all, newEmail(1, { accountId: 'acct_other', mode: 'test' })]);
    for (const [i, email] of all.entries()) {
      await event(deps, email, 'email.sent', T0 + i * 1_000 + 10);
      await event(deps, email, i % 7 === 0 ? 'email.bounced' : 'email.delivered', T0 + i * 1_000 + 20);
    }
    const bounced = all
      .filter((_, i) => i % 7 === 0)
      .map((e) => e.id)
      .reverse();

    // Act
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await listEmails(deps, TENANT, { limit: 4, status: 'bounced', ...(after ? { after } : {}) });
      seen.push(...page.items.map(({ email }) => email.id));
      pages += 1;
      if (!page.hasMore) break;
      after = page.items.at(-1)?.email.id;
    }

    // Assert
    expect(seen).toEqual(bounced);
    expect(pages).toBe(Math.ceil(bounced.length / 4));
    const all23 = await listEmails(deps, TENANT, { limit: bounced.length, status: 'bounced' });
    expect(all23.hasMore).toBe(false);
    expect(all23.items.every(({ history }) => history.events.some((e) => e.type === 'email.bounced'))).toBe(true);
    expect(all23.nextAfter).toBeNull();
  });

  it('reads one bounded page of the status index: never the whole account, whatever it holds', async () => {
    // Arrange: 300 emails, only the 3 oldest bounced.
    const deps = world();
    const all = Array.from({ length: 300 }, (_, i) => newEmail(i));
    await deps.emails.createMany(all);
    for (const [i, email] of all.entries())
      await event(deps, email, i < 3 ? 'email.bounced' : 'email.delivered', T0 + i * 1_000 + 20);
    let listed = 0;
    let histories = 0;
    deps.emails.list = async () => {
      listed += 1;
      throw new Error('a status filter must not walk the emails');
    };
    const latest = deps.emailHistory.latest.bind(deps.emailHistory);
    deps.emailHistory.latest = async (id, limit) => {
      histories += 1;
      return latest(id, limit);
    };

    // Act
    const page = await listEmails(deps, TENANT, { limit: 10, status: 'bounced' });

    // Assert: the three, read alone.
    expect(page.items.map(({ email }) => email.id)).toEqual(
      all
        .slice(0, 3)
        .map((e) => e.id)
        .reverse(),
    );
    expect(page.hasMore).toBe(false);
    expect(listed).toBe(0);
    expect(histories).toBe(3);
  });

  it('drops an index entry that trails a newer event, and finds a cancelled email under canceled', async () => {
    const deps = world();
    const [email] = [newEmail(1)];
    await deps.emails.createMany([email as EmailRecord]);
    await event(deps, email as EmailRecord, 'email.delivery_delayed', T0 + 10);
    // A newer bounce in the history whose status note has not landed yet.
    await deps.emailHistory.record((email as EmailRecord).id, {
      id: 'evt_late',
      type: 'email.bounced',
      timestamp: iso(T0 + 20),
    });
    expect((await listEmails(deps, TENANT, { limit: 10, status: 'delivery_delayed' })).items).toEqual([]);
  });

  it('examines at most `examineCap` emails a request for queued (never indexed): stops with hasMore and nextAfter', async () => {
    // Arrange: 300 emails, only the 3 oldest still queued (no event); a cap of 100 per request.
    const deps = { ...world(), listExamineCap: 100 };
    const all = Array.from({ length: 300 }, (_, i) => newEmail(i));
    await deps.emails.createMany(all);
    for (const [i, email] of all.entries())
      if (i >= 3) await event(deps, email, 'email.delivered', T0 + i * 1_000 + 20);
    const newestFirst = all.map((e) => e.id).reverse();
    const examined: number[] = [];
    const list = deps.emails.list.bind(deps.emails);
    deps.emails.list = async (tenant, query) => {
      const page = await list(tenant, query);
      examined.push(query.examine ?? Number.POSITIVE_INFINITY);
      return page;
    };

    // Act
    const pages: { ids: string[]; hasMore: boolean; nextAfter: string | null }[] = [];
    let after: string | undefined;
    for (let n = 0; n < 10; n++) {
      const page = await listEmails(deps, TENANT, { limit: 10, status: 'queued', ...(after ? { after } : {}) });
      pages.push({ ids: page.items.map(({ email }) => email.id), hasMore: page.hasMore, nextAfter: page.nextAfter });
      if (!page.hasMore) break;
      after = page.nextAfter ?? undefined;
    }

    // Assert
    expect(pages).toEqual([
      { ids: [], hasMore: true, nextAfter: newestFirst[99] },
      { ids: [], hasMore: true, nextAfter: newestFirst[199] },
      { ids: newestFirst.slice(297), hasMore: false, nextAfter: null },
    ]);
    expect(examined.every((n) => n <= 100)).toBe(true);
  });

  it.each(['sent', 'delivered'])(
    'lists %s (never indexed) from the newest emails: at most STATUS_EXAMINE histories a request, then where to go on',
    async (status) => {
      // Arrange: 250 emails on the default examine cap. A third bounced, then moved on to the status (out of the
      // index); a third had it, then bounced; a third only had it.
      const deps = world();
      const all = Array.from({ length: 250 }, (_, i) => newEmail(i));
      await deps.emails.createMany(all);
      const at = (i: number, offset: number) => T0 + i * 1_000 + offset;
      for (const [i, email] of all.entries()) {
        if (i % 3 === 0) await event(deps, email, 'email.bounced', at(i, 10));
        await event(deps, email, `email.${status}`, at(i, 20));
        if (i % 3 === 1) await event(deps, email, 'email.bounced', at(i, 30));
      }
      const newestFirst = (keep: (i: number) => boolean) =>
        all
          .filter((_, i) => keep(i))
          .map((e) => e.id)
          .reverse();
      let histories = 0;
      const latest = deps.emailHistory.latest.bind(deps.emailHistory);
      deps.emailHistory.latest = async (id, limit) => {
        histories += 1;
        return latest(id, limit);
      };
      const walk = async (filter: string) => {
        const seen: string[] = [];
        const reads: number[] = [];
        let after: string | undefined;
        for (let n = 0; n < 20; n++) {
          histories = 0;
          const page = await listEmails(deps, TENANT, { limit: 100, status: filter, ...(after ? { after } : {}) });
          reads.push(histories);
          seen.push(...page.items.map(({ email }) => email.id));
          if (!page.hasMore) break;
          after = page.nextAfter ?? undefined;
        }
        return { seen, reads };
      };

      // Act
      const scanned = await walk(status);
      const bounced = await walk('bounced');

      // Assert: every match once, newest first, at most STATUS_EXAMINE histories read a request.
      expect(scanned.seen).toEqual(newestFirst((i) => i % 3 !== 1));
      expect(Math.max(...scanned.reads)).toBeLessThanOrEqual(STATUS_EXAMINE);
      expect(scanned.reads.length).toBeGreaterThan(2);
      expect(bounced.seen).toEqual(newestFirst((i) => i % 3 === 1));
    },
  );

  it('an index entry left behind by events noted out of order is not listed, and the listing takes it out', async () => {
    // Arrange: the delivery is noted first (nothing to index), then an older bounce (indexed, but not the status).
    const deps = world();
    const email = newEmail(1);
    await deps.emails.createMany([email]);
    const record = (type: string, at: number) =>
      deps.emailHistory.record(email.id, { id: `evt_${type}`, type, timestamp: iso(at), to: email.to[0] ?? '' });
    await record('email.delivered', T0 + 20);
    await deps.emailHistory.noteStatus(
      TENANT,
      email.id,
      statusFromEvent({ type: 'email.delivered', timestamp: iso(T0 + 20) }) as never,
    );
    await record('email.bounced', T0 + 10);
    await deps.emailHistory.noteStatus(
      TENANT,
      email.id,
      statusFromEvent({ type: 'email.bounced', timestamp: iso(T0 + 10) }) as never,
    );
    const before = await deps.emailHistory.idsByStatus(TENANT, 'bounced', { limit: 10 });

    // Act
    const bounced = await listEmails(deps, TENANT, { limit: 10, status: 'bounced' });
    const delivered = await listEmails(deps, TENANT, { limit: 10, status: 'delivered' });

    // Assert
    expect(before.ids).toEqual([email.id]);
    expect(bounced.items).toEqual([]);
    expect(await deps.emailHistory.idsByStatus(TENANT, 'bounced', { limit: 10 })).toEqual({ ids: [], hasMore: false });
    expect(delivered.items.map(({ email: e }) => e.id)).toEqual([email.id]);
  });

  it('reads no more than the page needs: a page of one reads the histories of two matches, a filter that skips every entry three index pages at most', async () => {
    // Arrange: 300 emails, all delivered; 150 of them bounced before (out of the index again when delivered).
    const deps = world();
    const all = Array.from({ length: 300 }, (_, i) => newEmail(i));
    await deps.emails.createMany(all);
    for (const [i, email] of all.entries()) {
      if (i % 2 === 0) await event(deps, email, 'email.bounced', T0 + i * 1_000 + 10);
      else await event(deps, email, 'email.delivered', T0 + i * 1_000 + 20);
    }
    let histories = 0;
    let indexPages = 0;
    const latest = deps.emailHistory.latest.bind(deps.emailHistory);
    deps.emailHistory.latest = async (id, limit) => {
      histories += 1;
      return latest(id, limit);
    };
    const idsByStatus = deps.emailHistory.idsByStatus.bind(deps.emailHistory);
    deps.emailHistory.idsByStatus = async (...args) => {
      indexPages += 1;
      return idsByStatus(...args);
    };

    // Act
    const one = await listEmails(deps, TENANT, { limit: 1, status: 'delivered' });
    const delivered = histories;
    histories = 0;
    const nobody = await listEmails(deps, TENANT, { limit: 1, status: 'bounced', to: 'nobody@example.com' });

    // Assert
    expect(one.items).toHaveLength(1);
    // Two matches (the page and the one that says there is more) among the newest three emails.
    expect(delivered).toBe(3);
    expect(nobody).toMatchObject({ items: [], hasMore: true });
    expect(indexPages).toBeLessThanOrEqual(3);
    expect(histories).toBe(0);
  });

  it('a `to` filter alone also stops at the cap, with nextAfter; a full page says the last item', async () => {
    // Arrange
    const deps = { ...world(), listExamineCap: 100 };
    const all = Array.from({ length: 250 }, (_, i) => ({
      ...newEmail(i),
      to: [i < 2 || i >= 245 ? 'ada@example.com' : `r${i}@example.com`],
    }));
    await deps.emails.createMany(all);
    const ada = all
      .filter((e) => e.to[0] === 'ada@example.com')
      .map((e) => e.id)
      .reverse();
    const newestFirst = all.map((e) => e.id).reverse();

    // Act
    const first = await listEmails(deps, TENANT, { limit: 3, to: 'ada@example.com' });
    const second = await listEmails(deps, TENANT, { limit: 3, to: 'ada@example.com', after: first.nextAfter ?? '' });
    const third = await listEmails(deps, TENANT, { limit: 3, to: 'ada@example.com', after: second.nextAfter ?? '' });
    const fourth = await listEmails(deps, TENANT, { limit: 3, to: 'ada@example.com', after: third.nextAfter ?? '' });

    // Assert
    expect(first.items.map(({ email }) => email.id)).toEqual(ada.slice(0, 3));
    expect(first).toMatchObject({ hasMore: true, nextAfter: ada[2] });
    expect(second.items.map(({ email }) => email.id)).toEqual(ada.slice(3, 5));
    expect(second).toMatchObject({ hasMore: true, nextAfter: newestFirst[2 + 100] });
    expect(third).toMatchObject({ items: [], hasMore: true, nextAfter: newestFirst[2 + 200] });
    expect(fourth.items.map(({ email }) => email.id)).toEqual(ada.slice(5));
    expect(fourth).toMatchObject({ hasMore: false, nextAfter: null });
  });
});

describe('listEmailDeliveries', () => {
  async function setup(hooks: number) {
    const deps = world();
    const email = newEmail(0);
    await deps.emails.createMany([email]);
    const created: Webhook[] = [];
    for (let i = 0; i < hooks; i++) {
      const webhook: Webhook = {
        ...TENANT,
        id: `wh_${String(i).padStart(4, '0')}`,
        url: 'https://hooks.example.com/x',
        events: ['email.sent', 'email.delivered'],
        format: 'standard',
        secret: 'whsec_x',
        active: true,
        createdAt: iso(T0),
        updatedAt: iso(T0),
      };
      await deps.webhooks.create(webhook);
      created.push(webhook);
    }
    return { deps, email, webhooks: created };
  }

  function delivery(eventId: string, webhook: Webhook, overrides: Partial<Delivery> = {}): Delivery {
    return {
      id: deliveryIdFor(eventId, webhook.id),
      webhookId: webhook.id,
      accountId: webhook.accountId,
      mode: webhook.mode,
      eventId,
      event: 'email.sent',
      format: 'standard',
      payload: '{}',
      status: 'succeeded',
      attempts: 1,
      maxAttempts: 5,
      attemptLog: [],
      response: 'ok',
      nextAttemptAt: null,
      deliveredAt: T0,
      createdAt: T0,
      ...overrides,
    };
  }

  it('finds the deliveries under the derived keys, newest first; leaves out a row of another tenant', async () => {
    // Arrange
    const { deps, email, webhooks } = await setup(2);
    const [a, b] = webhooks as [Webhook, Webhook];
    const sent = await event(deps, email, 'email.sent', T0 + 10);
    const delivered = await event(deps, email, 'email.delivered', T0 + 20);
    const rows = [delivery(sent, a), delivery(sent, b), delivery(delivered, a)];
    for (const row of rows) await deps.deliveries.createClaimed(row);
    // A row under a derived key that says it is another account's: never shown.
    await deps.deliveries.createClaimed(delivery(delivered, b, { accountId: 'acct_other' }));

    // Act
    const found = await listEmailDeliveries(deps, TENANT, email.id);

    // Assert
    expect(found.hasMore).toBe(false);
    expect(found.items.map((d) => d.id)).toEqual(
      rows
        .map((d) => d.id)
        .sort()
        .reverse(),
    );
    expect(found.items[0]?.eventId).toBe(delivered);
  });

  it("is a NotFoundError for another tenant's email, as reading the email is", async () => {
    const { deps, email } = await setup(1);
    await expect(listEmailDeliveries(deps, { ...TENANT, mode: 'live' }, email.id)).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(listEmailDeliveries(deps, TENANT, 'email_unknown')).rejects.toBeInstanceOf(NotFoundError);
  });

  it(`reads at most ${EMAIL_DELIVERY_KEYS} keys (the newest events whole) and answers a page of them at a time`, async () => {
    // Arrange: 11 webhooks (past the plan limit, as if lowered later) × 100 events = 1,100 keys.
    const { deps, email, webhooks } = await setup(11);
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) ids.push(await event(deps, email, 'email.opened', T0 + i));
    for (const id of ids) for (const webhook of webhooks) await deps.deliveries.createClaimed(delivery(id, webhook));
    const asked: number[] = [];
    const getMany = deps.deliveries.getMany.bind(deps.deliveries);
    deps.deliveries.getMany = async (keys, nowMs) => {
      asked.push(keys.length);
      return getMany(keys, nowMs);
    };

    // Act: pages of 100 until has_more is false.
    const seen: string[] = [];
    const cursors: (string | null)[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const page = await listEmailDeliveries(deps, TENANT, email.id, { limit: 100, ...(after ? { after } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(100);
      seen.push(...page.items.map((d) => d.id));
      cursors.push(page.nextAfter);
      if (!page.hasMore) break;
      after = page.nextAfter ?? undefined;
    }

    // Assert: 90 events × 11 webhooks, the newest 90, each once, newest first; no read of more than 100 keys.
    expect(seen).toHaveLength(990);
    expect(seen).toEqual([...seen].sort().reverse());
    expect(new Set(seen).size).toBe(990);
    expect(cursors).toHaveLength(10);
    expect(cursors.at(-1)).toBeNull();
    expect(cursors.slice(0, -1)).toEqual(seen.filter((_, i) => i % 100 === 99));
    expect(Math.max(...asked)).toBeLessThanOrEqual(100);
    const ofEvents = new Set(seen.map((id) => deps.deliveries.items.get(`${webhooks[0]?.id}#${id}`)?.eventId));
    expect(ofEvents.has(ids[5])).toBe(false);
  });

  it('answers 20 by default, and a page after a delivery id holds only older ones', async () => {
    // Arrange: 3 webhooks × 10 events = 30 deliveries.
    const { deps, email, webhooks } = await setup(3);
    for (let i = 0; i < 10; i++) {
      const id = await event(deps, email, 'email.sent', T0 + i);
      for (const webhook of webhooks) await deps.deliveries.createClaimed(delivery(id, webhook));
    }
    const all = [...deps.deliveries.items.values()]
      .map((d) => d.id)
      .sort()
      .reverse();

    // Act
    const first = await listEmailDeliveries(deps, TENANT, email.id);
    const rest = await listEmailDeliveries(deps, TENANT, email.id, { limit: 20, after: first.nextAfter ?? '' });

    // Assert
    expect(first.items.map((d) => d.id)).toEqual(all.slice(0, 20));
    expect(first).toMatchObject({ hasMore: true, nextAfter: all[19] });
    expect(rest.items.map((d) => d.id)).toEqual(all.slice(20));
    expect(rest).toMatchObject({ hasMore: false, nextAfter: null });
  });
});

describe('listEmails: one listing of an account at a time (issue 28)', () => {
  it("runs an account's listings one after another (filtered or not), another account's at once", async () => {
    // Arrange: the emails' page read held until released, recording who started.
    const w = world();
    const started: string[] = [];
    const release: (() => void)[] = [];
    const emails = {
      list: async (tenant: Tenant) => {
        started.push(tenant.accountId);
        await new Promise<void>((resolve) => release.push(resolve));
        return { items: [], hasMore: false };
      },
      listedByIds: w.emails.listedByIds.bind(w.emails),
    };
    const deps = { emails, emailHistory: w.emailHistory, listSlots: new KeyedSlots(1) };
    const other: Tenant = { accountId: 'acct_other', mode: 'test' };
    const tick = () => new Promise((resolve) => setImmediate(resolve));

    // Act: two of the account's listings (one filtered by recipient), and another account's.
    const first = listEmails(deps, TENANT, { limit: 10, to: 'ada@example.com' });
    const second = listEmails(deps, TENANT, { limit: 10 });
    const theirs = listEmails(deps, other, { limit: 10 });
    for (let i = 0; i < 5; i++) await tick();

    // Assert: the account's second waits for its first; the other account's runs beside it.
    expect(started).toEqual([TENANT.accountId, other.accountId]);
    release.shift()?.();
    await first;
    for (let i = 0; i < 5; i++) await tick();
    expect(started).toEqual([TENANT.accountId, other.accountId, TENANT.accountId]);
    for (const r of release.splice(0)) r();
    await Promise.all([second, theirs]);
  });
});

describe('listEmails: a work share per account (issue 28)', () => {
  it("runs every listing of an account, filtered or not, through the account's work share", async () => {
    // Arrange: a share that records whose work it was given, and when the listing ran in it.
    const w = world();
    await w.emails.createMany([0, 1, 2].map((i) => newEmail(i)));
    const ran: string[] = [];
    let inShare = false;
    const emails = {
      list: (async (...args) => {
        if (!inShare) throw new Error('a listing read outside its share');
        return w.emails.list(...args);
      }) as typeof w.emails.list,
      listedByIds: w.emails.listedByIds.bind(w.emails),
    };
    const listShare = {
      run: async <T>(key: string, work: () => Promise<T>) => {
        ran.push(key);
        inShare = true;
        try {
          return await work();
        } finally {
          inShare = false;
        }
      },
    };
    const deps = { emails, emailHistory: w.emailHistory, listSlots: new KeyedSlots(1), listShare };

    // Act
    const plain = await listEmails(deps, TENANT, { limit: 10 });
    await listEmails(deps, TENANT, { limit: 10, to: 'nobody@example.com' });
    await listEmails(deps, TENANT, { limit: 10, status: 'queued' });

    // Assert
    expect(plain.items).toHaveLength(3);
    expect(ran).toEqual([TENANT.accountId, TENANT.accountId, TENANT.accountId]);
  });
});

describe('listEmails: a status scan reads links and states of its matches only', () => {
  it('walks the emails without their parts, then reads the parts of the emails that match', async () => {
    // Arrange: 6 emails, the 2 newest queued (no event), the others delivered; a repository that records reads.
    const w = world();
    const all = Array.from({ length: 6 }, (_, i) => newEmail(i));
    await w.emails.createMany(all);
    for (const email of all.slice(0, 4)) await event(w, email, 'email.delivered', T0 + 10_000);
    const listedWith: (boolean | undefined)[] = [];
    const partsRead: string[] = [];
    const emails = {
      list: (async (tenant, query) => {
        listedWith.push(query.parts);
        return w.emails.list(tenant, query);
      }) as typeof w.emails.list,
      listedByIds: (async (tenant, ids, to) => {
        partsRead.push(...ids);
        return w.emails.listedByIds(tenant, ids, to);
      }) as typeof w.emails.listedByIds,
    };

    // Act
    const page = await listEmails({ emails, emailHistory: w.emailHistory }, TENANT, { limit: 10, status: 'queued' });

    // Assert: the two queued, newest first; parts read for those two alone.
    const queued = [all[5], all[4]].map((email) => email?.id);
    expect(page.items.map(({ email }) => email.id)).toEqual(queued);
    expect(listedWith.length).toBeGreaterThan(0);
    expect(listedWith.every((parts) => parts === false)).toBe(true);
    expect(partsRead).toEqual(queued);
  });
});
