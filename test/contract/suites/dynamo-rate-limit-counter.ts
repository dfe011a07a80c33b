// Contract suite for DynamoRateLimitCounter (RateLimitCounter port), written once against a DynamoDB endpoint
// factory (dynamodb-repositories.test.ts runs it on dynalite and DynamoDB Local): atomic increments,
// independent windows and subjects, and the counter item's TTL.
import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, expect, it } from 'vitest';
import { DynamoRateLimitCounter } from '../../../lambdas/adapters/dynamodb/rate-limits';
import { type RateWindow, windowAt } from '../../../lambdas/domain/rate-limit';
import { type DynamoEndpointFactory, useDynamoTables } from '../../support/dynamo';

function subject(): string {
  return `account:acct_${randomBytes(8).toString('hex')}`;
}

export function rateLimitCounterContract(factory: DynamoEndpointFactory): void {
  const db = useDynamoTables(factory);
  let counter: DynamoRateLimitCounter;
  const window: RateWindow = windowAt(1_735_732_800_250);

  beforeEach(() => {
    counter = new DynamoRateLimitCounter(db().doc, db().tables.rateLimits);
  });

  it('counts 1, 2, 3 for successive requests in one window', async () => {
    // Arrange
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
    const who = subject();

    // Act
    const counts = await Promise.all(Array.from({ length: 50 }, () => counter.increment(who, window)));

    // Assert
    expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('keeps windows apart: the next second starts again at 1', async () => {
    // Arrange
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
    const first = subject();
    for (let i = 0; i < 4; i++) await counter.increment(first, window);

    // Act
    const other = await counter.increment(subject(), window);
    const ip = await counter.increment('ip:203.0.113.9', window);
    const firstAgain = await counter.increment(first, window);

    // Assert
    expect(other).toBe(1);
    expect(ip).toBe(1);
    expect(firstAgain).toBe(5);
  });

  it('stores the counter with expiresAt = window reset + 60 s, unchanged by later increments', async () => {
    // Arrange
    const who = subject();

    // Act
    await counter.increment(who, window);
    await counter.increment(who, window);
    const { Item } = await db().doc.send(
      new GetCommand({ TableName: db().tables.rateLimits, Key: { key: `${who}#${window.start}` } }),
    );

    // Assert
    expect(Item).toEqual({ key: `${who}#${window.start}`, n: 2, expiresAt: window.reset + 60 });
  });
}
