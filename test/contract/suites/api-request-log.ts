// Contract suite for the ApiRequestLog port (GET /v1/logs, the dashboard's "API requests"), run against
// DynamoApiRequestLog (dynalite, DynamoDB Local) and InMemoryApiRequestLog: an account and mode's entries come
// back newest first, at most `limit`, never another tenant's, never an expired one; a search returns exactly the
// entries matching its filters, and its pages, followed, find each match once; (DynamoDB) a tenant's entries
// spread over 4 partition keys, listed newest first across them and the key earlier versions wrote; a failure's
// row also under its status class's keys, which the status filter reads alone; a filtered page reads a bounded
// number of entries and says where to go on.
import { randomBytes } from 'node:crypto';
import { PutCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { expect, it } from 'vitest';
import {
  API_REQUEST_SHARDS,
  apiRequestClassKey,
  apiRequestKey,
  DynamoApiRequestLog,
} from '../../../lambdas/adapters/dynamodb/api-requests';
import type { ApiRequestEntry, ApiRequestFilter, ApiRequestLog } from '../../../lambdas/app/api-requests/ports';
import { timeOrderedId } from '../../../lambdas/domain/ids';
import type { RepositoryHarness } from './harness';

const T0 = Date.UTC(2026, 10, 25, 23, 0, 0);

const entry = (accountId: string, at: number, overrides: Partial<ApiRequestEntry> = {}): ApiRequestEntry => ({
  accountId,
  mode: 'test',
  id: timeOrderedId('req', at, randomBytes),
  method: 'GET',
  path: '/emails',
  status: 200,
  keyId: 'key_contract',
  at,
  requestId: `r-${at}`,
  durationMs: 3,
  expiresAt: Math.floor(at / 1000) + 86_400,
  ...overrides,
});

export function apiRequestLogContract(harness: RepositoryHarness<ApiRequestLog>): void {
  const log = () => harness.shared();
  const account = () => `acct_${randomBytes(6).toString('hex')}`;

  it('returns the newest entries first, at most limit, exactly as recorded', async () => {
    const id = account();
    const entries = [0, 1, 2, 3].map((i) => entry(id, T0 + i * 1_000, { path: `/emails/em_${i}`, status: 200 + i }));
    for (const e of entries) await log().record(e);

    const newest = await log().recent(id, 'test', 3, T0 + 10_000);

    expect(newest).toEqual([entries[3], entries[2], entries[1]]);
  });

  it("keeps tenants apart: another account's or mode's entries never show", async () => {
    const id = account();
    await log().record(entry(id, T0, { mode: 'live' }));
    await log().record(entry(account(), T0));

    expect(await log().recent(id, 'test', 100, T0)).toEqual([]);
    expect(await log().recent(id, 'live', 100, T0)).toHaveLength(1);
  });

  it('leaves out expired entries (TTL deletes lazily)', async () => {
    const id = account();
    await log().record(entry(id, T0 - 90_000_000, { expiresAt: Math.floor(T0 / 1000) - 1 }));
    const fresh = entry(id, T0);
    await log().record(fresh);

    expect(await log().recent(id, 'test', 100, T0)).toEqual([fresh]);
  });

  /** A known mix: status, method, route and key vary; one entry a second from T0. */
  const mix = (id: string) =>
    [
      { status: 200, method: 'GET', route: '/usage', path: '/usage', keyId: 'key_a' },
      { status: 404, method: 'GET', route: '/emails/{id}', path: '/emails/em_1', keyId: 'key_a' },
      { status: 422, method: 'POST', route: '/webhooks', path: '/webhooks', keyId: 'key_b' },
      { status: 201, method: 'POST', route: '/webhooks', path: '/webhooks', keyId: 'key_a' },
      { status: 500, method: 'GET', route: '/emails/{id}', path: '/emails/em_2', keyId: 'key_b' },
      { status: 429, method: 'GET', route: '/usage', path: '/usage', keyId: 'key_b' },
    ].map((fields, i) => entry(id, T0 + i * 1_000, { ...fields, requestBody: '{"a":1}', responseBody: '{}' }));

  it('searches by status range, method, route, key and time, newest first, bodies as recorded', async () => {
    const id = account();
    const entries = mix(id);
    for (const e of entries) await log().record(e);
    const same = async (filter: ApiRequestFilter) =>
      (await log().search(id, 'test', filter, 100, T0 + 60_000)).entries.map((e) => e.path + e.status);
    const paths = (indexes: number[]) => indexes.map((i) => `${entries[i]?.path}${entries[i]?.status}`);

    expect(await same({ status: [400, 499] })).toEqual(paths([5, 2, 1]));
    expect(await same({ status: [500, 599] })).toEqual(paths([4]));
    expect(await same({ status: [422, 422] })).toEqual(paths([2]));
    expect(await same({ status: [200, 299] })).toEqual(paths([3, 0]));
    expect(await same({ method: 'POST' })).toEqual(paths([3, 2]));
    expect(await same({ route: '/emails/{id}' })).toEqual(paths([4, 1]));
    expect(await same({ keyId: 'key_b', status: [400, 499] })).toEqual(paths([5, 2]));
    expect(await same({ since: T0 + 2_000, until: T0 + 5_000 })).toEqual(paths([4, 3, 2]));
    expect(await same({ method: 'DELETE' })).toEqual([]);
    const [newest] = (await log().search(id, 'test', { status: [400, 499] }, 100, T0 + 60_000)).entries;
    const { requestBody: _b, responseBody: _r, ...row } = entries[5] as ApiRequestEntry;
    expect(newest).toEqual(row);
    expect(await log().get(id, 'test', row.id, T0 + 60_000)).toEqual(entries[5]);
    expect(await same({})).toHaveLength(6);
  });

  it('pages a search: each match once, newest first, the last page saying there is no more', async () => {
    const id = account();
    const entries = Array.from({ length: 30 }, (_, i) =>
      entry(id, T0 + i * 1_000, { status: i % 3 ? 200 : 404, method: 'GET' }),
    );
    for (const e of entries) await log().record(e);
    const seen: string[] = [];
    let before: string | undefined;
    for (let page = 0; page < 20; page++) {
      const { entries: found, next } = await log().search(
        id,
        'test',
        { method: 'GET', status: [404, 404] },
        4,
        T0 + 60_000,
        before,
      );
      seen.push(...found.map((e) => e.id));
      if (!next) break;
      before = next;
    }

    expect(seen).toEqual(
      entries
        .filter((_, i) => i % 3 === 0)
        .map((e) => e.id)
        .reverse(),
    );
  });

  if (harness.raw) {
    const raw = harness.raw;

    it("writes a failure's row (no bodies) under its status class's keys too; the status filter reads only those", async () => {
      const id = account();
      const entries = mix(id);
      for (const e of entries) await log().record(e);
      const { db, table } = raw();

      const { Items = [] } = await db.doc.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: 'tenant = :t',
          ExpressionAttributeValues: { ':t': apiRequestClassKey(entries[2] as ApiRequestEntry) },
        }),
      );

      expect(apiRequestClassKey(entries[2] as ApiRequestEntry)).toMatch(
        new RegExp(`^${id}#test#4xx#[0-${API_REQUEST_SHARDS - 1}]$`),
      );
      expect(Items.find((item) => item.id === entries[2]?.id)).toMatchObject({ status: 422, route: '/webhooks' });
      expect(Items.every((item) => item.requestBody === undefined && item.responseBody === undefined)).toBe(true);
    });

    it('reads a bounded number of entries per key and page, and says where the next page starts', async () => {
      // Arrange: a reader bounded to 3 entries per key, 40 entries of which every 8th is a POST
      const id = account();
      const { db, table } = raw();
      const bounded = new DynamoApiRequestLog(db.doc, table, 3);
      const entries = Array.from({ length: 40 }, (_, i) =>
        entry(id, T0 + i * 1_000, { method: i % 8 ? 'GET' : 'POST' }),
      );
      for (const e of entries) await bounded.record(e);

      // Act
      const first = await bounded.search(id, 'test', { method: 'POST' }, 2, T0 + 60_000);
      const seen = [...first.entries];
      let next = first.next;
      for (let page = 0; next && page < 40; page++) {
        const more = await bounded.search(id, 'test', { method: 'POST' }, 2, T0 + 60_000, next);
        seen.push(...more.entries);
        next = more.next;
      }

      // Assert: the first page read 3 entries per key, no further back than the 25th entry (4 keys cannot share
      // the 15 newest 2 each): of the POSTs it can hold the 33rd at most, a short page that says where to go on
      expect(first.next).not.toBeNull();
      expect(first.entries.length).toBeLessThanOrEqual(1);
      expect(seen.map((e) => e.id)).toEqual(
        entries
          .filter((e) => e.method === 'POST')
          .map((e) => e.id)
          .reverse(),
      );
    });

    it("spreads a tenant's entries over 4 partition keys and lists the newest across them, old keys' too", async () => {
      // Arrange: 40 entries, and one stored under the unsharded key as earlier versions did
      const id = account();
      const { db, table } = raw();
      const entries = Array.from({ length: 40 }, (_, i) => entry(id, T0 + i * 1_000));
      for (const e of entries) await log().record(e);
      const old = entry(id, T0 + 40_500);
      await db.doc.send(new PutCommand({ TableName: table, Item: { tenant: `${id}#test`, ...old } }));

      // Act
      const newest = await log().recent(id, 'test', 25, T0 + 60_000);
      const { Items = [] } = await db.doc.send(new ScanCommand({ TableName: table }));

      // Assert
      const mine = Items.filter((item) => item.accountId === id && item.id !== old.id);
      expect(mine.every((item) => item.tenant === apiRequestKey(item as ApiRequestEntry))).toBe(true);
      expect(new Set(mine.map((item) => item.tenant)).size).toBe(4);
      expect(newest).toEqual([old, ...entries.slice(16).reverse()]);
    });
  }
}
