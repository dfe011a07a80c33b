// Contract suite for the IdempotencyStore port, run against DynamoIdempotencyStore (dynalite, DynamoDB Local) and
// InMemoryIdempotencyStore: a key is claimed once; the same request replays a completed response, another
// request is a mismatch, a running one is in_progress; a lapsed lock (60 s) or an expired record (24 h) can be
// claimed again; release frees only a running claim of the same request.
import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { expect, it } from 'vitest';
import type { IdempotencyStore } from '../../../lambdas/app/idempotency';
import type { RepositoryHarness } from './harness';

const T0 = Date.UTC(2025, 3, 1, 10, 0, 0);
const LOCK_MS = 60_000;
const TTL_MS = 24 * 60 * 60 * 1000;
const OK = { statusCode: 200, body: '{"id":"email_01"}' };

const newKey = () => `acct_${randomBytes(6).toString('hex')}#test#order-${randomBytes(3).toString('hex')}`;
const FP_A = 'a'.repeat(64);
const FP_B = 'b'.repeat(64);

export function idempotencyStoreContract(harness: RepositoryHarness<IdempotencyStore>): void {
  const store = () => harness.shared();

  it('claims a new key once: the first begin is new, a second with the same request is in_progress', async () => {
    // Arrange
    const key = newKey();

    // Act
    const first = await store().begin(key, FP_A, T0);
    const second = await store().begin(key, FP_A, T0 + 1_000);

    // Assert
    expect(first).toEqual({ kind: 'new' });
    expect(second).toEqual({ kind: 'in_progress' });
  });

  it('answers mismatch for another request with the key, while it runs and after it completed', async () => {
    // Arrange
    const key = newKey();
    await store().begin(key, FP_A, T0);

    // Act
    const whileRunning = await store().begin(key, FP_B, T0 + 1_000);
    await store().complete(key, FP_A, OK);
    const afterDone = await store().begin(key, FP_B, T0 + 2_000);

    // Assert
    expect(whileRunning).toEqual({ kind: 'mismatch' });
    expect(afterDone).toEqual({ kind: 'mismatch' });
  });

  it('replays the completed response to the same request, again and again within 24 h', async () => {
    // Arrange
    const key = newKey();
    await store().begin(key, FP_A, T0);
    await store().complete(key, FP_A, OK);

    // Act
    const soon = await store().begin(key, FP_A, T0 + 5_000);
    // Past the 60 s lock: a done record is not reclaimable, only an abandoned in_progress one is.
    const later = await store().begin(key, FP_A, T0 + 23 * 60 * 60 * 1000);

    // Assert
    expect(soon).toEqual({ kind: 'replay', response: OK });
    expect(later).toEqual({ kind: 'replay', response: OK });
  });

  it('keeps the lock for 60 s; once it lapses the key can be claimed again (the first request died)', async () => {
    // Arrange
    const key = newKey();
    await store().begin(key, FP_A, T0);

    // Act
    const atLockEnd = await store().begin(key, FP_A, T0 + LOCK_MS);
    const afterLock = await store().begin(key, FP_A, T0 + LOCK_MS + 1);
    const heldAgain = await store().begin(key, FP_A, T0 + LOCK_MS + 2);

    // Assert
    expect(atLockEnd).toEqual({ kind: 'in_progress' });
    expect(afterLock).toEqual({ kind: 'new' });
    expect(heldAgain).toEqual({ kind: 'in_progress' });
  });

  it('lets another request claim a key whose lapsed lock was never completed', async () => {
    // Arrange
    const key = newKey();
    await store().begin(key, FP_A, T0);

    // Act
    const other = await store().begin(key, FP_B, T0 + LOCK_MS + 1);
    const firstAgain = await store().begin(key, FP_A, T0 + LOCK_MS + 2);

    // Assert: the key now belongs to the second request.
    expect(other).toEqual({ kind: 'new' });
    expect(firstAgain).toEqual({ kind: 'mismatch' });
  });

  it('forgets a completed record after 24 h: the key is new again, for any request', async () => {
    // Arrange
    const key = newKey();
    await store().begin(key, FP_A, T0);
    await store().complete(key, FP_A, OK);

    // Act: TTL is in whole seconds; a second after it the record counts as gone even if not yet deleted.
    const expired = await store().begin(key, FP_B, T0 + TTL_MS + 1_000);

    // Assert
    expect(expired).toEqual({ kind: 'new' });
    expect(await store().begin(key, FP_A, T0 + TTL_MS + 2_000)).toEqual({ kind: 'mismatch' });
  });

  it('release frees a running claim, so the same key and request start over as new', async () => {
    // Arrange
    const key = newKey();
    await store().begin(key, FP_A, T0);

    // Act
    await store().release(key, FP_A);
    const again = await store().begin(key, FP_A, T0 + 1_000);

    // Assert
    expect(again).toEqual({ kind: 'new' });
  });

  it('release by another request, or after completion, changes nothing', async () => {
    // Arrange
    const running = newKey();
    const done = newKey();
    await store().begin(running, FP_A, T0);
    await store().begin(done, FP_A, T0);
    await store().complete(done, FP_A, OK);

    // Act
    await store().release(running, FP_B);
    await store().release(done, FP_A);
    await store().release(newKey(), FP_A);

    // Assert
    expect(await store().begin(running, FP_A, T0 + 1_000)).toEqual({ kind: 'in_progress' });
    expect(await store().begin(done, FP_A, T0 + 1_000)).toEqual({ kind: 'replay', response: OK });
  });

  it.runIf(harness.raw)('stores the record with expiresAt 24 h ahead in Unix seconds (the table TTL)', async () => {
    // Arrange
    const key = newKey();
    const raw = harness.raw?.();
    if (!raw) throw new Error('raw table access expected');

    // Act
    await store().begin(key, FP_A, T0 + 500);
    await store().complete(key, FP_A, OK);
    const { Item } = await raw.db.doc.send(new GetCommand({ TableName: raw.table, Key: { key } }));

    // Assert
    expect(Item).toEqual({
      key,
      fingerprint: FP_A,
      state: 'done',
      lockedUntil: T0 + 500 + LOCK_MS,
      expiresAt: Math.floor((T0 + 500 + TTL_MS) / 1000),
      response: OK,
    });
  });
}
