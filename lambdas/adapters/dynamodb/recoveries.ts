// Recovery jobs in DynamoDB: in the deliveries table, under the webhook's partition with `rec_` ids (its
// deliveries are `dlv_`), so a job lives and expires next to the log it replays, and needs no table of its own.
// Each step's progress is one conditional write on the step number: a duplicated or late step changes nothing.
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { Claim, Recovery, RecoveryRepository } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import { conditionHeld, unlessConditionFails } from './operations';

const recoveryItem = z.object({
  id: z.string().startsWith('rec_'),
  webhookId: z.string(),
  accountId: z.string(),
  mode: z.enum(MODES),
  status: z.enum(['running', 'completed', 'canceled']),
  since: z.number(),
  until: z.number(),
  onlyFailed: z.boolean(),
  total: z.number().int(),
  succeeded: z.number().int(),
  failed: z.number().int(),
  skipped: z.number().int(),
  step: z.number().int(),
  cursor: z.string().nullable(),
  createdAt: z.number(),
  updatedAt: z.number(),
  expiresAt: z.number(),
  lease: z.object({ attempt: z.number().int(), until: z.number(), epoch: z.number().optional() }).optional(),
  queuedStep: z.number().int().optional(),
});

const parse = (item: Record<string, unknown>): Recovery => recoveryItem.parse(item);
const live = (recovery: Recovery, nowMs: number) => recovery.expiresAt > Math.floor(nowMs / 1000);
const running = { '#status': 'status', '#step': 'step' };

export class DynamoRecoveryRepository implements RecoveryRepository {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(recovery: Recovery): Promise<void> {
    await this.doc.send(
      new PutCommand({ TableName: this.tableName, Item: recovery, ConditionExpression: 'attribute_not_exists(id)' }),
    );
  }

  async get(webhookId: string, id: string, nowMs: number): Promise<Recovery | null> {
    if (!id.startsWith('rec_')) return null;
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: { webhookId, id } }));
    if (!Item) return null;
    const recovery = parse(Item);
    return live(recovery, nowMs) ? recovery : null;
  }

  async list(webhookId: string, nowMs: number, limit: number): Promise<Recovery[]> {
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'webhookId = :p AND begins_with(id, :rec)',
        FilterExpression: 'expiresAt > :now',
        ExpressionAttributeValues: { ':p': webhookId, ':rec': 'rec_', ':now': Math.floor(nowMs / 1000) },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return (Items ?? []).map(parse);
  }

  async lease(webhookId: string, id: string, step: number, lease: Claim, nowMs: number): Promise<Recovery | null> {
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { webhookId, id },
          UpdateExpression: 'SET #lease = :lease',
          ConditionExpression:
            '#status = :running AND #step = :step AND (attribute_not_exists(#lease) OR #lease.#until < :now OR #lease.#epoch < :epoch)',
          ExpressionAttributeNames: { ...running, '#lease': 'lease', '#until': 'until', '#epoch': 'epoch' },
          ExpressionAttributeValues: {
            ':lease': lease,
            ':running': 'running',
            ':step': step,
            ':now': nowMs,
            ':epoch': lease.epoch ?? 0,
          },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return written?.Attributes ? parse(written.Attributes) : null;
  }

  advance(next: Recovery, step: number): Promise<boolean> {
    const { lease: _released, ...item } = next;
    return conditionHeld(
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: '#status = :running AND #step = :step',
          ExpressionAttributeNames: running,
          ExpressionAttributeValues: { ':running': 'running', ':step': step },
        }),
      ),
    );
  }

  async markQueued(webhookId: string, id: string, step: number): Promise<void> {
    await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { webhookId, id },
          UpdateExpression: 'SET queuedStep = :step',
          ConditionExpression: '#status = :running AND #step = :step',
          ExpressionAttributeNames: running,
          ExpressionAttributeValues: { ':running': 'running', ':step': step },
        }),
      ),
    );
  }

  async cancel(webhookId: string, id: string, nowMs: number, expiresAt: number): Promise<Recovery | null> {
    if (!id.startsWith('rec_')) return null;
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { webhookId, id },
          UpdateExpression: 'SET #status = :canceled, updatedAt = :now, expiresAt = :expires',
          ConditionExpression: '#status = :running',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':canceled': 'canceled',
            ':running': 'running',
            ':now': nowMs,
            ':expires': expiresAt,
          },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (written?.Attributes) return parse(written.Attributes);
    return this.get(webhookId, id, nowMs);
  }
}
