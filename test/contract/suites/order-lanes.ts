// Contract suite for the OrderLanes port (per-email ordering), run against DynamoOrderLanes (dynalite, DynamoDB
// Local) and InMemoryOrderLanes: entering answers the whole lane, idempotently; leaving answers what is left;
// lanes of other emails and webhooks stay apart; leaving an unknown lane creates nothing.
import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { expect, it } from 'vitest';
import { laneKeyOf } from '../../../lambdas/adapters/dynamodb/order-lanes';
import type { OrderLanes } from '../../../lambdas/app/webhooks/order-lanes';
import type { RepositoryHarness } from './harness';

const newLane = () => ({
  webhookId: `wh_${randomBytes(6).toString('hex')}`,
  emailId: `email_${randomBytes(6).toString('hex')}`,
});
const EXPIRES = Math.floor(Date.UTC(2026, 11, 1) / 1000);

export function orderLanesContract(harness: RepositoryHarness<OrderLanes>): void {
  const lanes = () => harness.shared();

  it('answers every entry of the lane on enter, this one included, by sequence', async () => {
    // Arrange
    const lane = newLane();

    // Act
    const first = await lanes().enter(lane, { deliveryId: 'dlv_b', sequence: 900 }, EXPIRES);
    const second = await lanes().enter(lane, { deliveryId: 'dlv_a', sequence: 40 }, EXPIRES);

    // Assert
    expect(first).toEqual([{ deliveryId: 'dlv_b', sequence: 900 }]);
    expect(second).toEqual([
      { deliveryId: 'dlv_a', sequence: 40 },
      { deliveryId: 'dlv_b', sequence: 900 },
    ]);
  });

  it('is idempotent: entering again (a redelivered job) keeps one entry', async () => {
    const lane = newLane();
    await lanes().enter(lane, { deliveryId: 'dlv_a', sequence: 40 }, EXPIRES);

    expect(await lanes().enter(lane, { deliveryId: 'dlv_a', sequence: 40 }, EXPIRES)).toEqual([
      { deliveryId: 'dlv_a', sequence: 40 },
    ]);
  });

  it('answers the entries left on leave; leaving twice, or a delivery never in it, changes nothing', async () => {
    // Arrange
    const lane = newLane();
    await lanes().enter(lane, { deliveryId: 'dlv_a', sequence: 40 }, EXPIRES);
    await lanes().enter(lane, { deliveryId: 'dlv_b', sequence: 900 }, EXPIRES);

    // Act / Assert
    expect(await lanes().leave(lane, 'dlv_a')).toEqual([{ deliveryId: 'dlv_b', sequence: 900 }]);
    expect(await lanes().leave(lane, 'dlv_a')).toEqual([{ deliveryId: 'dlv_b', sequence: 900 }]);
    expect(await lanes().leave(lane, 'dlv_zz')).toEqual([{ deliveryId: 'dlv_b', sequence: 900 }]);
    expect(await lanes().leave(lane, 'dlv_b')).toEqual([]);
  });

  it('keeps lanes apart: another email of the webhook, and the same email to another webhook', async () => {
    const lane = newLane();
    await lanes().enter(lane, { deliveryId: 'dlv_a', sequence: 40 }, EXPIRES);

    const otherEmail = { ...lane, emailId: `${lane.emailId}x` };
    const otherHook = { ...lane, webhookId: `${lane.webhookId}x` };
    expect(await lanes().enter(otherEmail, { deliveryId: 'dlv_c', sequence: 1 }, EXPIRES)).toEqual([
      { deliveryId: 'dlv_c', sequence: 1 },
    ]);
    expect(await lanes().enter(otherHook, { deliveryId: 'dlv_d', sequence: 2 }, EXPIRES)).toEqual([
      { deliveryId: 'dlv_d', sequence: 2 },
    ]);
    expect(await lanes().leave(lane, 'dlv_zz')).toEqual([{ deliveryId: 'dlv_a', sequence: 40 }]);
  });

  it('reads the whole lane (empty when there is none), entries whose row is to come with their rowBy', async () => {
    // Arrange
    const lane = newLane();
    expect(await lanes().read(lane)).toEqual([]);

    // Act: a fanned-out entry (row to come), then the same delivery entered with its row.
    await lanes().enter(lane, { deliveryId: 'dlv_a', sequence: 40, rowBy: 1_900_000_000_000 }, EXPIRES);
    await lanes().enter(lane, { deliveryId: 'dlv_b', sequence: 900 }, EXPIRES);
    const before = await lanes().read(lane);
    await lanes().enter(lane, { deliveryId: 'dlv_a', sequence: 40 }, EXPIRES);

    // Assert
    expect(before).toEqual([
      { deliveryId: 'dlv_a', sequence: 40, rowBy: 1_900_000_000_000 },
      { deliveryId: 'dlv_b', sequence: 900 },
    ]);
    expect(await lanes().read(lane)).toEqual([
      { deliveryId: 'dlv_a', sequence: 40 },
      { deliveryId: 'dlv_b', sequence: 900 },
    ]);
  });

  it('stores an entry whose row is to come as {s, by}, which a release that knows only bare sequences skips', async () => {
    const raw = harness.raw?.();
    if (!raw) return;
    const lane = newLane();
    await lanes().enter(lane, { deliveryId: 'dlv_a', sequence: 40, rowBy: 1_900_000_000_000 }, EXPIRES);

    const { Item } = await raw.db.doc.send(new GetCommand({ TableName: raw.table, Key: laneKeyOf(lane) }));
    expect(Item).toEqual({ ...laneKeyOf(lane), dlv_a: { s: 40, by: 1_900_000_000_000 }, expiresAt: EXPIRES });
  });

  it('leaving a lane that does not exist answers an empty lane and creates nothing', async () => {
    const lane = newLane();

    expect(await lanes().leave(lane, 'dlv_a')).toEqual([]);
    const raw = harness.raw?.();
    if (raw) {
      const { Item } = await raw.db.doc.send(new GetCommand({ TableName: raw.table, Key: laneKeyOf(lane) }));
      expect(Item).toBeUndefined();
    }
  });

  it('stores one small item per lane with its expiry (TTL), out of every webhook delivery partition', async () => {
    const raw = harness.raw?.();
    if (!raw) return;
    const lane = newLane();
    await lanes().enter(lane, { deliveryId: 'dlv_a', sequence: 40 }, EXPIRES);

    const { Item } = await raw.db.doc.send(new GetCommand({ TableName: raw.table, Key: laneKeyOf(lane) }));
    expect(Item).toEqual({ ...laneKeyOf(lane), dlv_a: 40, expiresAt: EXPIRES });
    expect(String(Item?.webhookId)).toMatch(/^ord#wh_/);
  });
}
