// Contract suite for the SuppressionList port, run against DynamoSuppressionList (dynalite, DynamoDB Local) and
// InMemorySuppressionList: add says whether the address is new and keeps the first reason; find returns the
// suppressed ones among any number of addresses (DynamoDB's BatchGet takes 100 keys), repeats included; lists
// of different accounts, and of one account's two modes, are apart.
import { randomBytes } from 'node:crypto';
import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { expect, it } from 'vitest';
import { shardOf } from '../../../lambdas/adapters/dynamodb/shards';
import {
  DynamoSuppressionList,
  SUPPRESSION_LAYOUT_MARK,
  SUPPRESSION_SHARDS,
  suppressionKey,
  upgradeSuppressions,
} from '../../../lambdas/adapters/dynamodb/suppressions';
import { tenantKey } from '../../../lambdas/adapters/dynamodb/tenant-table';
import type { Suppression, SuppressionList } from '../../../lambdas/app/emails/ports';
import type { Tenant } from '../../../lambdas/app/webhooks/ports';
import type { SendflowEvent } from '../../../lambdas/domain/events';
import type { RepositoryHarness } from './harness';

const newTenant = (mode: Tenant['mode'] = 'live'): Tenant => ({
  accountId: `acct_${randomBytes(6).toString('hex')}`,
  mode,
});

const bounce = (address: string, emailId = 'email_01bounce'): Suppression => ({
  address,
  reason: 'hard_bounce',
  createdAt: '2025-04-01T10:00:00.000Z',
  emailId,
});

export function suppressionListContract(harness: RepositoryHarness<SuppressionList>): void {
  const list = () => harness.shared();

  it('add() is true for a new address and false after; the first reason, time and email stay', async () => {
    // Arrange
    const tenant = newTenant();
    const first = bounce('ada@example.com');

    // Act
    const added = await list().add(tenant, first);
    const again = await list().add(tenant, {
      address: 'ada@example.com',
      reason: 'complaint',
      createdAt: '2025-04-02T10:00:00.000Z',
      emailId: 'email_02complaint',
    });

    // Assert
    expect(added).toBe(true);
    expect(again).toBe(false);
    expect(await list().find(tenant, ['ada@example.com'])).toEqual(new Map([['ada@example.com', first]]));
  });

  it('stores a suppression without an email id (e.g. added by hand) and reads it back without one', async () => {
    // Arrange
    const tenant = newTenant();
    const manual: Suppression = {
      address: 'bob@example.com',
      reason: 'unsubscribe',
      createdAt: '2025-04-01T00:00:00Z',
    };

    // Act
    await list().add(tenant, manual);

    // Assert
    const found = await list().find(tenant, ['bob@example.com']);
    expect(found.get('bob@example.com')).toEqual(manual);
    expect(found.get('bob@example.com')).not.toHaveProperty('emailId');
  });

  it('find() returns only the suppressed ones among the addresses asked, keyed by address', async () => {
    // Arrange
    const tenant = newTenant();
    await list().add(tenant, bounce('a@example.com'));
    await list().add(tenant, { ...bounce('c@example.com'), reason: 'complaint' });

    // Act
    const found = await list().find(tenant, ['a@example.com', 'b@example.com', 'c@example.com']);

    // Assert
    expect([...found.keys()].sort()).toEqual(['a@example.com', 'c@example.com']);
    expect(found.get('c@example.com')?.reason).toBe('complaint');
  });

  it('find() of no addresses is empty, and of repeated addresses finds each once', async () => {
    // Arrange
    const tenant = newTenant();
    await list().add(tenant, bounce('dup@example.com'));

    // Act
    const none = await list().find(tenant, []);
    const repeated = await list().find(tenant, ['dup@example.com', 'dup@example.com', 'other@example.com']);

    // Assert
    expect(none.size).toBe(0);
    expect(repeated).toEqual(new Map([['dup@example.com', bounce('dup@example.com')]]));
  });

  it('find() over 250 addresses (three BatchGet pages) finds every suppressed one, first and last page too', async () => {
    // Arrange
    const tenant = newTenant();
    const addresses = Array.from({ length: 250 }, (_, i) => `user${String(i).padStart(3, '0')}@example.com`);
    const suppressedIdx = [0, 99, 100, 101, 199, 200, 249];
    await Promise.all(suppressedIdx.map((i) => list().add(tenant, bounce(addresses[i] as string))));

    // Act
    const found = await list().find(tenant, addresses);

    // Assert
    expect([...found.keys()].sort()).toEqual(suppressedIdx.map((i) => addresses[i]));
  });

  it('keeps accounts and modes apart: an address suppressed in live is not suppressed in test or elsewhere', async () => {
    // Arrange
    const live = newTenant('live');
    const test: Tenant = { accountId: live.accountId, mode: 'test' };
    const other = newTenant('live');
    await list().add(live, bounce('eve@example.com'));

    // Act
    const inTest = await list().find(test, ['eve@example.com']);
    const inOther = await list().find(other, ['eve@example.com']);
    const addedInTest = await list().add(test, { ...bounce('eve@example.com'), reason: 'unsubscribe' });

    // Assert
    expect(inTest.size).toBe(0);
    expect(inOther.size).toBe(0);
    expect(addedInTest).toBe(true);
    expect((await list().find(live, ['eve@example.com'])).get('eve@example.com')?.reason).toBe('hard_bounce');
    expect((await list().find(test, ['eve@example.com'])).get('eve@example.com')?.reason).toBe('unsubscribe');
  });

  it('of 10 parallel adds of one address exactly one is new', async () => {
    // Arrange
    const tenant = newTenant();

    // Act
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => list().add(tenant, bounce('race@example.com', `email_${i}`))),
    );

    // Assert
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  const event = (type: string, address: string): SendflowEvent => ({
    id: `evt_${randomBytes(8).toString('hex')}`,
    type: type as SendflowEvent['type'],
    accountId: 'acct_contract',
    mode: 'live',
    timestamp: '2025-04-01T10:00:00.000Z',
    data: { email: address },
  });

  it('record() adds with its events in the outbox, or is null (nothing recorded) when already suppressed', async () => {
    const tenant = newTenant();
    const added = event('suppression.added', 'rec@example.com');
    const pending = await list().record(tenant, bounce('rec@example.com'), [added]);
    expect(pending?.events).toEqual([added]);
    expect(await list().record(tenant, bounce('rec@example.com'), [event('suppression.added', 'x')])).toBeNull();
    expect([...(await list().find(tenant, ['rec@example.com'])).keys()]).toEqual(['rec@example.com']);
    await list().outbox.clear(pending as NonNullable<typeof pending>);
  });

  it('remove() with events: no longer found or listed, its event waiting; record() then suppresses it again', async () => {
    const tenant = newTenant();
    await list().add(tenant, bounce('gone@example.com'));
    const removed = event('suppression.removed', 'gone@example.com');
    const pending = await list().remove(tenant, 'gone@example.com', [removed]);
    expect(pending?.events).toEqual([removed]);
    expect(await list().find(tenant, ['gone@example.com'])).toEqual(new Map());
    expect((await list().list(tenant, { limit: 10 })).items).toEqual([]);
    expect(await list().remove(tenant, 'gone@example.com', [])).toBeNull();
    // Added again before the removal's event was relayed: found again, and that event still waits.
    const again = await list().record(tenant, { ...bounce('gone@example.com'), reason: 'manual' }, []);
    expect(again).not.toBeNull();
    expect((await list().find(tenant, ['gone@example.com'])).get('gone@example.com')?.reason).toBe('manual');
    expect((await list().outbox.due(Date.now() + 60_000, 1000)).flatMap((p) => p.events.map((e) => e.id))).toContain(
      removed.id,
    );
    await list().outbox.clear(pending as NonNullable<typeof pending>);
  });

  it('remove() without events deletes it; add() then adds it anew', async () => {
    const tenant = newTenant();
    await list().add(tenant, bounce('plain@example.com'));
    expect(await list().remove(tenant, 'plain@example.com', [])).not.toBeNull();
    expect(await list().find(tenant, ['plain@example.com'])).toEqual(new Map());
    expect(await list().add(tenant, bounce('plain@example.com'))).toBe(true);
  });

  it('list() pages a tenant in address order (every one once, over pages of 7), and filters by reason', async () => {
    const tenant = newTenant();
    const addresses = Array.from({ length: 30 }, (_, i) => `p${String(i).padStart(2, '0')}@example.com`);
    for (const [i, address] of addresses.entries()) {
      await list().add(tenant, { ...bounce(address), reason: i % 3 === 0 ? 'complaint' : 'hard_bounce' });
    }
    await list().add(newTenant(), bounce('other@example.com'));
    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 10; page += 1) {
      const got = await list().list(tenant, { limit: 7, ...(after ? { after } : {}) });
      seen.push(...got.items.map((item) => item.address));
      if (!got.hasMore) break;
      after = got.nextAfter ?? undefined;
    }
    expect(seen).toEqual(addresses);
    const complaints = await list().list(tenant, { limit: 100, reasons: ['complaint'] });
    expect(complaints.items.map((item) => item.address)).toEqual(addresses.filter((_, i) => i % 3 === 0));
    expect(complaints).toMatchObject({ hasMore: false, nextAfter: null });
  });

  if (harness.raw) {
    const raw = harness.raw;
    const itemsOf = async (table: string, tenant: Tenant) => {
      const { Items = [] } = await raw().db.doc.send(new ScanCommand({ TableName: table }));
      return Items.filter((item) => String(item.tenant).startsWith(`${tenantKey(tenant)}`));
    };

    it("spreads a tenant's suppressions over 16 partition keys by a hash of the address", async () => {
      // Arrange
      const tenant = newTenant();
      const addresses = Array.from({ length: 64 }, (_, i) => `user${i}@example.com`);

      // Act
      for (const address of addresses) await list().add(tenant, bounce(address));
      const items = await itemsOf(raw().table, tenant);

      // Assert: each under account#mode#shard, the shard its address's; the 64 over more than 8 keys
      expect(items).toHaveLength(64);
      for (const item of items) {
        expect(item.tenant).toBe(`${tenantKey(tenant)}#${shardOf(String(item.address), SUPPRESSION_SHARDS)}`);
      }
      expect(new Set(items.map((item) => item.tenant)).size).toBeGreaterThan(8);
      expect((await list().find(tenant, addresses)).size).toBe(64);
    });

    it("honours an earlier version's suppression before the upgrade, and after it moved (once, idempotently)", async () => {
      // Arrange: a table holding an item as earlier versions stored it (one key per tenant)
      const { db } = raw();
      const table = (await db.freshTables()).suppressions;
      const tenant = newTenant();
      const old = { tenant: tenantKey(tenant), ...bounce('old@example.com') };
      await db.doc.send(new PutCommand({ TableName: table, Item: old }));
      const before = new DynamoSuppressionList(db.doc, table);

      // Act
      const foundBefore = await before.find(tenant, ['old@example.com', 'new@example.com']);
      const moved = await upgradeSuppressions(db.doc, table);
      const movedAgain = await upgradeSuppressions(db.doc, table);
      const after = new DynamoSuppressionList(db.doc, table);
      const foundAfter = await after.find(tenant, ['old@example.com']);
      const addedAgain = await after.add(tenant, { ...bounce('old@example.com'), reason: 'complaint' });

      // Assert
      expect(foundBefore).toEqual(new Map([['old@example.com', bounce('old@example.com')]]));
      expect([moved, movedAgain]).toEqual([1, 0]);
      expect(foundAfter).toEqual(new Map([['old@example.com', bounce('old@example.com')]]));
      expect(addedAgain).toBe(false);
      const { Items = [] } = await db.doc.send(new ScanCommand({ TableName: table }));
      expect(Items.map((item) => item.tenant).sort()).toEqual(
        [SUPPRESSION_LAYOUT_MARK.tenant, suppressionKey(tenant, 'old@example.com')].sort(),
      );
    });

    it('deletes the old items only after the mark (a send finds each under one key or the other, never neither), and never one with events to relay', async () => {
      // Arrange: two old items, one with an event still in its outbox; every write the upgrade makes recorded.
      const { db } = raw();
      const table = (await db.freshTables()).suppressions;
      const tenant = newTenant();
      const plain = { tenant: tenantKey(tenant), ...bounce('plain@example.com') };
      const relaying = { tenant: tenantKey(tenant), ...bounce('relay@example.com'), outbox: ['evt_1'] };
      for (const Item of [plain, relaying]) await db.doc.send(new PutCommand({ TableName: table, Item }));
      const writes: string[] = [];
      db.doc.middlewareStack.add(
        (next, context) => async (args) => {
          // The tenant as given, or marshalled ({ S }) where the client's stack sees it so.
          const input = args.input as { Item?: { tenant?: unknown }; Key?: { tenant?: unknown } };
          const tenantOf = (value: unknown) => (value && typeof value === 'object' && 'S' in value ? value.S : value);
          const name = context.commandName ?? '';
          if (name.startsWith('Put') || name.startsWith('Delete')) {
            writes.push(
              `${name.startsWith('Put') ? 'Put' : 'Delete'} ${String(tenantOf((input.Item ?? input.Key)?.tenant))}`,
            );
          }
          return next(args);
        },
        { step: 'initialize', name: 'recordWrites' },
      );

      // Act
      try {
        await upgradeSuppressions(db.doc, table);
      } finally {
        db.doc.middlewareStack.remove('recordWrites');
      }

      // Assert: every delete after the mark; the relaying item kept for its relay
      const markAt = writes.indexOf(`Put ${SUPPRESSION_LAYOUT_MARK.tenant}`);
      expect(markAt).toBeGreaterThan(-1);
      expect(writes.slice(0, markAt).every((w) => w.startsWith('Put'))).toBe(true);
      expect(writes.slice(markAt + 1).every((w) => w.startsWith('Delete'))).toBe(true);
      const { Items = [] } = await db.doc.send(new ScanCommand({ TableName: table }));
      expect(Items.filter((item) => item.tenant === tenantKey(tenant)).map((item) => item.address)).toEqual([
        'relay@example.com',
      ]);
      const found = await new DynamoSuppressionList(db.doc, table).find(tenant, [
        'plain@example.com',
        'relay@example.com',
      ]);
      expect([...found.keys()].sort()).toEqual(['plain@example.com', 'relay@example.com']);
    });
  }
}
