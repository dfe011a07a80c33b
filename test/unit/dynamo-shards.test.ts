// Unit tests of shardOf (lambdas/adapters/dynamodb/shards.ts): the shard of a key is stable (the reconciler and
// the list find a row where it was written), in range, and keys spread over every shard.
import { expect, it } from 'vitest';
import { shardOf } from '../../lambdas/adapters/dynamodb/shards';

it('gives a key the same shard every time, within [0, count)', () => {
  // Arrange
  const keys = Array.from({ length: 200 }, (_, i) => `wh_${i.toString(36).padStart(8, '0')}`);

  // Act
  const first = keys.map((key) => shardOf(key, 16));
  const again = keys.map((key) => shardOf(key, 16));

  // Assert
  expect(again).toEqual(first);
  expect(first.every((shard) => Number.isInteger(shard) && shard >= 0 && shard < 16)).toBe(true);
});

it('spreads keys over every shard, none with more than twice its share', () => {
  // Arrange
  const keys = Array.from({ length: 1600 }, (_, i) => `dlv_${String(i).padStart(30, '0')}`);

  // Act
  const counts = new Array<number>(16).fill(0);
  for (const key of keys) counts[shardOf(key, 16)] = (counts[shardOf(key, 16)] ?? 0) + 1;

  // Assert
  expect(Math.min(...counts)).toBeGreaterThan(0);
  expect(Math.max(...counts)).toBeLessThanOrEqual(200);
});

it('is a known value for a known key (FNV-1a 32-bit), so every process and release agrees', () => {
  // FNV-1a("a") = 0xe40c292c = 3826002220; 3826002220 % 16 = 12, % 1000 = 220.
  expect(shardOf('a', 16)).toBe(12);
  expect(shardOf('a', 1000)).toBe(220);
});
