// Webhook endpoints in DynamoDB: partitioned by tenant (account + mode), so one Query is the dispatcher's
// whole fan-out lookup and another tenant's ids are simply not found.
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import type { Tenant, Webhook, WebhookChanges, WebhookRepository } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import { ConflictError } from '../../domain/errors';
import { EVENT_TYPES } from '../../domain/events';
import { FORMATS } from '../../domain/webhooks/format';
import { conditionHeld, queryAll, unlessConditionFails } from './operations';

const webhookItem = z.object({
  id: z.string(),
  accountId: z.string(),
  mode: z.enum(MODES),
  url: z.string(),
  events: z.array(z.enum(EVENT_TYPES)),
  format: z.enum(FORMATS),
  description: z.string().optional(),
  secret: z.string(),
  active: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const tenantKey = (tenant: Tenant) => `${tenant.accountId}#${tenant.mode}`;

export class DynamoWebhookRepository implements WebhookRepository {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(webhook: Webhook): Promise<void> {
    const written = await conditionHeld(
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { tenant: tenantKey(webhook), ...webhook },
          ConditionExpression: 'attribute_not_exists(id)',
        }),
      ),
    );
    if (!written) throw new ConflictError(`Webhook ${webhook.id} exists.`);
  }

  async get(tenant: Tenant, id: string): Promise<Webhook | null> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { tenant: tenantKey(tenant), id } }),
    );
    return Item ? webhookItem.parse(Item) : null;
  }

  async list(tenant: Tenant): Promise<Webhook[]> {
    const items = await queryAll(this.doc, {
      TableName: this.tableName,
      KeyConditionExpression: 'tenant = :t',
      ExpressionAttributeValues: { ':t': tenantKey(tenant) },
    });
    return items.map((item) => webhookItem.parse(item));
  }

  async update(tenant: Tenant, id: string, changes: WebhookChanges, updatedAt: string): Promise<Webhook | null> {
    const entries = [...Object.entries(changes).filter(([, v]) => v !== undefined), ['updatedAt', updatedAt]];
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { tenant: tenantKey(tenant), id },
          UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
          ExpressionAttributeNames: Object.fromEntries(entries.map(([name], i) => [`#f${i}`, name as string])),
          ExpressionAttributeValues: Object.fromEntries(entries.map(([, value], i) => [`:v${i}`, value])),
          ConditionExpression: 'attribute_exists(id)',
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (written === null) return null;
    return webhookItem.parse(written.Attributes);
  }

  async delete(tenant: Tenant, id: string): Promise<boolean> {
    return (
      (await unlessConditionFails(
        this.doc.send(
          new DeleteCommand({
            TableName: this.tableName,
            Key: { tenant: tenantKey(tenant), id },
            ConditionExpression: 'attribute_exists(id)',
          }),
        ),
      )) !== null
    );
  }
}
