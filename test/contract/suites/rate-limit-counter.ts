// Contract suite for the RateLimitCounter port, run against the in-memory fake and DynamoRateLimitCounter (on
// dynalite and DynamoDB Local): atomic increments, independent windows and subjects, a window spread over
// several counter items still counted whole, and (DynamoDB) the items' layout and TTL.
import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { expect, it } from 'vitest';
import type { RateLimitCounter } from '../../../lambdas/app/ports';
import { type RateWindow, windowAt } from '../../../lambdas/domain/rate-limit';
import type { RepositoryHarness } from './harness';

function subject(): string {
  return `account:acct_${randomBytes(8).toString('hex')}`;
}

export function rateLimitCounterContract(harness: RepositoryHarness<RateLimitCounter>): void {
  const window: RateWindow = windowAt(1_735_732_800_250);

  it('counts 1, 2, 3 for successive requests in one window', async () => {
    // Arrange
    const counter = harness.shared();
    const who = subject();

    // Act
    const counts = [
      await counter.increment(who, window),
      await counter.increment(who, window),
      await counter.increment(who, window),
    ];

    // Assert
    expect(counts).toEqual([1, 2, 3]);
  });

  it('increments atomically: 50 parallel requests see each count 1..50 exactly once', async () => {
    // Arrange
    const counter = harness.shared();
    const who = subject();

    // Act
    const counts = await Promise.all(Array.from({ length: 50 }, () => counter.increment(who, window)));

    // Assert
    expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('keeps windows apart: the next second starts again at 1', async () => {
    // Arrange
    const counter = harness.shared();
    const who = subject();
    const next = windowAt((window.start + 1) * 1000);
    await counter.increment(who, window);
    await counter.increment(who, window);

    // Act
    const inNext = await counter.increment(who, next);
    const backInFirst = await counter.increment(who, window);

    // Assert
    expect(next.start).toBe(window.start + 1);
    expect(inNext).toBe(1);
    expect(backInFirst).toBe(3);
  });

  it('keeps subjects apart: another account or an IP in the same window starts at 1', async () => {
    // Arrange
    const counter = harness.shared();
    const first = subject();
    for (let i = 0; i < 4; i++) await counter.increment(first, window);

    // Act
    const other = await counter.increment(subject(), window);
    const ip = await counter.increment(`ip:203.0.113.${randomBytes(1)[0]}`, window);
    const firstAgain = await counter.increment(first, window);

    // Assert
    expect(other).toBe(1);
    expect(ip).toBe(1);
    expect(firstAgain).toBe(5);
  });

  it('counts a window spread over 4 items whole: successive requests see 1..8', async () => {
    // Arrange
    const counter = harness.shared();
    const who = subject();

    // Act
    const counts: number[] = [];
    for (let i = 0; i < 8; i++) counts.push(await counter.increment(who, window, 4));

    // Assert
    expect(counts).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('never lets more than N parallel requests of a spread window see a count of N or less', async () => {
    // Arrange
    const counter = harness.shared();
    const who = subject();
    const limit = 30;

    // Act: 60 parallel requests on a window of 4 items
    const counts = await Promise.all(Array.from({ length: 60 }, () => counter.increment(who, window, 4)));
    const after = await counter.increment(who, window, 4);

    // Assert: the last one sees them all; within the limit there are never more than the limit
    expect(counts.filter((n) => n <= limit).length).toBeLessThanOrEqual(limit);
    expect(Math.max(...counts)).toBe(60);
    expect(after).toBe(61);
  });

  if (harness.raw) {
    const raw = harness.raw;

    it('stores the counter with expiresAt = window reset + 60 s, unchanged by later increments', async () => {
      // Arrange
      const counter = harness.shared();
      const who = subject();
      const { db, table } = raw();

      // Act
      await counter.increment(who, window);
      await counter.increment(who, window);
      const { Item } = await db.doc.send(new GetCommand({ TableName: table, Key: { key: `${who}#${window.start}` } }));

      // Assert
      expect(Item).toEqual({ key: `${who}#${window.start}`, n: 2, expiresAt: window.reset + 60 });
    });

    it('spreads a window over its items evenly: 500 requests on 4 items write 125 each', async () => {
      // Arrange
      const counter = harness.shared();
      const who = subject();
      const { db, table } = raw();

      // Act
      for (let i = 0; i < 5; i++)
        await Promise.all(Array.from({ length: 100 }, () => counter.increment(who, window, 4)));
      const items = await Promise.all(
        [0, 1, 2, 3].map(async (s) => {
          const key = `${who}#${window.start}#${s}`;
          return (await db.doc.send(new GetCommand({ TableName: table, Key: { key } }))).Item;
        }),
      );

      // Assert: each item takes a quarter of the writes, and expires a minute after the window
      expect(items.map((item) => item?.n)).toEqual([125, 125, 125, 125]);
      expect(items.every((item) => item?.expiresAt === window.reset + 60)).toBe(true);
    });
  }
}
