// Contract suite for the PaceCounter port (per-endpoint rate limit), run against the in-memory counter and
// DynamoPaceCounter (on dynalite and DynamoDB Local): a start is granted only when the endpoint's next allowed
// start has come, a refusal says when it comes, concurrent takes grant exactly one, and endpoints are apart.
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

  it('(DynamoDB) keeps one small item per endpoint, expiring a minute after its next start', async () => {
    if (!harness.raw) return;
    // Arrange
    const { db, table } = harness.raw();
    const counter = harness.shared();
    const id = webhookId();

    // Act
    await counter.take(id, 210, T0);
    const { Item } = await db.doc.send(new GetCommand({ TableName: table, Key: { key: `pace#${id}` } }));

    // Assert
    expect(Item).toEqual({ key: `pace#${id}`, nextAt: T0 + 210, expiresAt: Math.ceil((T0 + 210) / 1000) + 60 });
  });
}
