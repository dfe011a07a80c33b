// Contract suite for the QuotaCounter port, run against DynamoQuotaCounter (dynalite, DynamoDB Local) and
// InMemoryQuotaCounter: emails are counted up to the limit exactly, a request that would pass it is refused
// whole and leaves the count unchanged, months and accounts count apart, and the counter item expires.
import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { expect, it } from 'vitest';
import type { QuotaCounter } from '../../../lambdas/app/ports';
import { type QuotaWindow, quotaWindow } from '../../../lambdas/domain/email/quota';
import type { RepositoryHarness } from './harness';

const APRIL: QuotaWindow = quotaWindow(Date.UTC(2025, 3, 15, 12, 0, 0));
const MAY: QuotaWindow = quotaWindow(Date.UTC(2025, 4, 1, 0, 0, 0));

const newAccount = () => `acct_${randomBytes(6).toString('hex')}`;

export function quotaCounterContract(harness: RepositoryHarness<QuotaCounter>): void {
  const counter = () => harness.shared();

  it('counts up to the limit exactly, then refuses even one more', async () => {
    // Arrange
    const account = newAccount();

    // Act
    const results = [
      await counter().consume(account, APRIL, 3, 10),
      await counter().consume(account, APRIL, 6, 10),
      await counter().consume(account, APRIL, 1, 10),
      await counter().consume(account, APRIL, 1, 10),
    ];

    // Assert
    expect(results).toEqual([true, true, true, false]);
  });

  it('used() reads what the window counted: 0 before any, then the sum, per account and month', async () => {
    const account = newAccount();
    expect(await counter().used(account, APRIL)).toBe(0);

    await counter().consume(account, APRIL, 3, 10);
    await counter().consume(account, APRIL, 2, 10);
    await counter().consume(account, APRIL, 9, 10);

    expect(await counter().used(account, APRIL)).toBe(5);
    expect(await counter().used(account, MAY)).toBe(0);
    expect(await counter().used(newAccount(), APRIL)).toBe(0);
  });

  it('release() gives back what a failed request consumed, never below zero', async () => {
    // Arrange
    const account = newAccount();
    await counter().consume(account, APRIL, 8, 10);

    // Act
    await counter().release(account, APRIL, 5);
    await counter().release(account, APRIL, 50);
    await counter().release(newAccount(), APRIL, 1);

    // Assert: 3 used, so 7 fit and 8 do not.
    expect(await counter().consume(account, APRIL, 8, 10)).toBe(false);
    expect(await counter().consume(account, APRIL, 7, 10)).toBe(true);
  });

  it('refuses a batch that would pass the limit as a whole, and counts none of it', async () => {
    // Arrange
    const account = newAccount();
    await counter().consume(account, APRIL, 8, 10);

    // Act
    const tooMany = await counter().consume(account, APRIL, 3, 10);

    // Assert: the refused 3 were not added, so exactly 2 still fit.
    expect(tooMany).toBe(false);
    expect(await counter().consume(account, APRIL, 2, 10)).toBe(true);
    expect(await counter().consume(account, APRIL, 1, 10)).toBe(false);
  });

  it('refuses a first request larger than the limit, and leaves the whole limit available', async () => {
    // Arrange
    const account = newAccount();

    // Act
    const refused = await counter().consume(account, APRIL, 11, 10);

    // Assert
    expect(refused).toBe(false);
    expect(await counter().consume(account, APRIL, 10, 10)).toBe(true);
  });

  it('counts months apart: a full April leaves May untouched', async () => {
    // Arrange
    const account = newAccount();
    await counter().consume(account, APRIL, 10, 10);

    // Act
    const may = await counter().consume(account, MAY, 10, 10);
    const aprilAgain = await counter().consume(account, APRIL, 1, 10);

    // Assert
    expect(may).toBe(true);
    expect(aprilAgain).toBe(false);
  });

  it('counts accounts apart', async () => {
    // Arrange
    const full = newAccount();
    await counter().consume(full, APRIL, 5, 5);

    // Act
    const other = await counter().consume(newAccount(), APRIL, 5, 5);

    // Assert
    expect(other).toBe(true);
    expect(await counter().consume(full, APRIL, 1, 5)).toBe(false);
  });

  it('never lets parallel requests pass the limit together: of 20 one-email requests, 7 fit a limit of 7', async () => {
    // Arrange
    const account = newAccount();

    // Act
    const results = await Promise.all(Array.from({ length: 20 }, () => counter().consume(account, APRIL, 1, 7)));

    // Assert
    expect(results.filter(Boolean)).toHaveLength(7);
    expect(await counter().consume(account, APRIL, 1, 7)).toBe(false);
  });

  it.runIf(harness.raw)(
    'stores quota#account#month with the count and expiresAt 35 days after the month ends, set once',
    async () => {
      // Arrange
      const account = newAccount();
      const raw = harness.raw?.();
      if (!raw) throw new Error('raw table access expected');

      // Act
      await counter().consume(account, APRIL, 2, 10);
      await counter().consume(account, APRIL, 3, 10);
      await counter().consume(account, APRIL, 9, 10);
      const key = `quota#${account}#2025-04`;
      const { Item } = await raw.db.doc.send(new GetCommand({ TableName: raw.table, Key: { key } }));

      // Assert
      expect(APRIL.resetsAt).toBe(Date.UTC(2025, 4, 1) / 1000);
      expect(Item).toEqual({ key, n: 5, expiresAt: Date.UTC(2025, 4, 1) / 1000 + 35 * 86_400 });
    },
  );
}
