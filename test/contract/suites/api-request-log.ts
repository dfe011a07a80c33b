// Contract suite for the ApiRequestLog port (GET /v1/logs, the dashboard's "API requests"), run against
// DynamoApiRequestLog (dynalite, DynamoDB Local) and InMemoryApiRequestLog: an account and mode's entries come
// back newest first, at most `limit`, never another tenant's, never an expired one; (DynamoDB) a tenant's entries
// spread over 4 partition keys, listed newest first across them and the key earlier versions wrote.
import { randomBytes } from 'node:crypto';
import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { expect, it } from 'vitest';
import { apiRequestKey } from '../../../lambdas/adapters/dynamodb/api-requests';
import type { ApiRequestEntry, ApiRequestLog } from '../../../lambdas/app/api-requests/ports';
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

  if (harness.raw) {
    const raw = harness.raw;

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
