// Contract suite for the PaceCounter port (per-endpoint rate limit), run against the in-memory counter and
// DynamoPaceCounter (on dynalite and DynamoDB Local): turns a spacing apart, never the same twice even when
// asked concurrently; a start granted only when the endpoint's next allowed start has come, a refusal saying
// when it comes, concurrent takes granting exactly one; endpoints apart.
import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { expect, it } from 'vitest';
import type { PaceCounter } from '../../../lambdas/app/webhooks/pace';
import type { RepositoryHarness } from './harness';

const webhookId = () => `wh_${randomBytes(8).toString('hex')}`;
const T0 = 1_790_000_000_000;

export function paceCounterContract(harness: RepositoryHarness<PaceCounter>): void {
  it('grants the first start, refuses the next until the spacing has passed, then grants it', async () => {
    // Arrange
    const counter = harness.shared();
    const id = webhookId();

    // Act
    const first = await counter.take(id, 200, T0);
    const early = await counter.take(id, 200, T0 + 199);
    const onTime = await counter.take(id, 200, T0 + 200);

    // Assert
    expect(first).toEqual({ granted: true });
    expect(early.granted).toBe(false);
    // DynamoDB returns the item on a refusal; a backend that cannot still says "no earlier than a spacing".
    if (!early.granted) expect(early.nextAt).toBeGreaterThanOrEqual(T0 + 200);
    expect(onTime).toEqual({ granted: true });
  });

  it('grants exactly one of 20 concurrent starts at the same moment', async () => {
    // Arrange
    const counter = harness.shared();
    const id = webhookId();

    // Act
    const takes = await Promise.all(Array.from({ length: 20 }, () => counter.take(id, 100, T0)));

    // Assert
    expect(takes.filter((take) => take.granted)).toHaveLength(1);
  });

  it('keeps endpoints apart: one paced endpoint never holds back another', async () => {
    // Arrange
    const counter = harness.shared();
    const [a, b] = [webhookId(), webhookId()];
    await counter.take(a, 1_000, T0);

    // Act
    const other = await counter.take(b, 1_000, T0 + 1);

    // Assert
    expect(other).toEqual({ granted: true });
  });

  it('hands out turns a spacing apart from now when idle, and now again once the horizon has passed', async () => {
    // Arrange
    const counter = harness.shared();
    const id = webhookId();

    // Act
    const burst = [
      await counter.reserve(id, 210, T0),
      await counter.reserve(id, 210, T0 + 5),
      await counter.reserve(id, 210, T0 + 9),
    ];
    const later = await counter.reserve(id, 210, T0 + 10_000);

    // Assert
    expect(burst).toEqual([T0, T0 + 210, T0 + 420]);
    expect(later).toBe(T0 + 10_000);
  });

  it('never hands out one turn twice: 20 concurrent reservations get 20 turns a spacing apart', async () => {
    // Arrange
    const counter = harness.shared();
    const id = webhookId();

    // Act
    const turns = await Promise.all(Array.from({ length: 20 }, () => counter.reserve(id, 100, T0)));

    // Assert
    expect([...turns].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, n) => T0 + n * 100));
  });

  it('(DynamoDB) keeps one small item per endpoint, expiring a day after its last write', async () => {
    if (!harness.raw) return;
    // Arrange
    const { db, table } = harness.raw();
    const counter = harness.shared();
    const id = webhookId();

    // Act
    await counter.reserve(id, 210, T0);
    await counter.take(id, 210, T0);
    const { Item } = await db.doc.send(new GetCommand({ TableName: table, Key: { key: `pace#${id}` } }));

    // Assert
    expect(Item).toEqual({
      key: `pace#${id}`,
      horizon: T0 + 210,
      nextAt: T0 + 210,
      expiresAt: Math.ceil(T0 / 1000) + 86_400,
    });
  });
}
