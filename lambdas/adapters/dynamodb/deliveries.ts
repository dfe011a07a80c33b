// Deliveries in DynamoDB. Partition by webhook, sort by the time-ordered delivery id: newest-first listing
// and `after` cursors fall out of the key. Two sparse indexes: byStatus (the log's status filter) and byDue
// (pending deliveries by next attempt, for the reconciler). Every state change is conditional on the claim.
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { Claim, Delivery, DeliveryPage, DeliveryRepository, DueDelivery } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../domain/webhooks/delivery';
import { FORMATS } from '../../domain/webhooks/format';
import { conditionHeld, unlessConditionFails } from './operations';

const DUE_SHARD = 'due';

const deliveryItem = z.object({
  id: z.string(),
  webhookId: z.string(),
  accountId: z.string(),
  mode: z.enum(MODES),
  eventId: z.string(),
  event: z.string(),
  format: z.enum(FORMATS),
  payload: z.string(),
  status: z.enum(DELIVERY_STATUSES as [DeliveryStatus, ...DeliveryStatus[]]),
  attempts: z.number().int(),
  maxAttempts: z.number().int(),
  attemptLog: z.array(
    z.object({
      at: z.number(),
      statusCode: z.number().nullable(),
      durationMs: z.number(),
      error: z.string().nullable(),
    }),
  ),
  response: z.string(),
  nextAttemptAt: z.number().nullable(),
  deliveredAt: z.number().nullable(),
  createdAt: z.number(),
  claim: z.object({ attempt: z.number().int(), until: z.number(), epoch: z.number().optional() }).optional(),
  claimedAt: z.number().optional(),
  expiresAt: z.number().optional(),
});

const parse = (item: Record<string, unknown>): Delivery => deliveryItem.parse(item);

/** Zero-padded epoch ms: the byDue sort key, a string that orders like the number. */
const dueKey = (ms: number) => String(Math.max(0, Math.floor(ms))).padStart(15, '0');

function toItem(delivery: Delivery): Record<string, unknown> {
  const pending = delivery.status === 'pending' && delivery.nextAttemptAt !== null;
  return {
    ...delivery,
    statusKey: `${delivery.webhookId}#${delivery.status}`,
    ...(pending ? { dueShard: DUE_SHARD, dueAt: dueKey(delivery.nextAttemptAt as number) } : {}),
  };
}

export class DynamoDeliveryRepository implements DeliveryRepository {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async createClaimed(delivery: Delivery): Promise<boolean> {
    return this.conditional(
      new PutCommand({
        TableName: this.tableName,
        Item: toItem(delivery),
        ConditionExpression: 'attribute_not_exists(id)',
      }),
    );
  }

  async claim(
    webhookId: string,
    id: string,
    expect: { attemptsBefore: number; statuses: readonly DeliveryStatus[]; nowMs: number; claimedBefore?: number },
    claim: Claim,
  ): Promise<Delivery | null> {
    const statuses = Object.fromEntries(expect.statuses.map((status, i) => [`:s${i}`, status]));
    const since = expect.claimedBefore;
    // Single-flight manual retries: nobody claimed an attempt since the request arrived.
    const notSince = since === undefined ? '' : ' AND (attribute_not_exists(claimedAt) OR claimedAt < :since)';
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { webhookId, id },
          UpdateExpression: 'SET #claim = :claim, claimedAt = :now',
          ConditionExpression: `attempts = :before AND #status IN (${Object.keys(statuses).join(', ')}) AND (attribute_not_exists(#claim) OR #claim.#until < :now OR #claim.#epoch < :epoch)${notSince}`,
          ExpressionAttributeNames: { '#claim': 'claim', '#status': 'status', '#until': 'until', '#epoch': 'epoch' },
          ExpressionAttributeValues: {
            ':claim': claim,
            ':before': expect.attemptsBefore,
            ':now': expect.nowMs,
            ':epoch': claim.epoch ?? 0,
            ...(since === undefined ? {} : { ':since': since }),
            ...statuses,
          },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (written === null) return null;
    return written.Attributes ? parse(written.Attributes) : null;
  }

  async record(delivery: Delivery, claimedAttempt: number): Promise<boolean> {
    return this.conditional(
      new PutCommand({
        TableName: this.tableName,
        Item: toItem(delivery),
        ConditionExpression: '#claim.#attempt = :n',
        ExpressionAttributeNames: { '#claim': 'claim', '#attempt': 'attempt' },
        ExpressionAttributeValues: { ':n': claimedAttempt },
      }),
    );
  }

  async get(webhookId: string, id: string, nowMs: number): Promise<Delivery | null> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: { webhookId, id } }));
    if (!Item) return null;
    const delivery = parse(Item);
    return live(delivery, nowMs) ? delivery : null;
  }

  async list(
    webhookId: string,
    query: { status?: DeliveryStatus; limit: number; after?: string },
    nowMs: number,
  ): Promise<DeliveryPage> {
    const byStatus = query.status !== undefined;
    const partition = byStatus ? `${webhookId}#${query.status}` : webhookId;
    let cursor: Record<string, unknown> | undefined = query.after
      ? { webhookId, id: query.after, ...(byStatus ? { statusKey: partition } : {}) }
      : undefined;
    const items: Delivery[] = [];
    do {
      const page = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          ...(byStatus ? { IndexName: 'byStatus' } : {}),
          KeyConditionExpression: `${byStatus ? 'statusKey' : 'webhookId'} = :p`,
          FilterExpression: 'attribute_not_exists(expiresAt) OR expiresAt > :now',
          ExpressionAttributeValues: { ':p': partition, ':now': Math.floor(nowMs / 1000) },
          ScanIndexForward: false,
          Limit: query.limit + 1 - items.length,
          ExclusiveStartKey: cursor,
        }),
      );
      for (const item of page.Items ?? []) items.push(parse(item));
      cursor = page.LastEvaluatedKey;
    } while (cursor && items.length <= query.limit);
    return { items: items.slice(0, query.limit), hasMore: items.length > query.limit };
  }

  async listDue(dueBefore: number, limit: number, after?: DueDelivery) {
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: 'byDue',
        KeyConditionExpression: 'dueShard = :d AND dueAt <= :before',
        ExpressionAttributeValues: { ':d': DUE_SHARD, ':before': dueKey(Math.min(dueBefore, 1e15 - 1)) },
        Limit: limit,
        ...(after
          ? {
              ExclusiveStartKey: {
                dueShard: DUE_SHARD,
                dueAt: dueKey(after.nextAttemptAt ?? 0),
                webhookId: after.webhookId,
                id: after.id,
              },
            }
          : {}),
      }),
    );
    return (Items ?? []).map((item) => {
      const { id, webhookId, attempts, nextAttemptAt } = parse(item);
      return { id, webhookId, attempts, nextAttemptAt };
    });
  }

  private async conditional(command: PutCommand): Promise<boolean> {
    return conditionHeld(this.doc.send(command));
  }
}

function live(delivery: Delivery, nowMs: number): boolean {
  return delivery.expiresAt === undefined || delivery.expiresAt > Math.floor(nowMs / 1000);
}
