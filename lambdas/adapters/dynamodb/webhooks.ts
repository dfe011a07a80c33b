// Webhook endpoints in DynamoDB: partitioned by tenant (account + mode), so one Query is the dispatcher's
// whole fan-out lookup and another tenant's ids are simply not found.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import type { Tenant, Webhook, WebhookChanges, WebhookRepository } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import { ConflictError } from '../../domain/errors';
import { EVENT_TYPES } from '../../domain/events';
import { FORMATS } from '../../domain/webhooks/format';

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
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { tenant: tenantKey(webhook), ...webhook },
          ConditionExpression: 'attribute_not_exists(id)',
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new ConflictError(`Webhook ${webhook.id} exists.`);
      throw error;
    }
  }

  async get(tenant: Tenant, id: string): Promise<Webhook | null> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { tenant: tenantKey(tenant), id } }),
    );
    return Item ? webhookItem.parse(Item) : null;
  }

  async list(tenant: Tenant): Promise<Webhook[]> {
    const webhooks: Webhook[] = [];
    let cursor: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'tenant = :t',
          ExpressionAttributeValues: { ':t': tenantKey(tenant) },
          ExclusiveStartKey: cursor,
        }),
      );
      for (const item of page.Items ?? []) webhooks.push(webhookItem.parse(item));
      cursor = page.LastEvaluatedKey;
    } while (cursor);
    return webhooks;
  }

  async update(tenant: Tenant, id: string, changes: WebhookChanges, updatedAt: string): Promise<Webhook | null> {
    const entries = [...Object.entries(changes).filter(([, v]) => v !== undefined), ['updatedAt', updatedAt]];
    try {
      const { Attributes } = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { tenant: tenantKey(tenant), id },
          UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
          ExpressionAttributeNames: Object.fromEntries(entries.map(([name], i) => [`#f${i}`, name as string])),
          ExpressionAttributeValues: Object.fromEntries(entries.map(([, value], i) => [`:v${i}`, value])),
          ConditionExpression: 'attribute_exists(id)',
          ReturnValues: 'ALL_NEW',
        }),
      );
      return webhookItem.parse(Attributes);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return null;
      throw error;
    }
  }

  async delete(tenant: Tenant, id: string): Promise<boolean> {
    try {
      await this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { tenant: tenantKey(tenant), id },
          ConditionExpression: 'attribute_exists(id)',
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}
