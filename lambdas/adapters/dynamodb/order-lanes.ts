// Per-email ordering lanes in DynamoDB, in the deliveries table: one small item per (webhook, email) that has
// unfinished deliveries to an ordered webhook, under its own partition key (`ord#webhook#email`: no hot key, and
// never in a webhook's delivery partitions, so no log read meets it). Each entry is a top-level attribute named by
// its delivery id holding its sequence, so entering and leaving are single UpdateItems (SET or REMOVE one
// attribute) that return the whole lane (ALL_NEW). Only deliveries to `per_email` webhooks ever write here.
// An entry whose row is still to come (LaneEntry.rowBy) is a map `{s: sequence, by: rowBy}`; one with its row is
// the bare sequence. A release that knows only bare sequences skips the maps: it orders as it did before them.
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { LaneKey, OrderLanes } from '../../app/webhooks/order-lanes';
import type { LaneEntry } from '../../domain/webhooks/ordering';
import { unlessConditionFails } from './operations';

/** Every lane item's partition key starts so (IAM grants the lane writers these items only). */
export const LANE_PREFIX = 'ord#';
const LANE_SORT_KEY = 'lane';
const DELIVERY_PREFIX = 'dlv_';

/** The lane's table key: its own partition, one item. */
export const laneKeyOf = (lane: LaneKey) => ({
  webhookId: `${LANE_PREFIX}${lane.webhookId}#${lane.emailId}`,
  id: LANE_SORT_KEY,
});

/** An entry as stored: its sequence, or `{s, by}` while its row is still to come. */
const stored = (entry: LaneEntry) =>
  entry.rowBy === undefined ? entry.sequence : { s: entry.sequence, by: entry.rowBy };

function entryOf(deliveryId: string, value: unknown): LaneEntry | null {
  if (typeof value === 'number') return { deliveryId, sequence: value };
  const { s, by } = (value ?? {}) as { s?: unknown; by?: unknown };
  return typeof s === 'number' && typeof by === 'number' ? { deliveryId, sequence: s, rowBy: by } : null;
}

/** The entries of a stored lane item: its delivery-id attributes, by sequence then id. */
function entriesOf(item: Record<string, unknown> | undefined): LaneEntry[] {
  return Object.entries(item ?? {})
    .flatMap(([name, value]) => (name.startsWith(DELIVERY_PREFIX) ? [entryOf(name, value)] : []))
    .filter((entry): entry is LaneEntry => entry !== null)
    .sort((a, b) => a.sequence - b.sequence || (a.deliveryId < b.deliveryId ? -1 : 1));
}

export class DynamoOrderLanes implements OrderLanes {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async enter(lane: LaneKey, entry: LaneEntry, expiresAt: number): Promise<LaneEntry[]> {
    if (!entry.deliveryId.startsWith(DELIVERY_PREFIX)) throw new RangeError(`not a delivery id: ${entry.deliveryId}`);
    const { Attributes } = await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: laneKeyOf(lane),
        UpdateExpression: 'SET #d = :seq, expiresAt = :exp',
        ExpressionAttributeNames: { '#d': entry.deliveryId },
        ExpressionAttributeValues: { ':seq': stored(entry), ':exp': expiresAt },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return entriesOf(Attributes);
  }

  async read(lane: LaneKey): Promise<LaneEntry[]> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: laneKeyOf(lane), ConsistentRead: true }),
    );
    return entriesOf(Item);
  }

  async leave(lane: LaneKey, deliveryId: string): Promise<LaneEntry[]> {
    // Only an existing lane: a REMOVE on a missing item would create an empty one.
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: laneKeyOf(lane),
          UpdateExpression: 'REMOVE #d',
          ConditionExpression: 'attribute_exists(webhookId)',
          ExpressionAttributeNames: { '#d': deliveryId },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return entriesOf(written?.Attributes);
  }
}
