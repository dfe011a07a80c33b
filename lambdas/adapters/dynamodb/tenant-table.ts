// A table partitioned by tenant (account and mode) and keyed by id: webhooks, domains, contacts. Another
// tenant's id is simply not found, and one Query lists a tenant's items.
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Tenant } from '../../app/webhooks/ports';
import { batchGetAll, conditionHeld, queryAll } from './operations';

export const tenantKey = (tenant: Tenant) => `${tenant.accountId}#${tenant.mode}`;

export class TenantTable<T> {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly tableName: string,
    private readonly parse: (item: Record<string, unknown>) => T,
  ) {}

  key(tenant: Tenant, id: string): { tenant: string; id: string } {
    return { tenant: tenantKey(tenant), id };
  }

  /** Stores a new item (extra attributes allowed); false when its id exists in the tenant. */
  create(item: Tenant & { readonly id: string }): Promise<boolean> {
    return conditionHeld(
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { tenant: tenantKey(item), ...item },
          ConditionExpression: 'attribute_not_exists(id)',
        }),
      ),
    );
  }

  /** `consistent`: a strongly consistent read (what the last write left, not a replica's older copy). */
  async get(tenant: Tenant, id: string, options: { readonly consistent?: boolean } = {}): Promise<T | null> {
    const { Item } = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: this.key(tenant, id),
        ...(options.consistent ? { ConsistentRead: true } : {}),
      }),
    );
    return Item ? this.parse(Item) : null;
  }

  /** The items found under these (tenant, id) pairs, in no particular order; missing ones are left out. */
  async getMany(refs: readonly (Tenant & { readonly id: string })[]): Promise<T[]> {
    const items = await batchGetAll(
      this.doc,
      this.tableName,
      refs.map((ref) => this.key(ref, ref.id)),
    );
    return items.map((item) => this.parse(item));
  }

  /**
   * Every item of the tenant, across pages, in id order. Strongly consistent: a limit check sees every item
   * created before it (concurrent creations included), and the dispatcher a webhook created a moment ago.
   */
  async list(tenant: Tenant): Promise<T[]> {
    const items = await queryAll(this.doc, {
      TableName: this.tableName,
      ConsistentRead: true,
      KeyConditionExpression: 'tenant = :t',
      ExpressionAttributeValues: { ':t': tenantKey(tenant) },
    });
    return items.map((item) => this.parse(item));
  }

  /** False when there was no such item. */
  delete(tenant: Tenant, id: string): Promise<boolean> {
    return conditionHeld(
      this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: this.key(tenant, id),
          ConditionExpression: 'attribute_exists(id)',
        }),
      ),
    );
  }
}
