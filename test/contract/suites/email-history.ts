// Contract suite for the EmailHistory port, run against DynamoEmailHistory (dynalite, DynamoDB Local) and
// InMemoryEmailHistory: record() keeps each event id once (redelivered, in parallel, or with a changed body);
// latest() gives the newest events by time (ties by id), oldest of them first, and says when older ones exist;
// histories of different emails stay apart; a thousand events on one email are all kept and read. On DynamoDB,
// an event whose id carries its own time is one item and no index entry, and histories written before are read.
import { randomBytes } from 'node:crypto';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { expect, it } from 'vitest';
import type { EmailEventEntry, EmailHistory } from '../../../lambdas/app/emails/ports';
import { historyOrderKey } from '../../../lambdas/domain/email/history';
import { timeOrderedId } from '../../../lambdas/domain/ids';
import type { RepositoryHarness } from './harness';

const T0 = Date.UTC(2025, 3, 1, 10, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();
const newEmailId = () => `email_${randomBytes(8).toString('hex')}`;

export function emailHistoryContract(harness: RepositoryHarness<EmailHistory>): void {
  const history = () => harness.shared();

  it('record() keeps each event id once, however often and in whatever form it is redelivered', async () => {
    // Arrange
    const emailId = newEmailId();
    const sent: EmailEventEntry = { id: 'evt_sent', type: 'email.sent', to: 'ada@example.com', timestamp: iso(T0) };
    const delivered: EmailEventEntry = {
      id: 'evt_delivered',
      type: 'email.delivered',
      to: 'ada@example.com',
      timestamp: iso(T0 + 2_000),
    };

    // Act: out of order and redelivered, including a redelivery with a changed time.
    const firsts = [await history().record(emailId, delivered), await history().record(emailId, sent)];
    const agains = [
      await history().record(emailId, delivered),
      await history().record(emailId, { ...sent, timestamp: iso(T0 + 9_000) }),
    ];

    // Assert: by time, the first record of each id kept.
    expect(firsts).toEqual([true, true]);
    expect(agains).toEqual([false, false]);
    expect(await history().latest(emailId, 10)).toEqual({ events: [sent, delivered], truncated: false });
  });

  it('record() of the same event in parallel keeps it once, and exactly one call says it was new', async () => {
    // Arrange
    const emailId = newEmailId();
    const opened: EmailEventEntry = { id: 'evt_opened', type: 'email.opened', timestamp: iso(T0 + 5_000) };

    // Act
    const results = await Promise.all(Array.from({ length: 5 }, () => history().record(emailId, opened)));

    // Assert
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await history().latest(emailId, 10)).events).toEqual([opened]);
  });

  it('recorded() tells which of the given event ids the email holds (only those, only this email), by key', async () => {
    // Arrange: 120 events on the email, another email's event with an id asked for here.
    const emailId = newEmailId();
    const entries: EmailEventEntry[] = Array.from({ length: 120 }, (_, i) => ({
      id: `evt_${String(i).padStart(3, '0')}`,
      type: i % 2 ? 'email.delivered' : 'email.sent',
      to: `r${i}@example.com`,
      timestamp: iso(T0 + i),
    }));
    await Promise.all(entries.map((entry) => history().record(emailId, entry)));
    await history().record(newEmailId(), { id: 'evt_elsewhere', type: 'email.sent', timestamp: iso(T0) });
    await history().noteStatus({ accountId: 'acct_h', mode: 'test' }, emailId, { status: 'bounced', rank: 5 });
    const asked = [...entries.slice(0, 150).map((e) => e.id), 'evt_missing', 'evt_elsewhere', '#status'];

    // Act
    const found = await history().recorded(emailId, asked);

    // Assert
    expect([...found].sort()).toEqual(entries.map((e) => e.id).sort());
    expect([...(await history().recorded(emailId, []))]).toEqual([]);
  });

  it('an event without a recipient comes back without one', async () => {
    // Arrange
    const emailId = newEmailId();
    const event: EmailEventEntry = { id: 'evt_noto', type: 'email.opened', timestamp: iso(T0) };

    // Act
    await history().record(emailId, event);

    // Assert
    expect((await history().latest(emailId, 1)).events).toEqual([event]);
  });

  it('latest() orders by time whatever the ISO form, ties by id, and keeps emails apart', async () => {
    // Arrange: the same instants written with an offset and without milliseconds; two events at one instant.
    const emailId = newEmailId();
    const other = newEmailId();
    const entries: EmailEventEntry[] = [
      { id: 'evt_c', type: 'email.delivered', timestamp: '2025-04-01T12:00:01+02:00' },
      { id: 'evt_b', type: 'email.opened', timestamp: iso(T0 + 3_000) },
      { id: 'evt_a', type: 'email.sent', timestamp: '2025-04-01T10:00:00.500Z' },
      { id: 'evt_d', type: 'email.clicked', timestamp: iso(T0 + 3_000) },
    ];
    await Promise.all(entries.map((entry) => history().record(emailId, entry)));
    await history().record(other, { id: 'evt_other', type: 'email.sent', timestamp: iso(T0) });

    // Act
    const page = await history().latest(emailId, 10);

    // Assert
    expect(page.events.map((e) => e.id)).toEqual(['evt_a', 'evt_c', 'evt_b', 'evt_d']);
    expect(page.events[1]?.timestamp).toBe('2025-04-01T12:00:01+02:00');
    expect((await history().latest(newEmailId(), 10)).events).toEqual([]);
  });

  it('latest(n) gives the n newest, oldest first, and says older ones exist only when they do', async () => {
    // Arrange
    const emailId = newEmailId();
    const entries = Array.from({ length: 5 }, (_, i) => ({
      id: `evt_${i}`,
      type: 'email.opened',
      timestamp: iso(T0 + i * 1_000),
    }));
    for (const entry of [...entries].reverse()) await history().record(emailId, entry);

    // Act / Assert
    expect(await history().latest(emailId, 3)).toEqual({ events: entries.slice(2), truncated: true });
    expect(await history().latest(emailId, 5)).toEqual({ events: entries, truncated: false });
    expect(await history().latest(emailId, 6)).toEqual({ events: entries, truncated: false });
  });

  it('a thousand events on one email are all kept (no item grows with them) and the newest are read', async () => {
    // Arrange: each event as large as a real one (a 30-character id, a long recipient).
    const emailId = newEmailId();
    const entries = Array.from({ length: 1000 }, (_, i) => ({
      id: `evt_${String(i).padStart(4, '0')}${'x'.repeat(22)}`,
      type: 'email.opened',
      to: `a-rather-long-recipient-address-${i}@customer-domain.example.com`,
      timestamp: iso(T0 + i * 1_000),
    }));

    // Act
    for (let i = 0; i < entries.length; i += 50) {
      await Promise.all(entries.slice(i, i + 50).map((entry) => history().record(emailId, entry)));
    }

    // Assert
    expect(await history().latest(emailId, 100)).toEqual({ events: entries.slice(900), truncated: true });
    expect(await history().latest(emailId, 1000)).toEqual({ events: entries, truncated: false });
  }, 60_000);

  it('noteStatus() keeps the highest-ranked indexed status whatever the order; idsByStatus() pages it newest first, per tenant', async () => {
    // Arrange: a fresh tenant with 25 emails (ids time-ordered, as email ids are), another tenant with one.
    const tenant = { accountId: `acct_${randomBytes(6).toString('hex')}`, mode: 'test' as const };
    const other = { ...tenant, mode: 'live' as const };
    const ids = Array.from(
      { length: 25 },
      (_, i) => `email_${String(T0 + i).padStart(16, '0')}${randomBytes(3).toString('hex')}`,
    );

    // Act: each gets sent then delayed, noted out of order (and delayed twice); every 5th bounces after; every
    // 3rd is then delivered, a scanned status (as are sent, opened, clicked), which takes it out of the index.
    for (const [i, id] of ids.entries()) {
      await history().noteStatus(tenant, id, { status: 'delivery_delayed', rank: 20 });
      await history().noteStatus(tenant, id, { status: 'sent', rank: 10 });
      await history().noteStatus(tenant, id, { status: 'delivery_delayed', rank: 20 });
      if (i % 5 === 0) await history().noteStatus(tenant, id, { status: 'bounced', rank: 30 });
      if (i % 3 === 0) await history().noteStatus(tenant, id, { status: 'delivered', rank: 40 });
      if (i % 3 === 0) await history().noteStatus(tenant, id, { status: 'failed', rank: 35 });
    }
    await history().noteStatus(other, `${ids[0]}x`, { status: 'bounced', rank: 30 });

    // Assert
    const indexed = ids.filter((_, i) => i % 3 !== 0);
    const bounced = indexed.filter((id) => ids.indexOf(id) % 5 === 0).reverse();
    expect(await history().idsByStatus(tenant, 'bounced', { limit: 10 })).toEqual({ ids: bounced, hasMore: false });
    // Scanned statuses are never listed; `failed` ranked below the delivery, so it was never noted.
    for (const status of ['sent', 'delivered', 'failed'])
      expect(await history().idsByStatus(tenant, status, { limit: 10 })).toEqual({ ids: [], hasMore: false });
    const delayed = indexed.filter((id) => ids.indexOf(id) % 5 !== 0).reverse();
    const first = await history().idsByStatus(tenant, 'delivery_delayed', { limit: 8 });
    expect(first).toEqual({ ids: delayed.slice(0, 8), hasMore: true });
    const rest = await history().idsByStatus(tenant, 'delivery_delayed', {
      limit: 8,
      after: first.ids.at(-1) as string,
    });
    expect(rest).toEqual({ ids: delayed.slice(8), hasMore: false });
  });

  it('latest() pages by time across events whose id carries their time and events whose id does not', async () => {
    // Arrange: 8 events whose id is made at their own time (as SES's and the pipeline's are) and 5 whose id is
    // not (an unsubscribe's id is made at the send time; simulated events at their step), interleaved in time.
    const emailId = newEmailId();
    const seq = (n: number) => () => Uint8Array.from({ length: 16 }, (_, i) => (n * 7 + i) % 251);
    const own = Array.from({ length: 8 }, (_, i) => {
      const at = T0 + i * 2_000;
      return { id: timeOrderedId('evt', at, seq(i)), type: 'email.delivered', timestamp: iso(at) };
    });
    const skewed = Array.from({ length: 5 }, (_, i) => {
      const at = T0 + i * 3_000 + 500;
      return { id: timeOrderedId('evt', T0 - 86_400_000 + i, seq(20 + i)), type: 'email.opened', timestamp: iso(at) };
    });
    const all = [...own, ...skewed].sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    for (const entry of [...skewed, ...own].reverse()) await history().record(emailId, entry);

    // Act / Assert
    expect(await history().latest(emailId, 4)).toEqual({ events: all.slice(-4), truncated: true });
    expect(await history().latest(emailId, 7)).toEqual({ events: all.slice(-7), truncated: true });
    expect(await history().latest(emailId, 13)).toEqual({ events: all, truncated: false });
  });

  if (harness.raw) {
    const raw = harness.raw;
    const stored = async (emailId: string) => {
      const { db, table } = raw();
      const items = await db.doc.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: 'emailId = :e',
          ExpressionAttributeValues: { ':e': emailId },
        }),
      );
      const indexed = await db.doc.send(
        new QueryCommand({
          TableName: table,
          IndexName: 'byTime',
          KeyConditionExpression: 'emailId = :e',
          ExpressionAttributeValues: { ':e': emailId },
        }),
      );
      return { items: items.Items ?? [], indexed: (indexed.Items ?? []).map((item) => item.eventId) };
    };

    it('stores an event whose id carries its time as one item without a byTime entry (one write unit)', async () => {
      // Arrange
      const emailId = newEmailId();
      const at = T0 + 1_234;
      const own = {
        id: timeOrderedId('evt', at, randomBytes),
        type: 'email.delivered',
        to: 'a@b.example',
        timestamp: iso(at),
      };
      const skewed = { id: timeOrderedId('evt', T0 - 60_000, randomBytes), type: 'email.opened', timestamp: iso(at) };

      // Act
      await history().record(emailId, own);
      await history().record(emailId, skewed);

      // Assert: the first has no `at` (the index's sort key), so the sparse index has no entry for it.
      const { items, indexed } = await stored(emailId);
      expect(items.find((item) => item.eventId === own.id)).not.toHaveProperty('at');
      expect(indexed).toEqual([skewed.id]);
    });

    it('reads histories written before, when every event carried `at`, in order with the new ones', async () => {
      // Arrange: three events as the code before wrote them (each with `at`, so in byTime), then two new ones.
      const emailId = newEmailId();
      const { db, table } = raw();
      const old = [0, 1, 2].map((i) => {
        const at = T0 + i * 10_000;
        return { id: timeOrderedId('evt', at, randomBytes), type: 'email.sent', timestamp: iso(at) };
      });
      for (const entry of old) {
        await db.doc.send(
          new PutCommand({
            TableName: table,
            Item: {
              emailId,
              eventId: entry.id,
              at: historyOrderKey(entry),
              type: entry.type,
              timestamp: entry.timestamp,
              expiresAt: Math.floor(Date.now() / 1000) + 3600,
            },
          }),
        );
      }
      const fresh = [5_000, 25_000].map((d) => ({
        id: timeOrderedId('evt', T0 + d, randomBytes),
        type: 'email.delivered',
        timestamp: iso(T0 + d),
      }));
      for (const entry of fresh) await history().record(emailId, entry);

      // Act / Assert: a redelivery of an old event is still recognised (same key), and the order is by time.
      expect(await history().record(emailId, old[1] as EmailEventEntry)).toBe(false);
      const all = [...old, ...fresh].sort((a, b) => a.timestamp.localeCompare(b.timestamp));
      expect(await history().latest(emailId, 10)).toEqual({ events: all, truncated: false });
      expect(await history().latest(emailId, 2)).toEqual({ events: all.slice(-2), truncated: true });
    });
  }
}
