// Contract suite for the ApiRequestLog port (GET /v1/logs, the dashboard's "API requests"), run against
// DynamoApiRequestLog (dynalite, DynamoDB Local) and InMemoryApiRequestLog: an account and mode's entries come
// back newest first, at most `limit`, never another tenant's, never an expired one.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
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
}
