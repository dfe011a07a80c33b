// Contacts in DynamoDB, by tenant; the id is derived from the address, so a second create collides.
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import type { Contact, ContactChanges, ContactRepository } from '../../app/contacts/contacts';
import type { Tenant } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import { conditionHeld, queryAll, unlessConditionFails } from './operations';
import { tenantKey } from './webhooks';

const contactItem = z.object({
  id: z.string(),
  accountId: z.string(),
  mode: z.enum(MODES),
  email: z.string(),
  firstName: z.string().optional(),
  lastName: z.string().optional(),
  status: z.enum(['pending', 'subscribed']),
  createdAt: z.string(),
  updatedAt: z.string(),
  subscribedAt: z.string().optional(),
});

export class DynamoContactRepository implements ContactRepository {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(contact: Contact): Promise<boolean> {
    const put = new PutCommand({
      TableName: this.tableName,
      Item: { tenant: tenantKey(contact), ...contact },
      ConditionExpression: 'attribute_not_exists(id)',
    });
    return conditionHeld(this.doc.send(put));
  }

  async get(tenant: Tenant, id: string): Promise<Contact | null> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { tenant: tenantKey(tenant), id } }),
    );
    return Item ? contactItem.parse(Item) : null;
  }

  async list(tenant: Tenant): Promise<Contact[]> {
    const items = await queryAll(this.doc, {
      TableName: this.tableName,
      KeyConditionExpression: 'tenant = :t',
      ExpressionAttributeValues: { ':t': tenantKey(tenant) },
    });
    return items.map((item) => contactItem.parse(item));
  }

  async update(tenant: Tenant, id: string, changes: ContactChanges, at: string): Promise<Contact | null> {
    const set: string[] = ['updatedAt = :at'];
    const remove: string[] = [];
    const values: Record<string, unknown> = { ':at': at };
    for (const field of ['firstName', 'lastName'] as const) {
      const value = changes[field];
      if (value === undefined) continue;
      if (value === null) remove.push(field);
      else {
        set.push(`${field} = :${field}`);
        values[`:${field}`] = value;
      }
    }
    return this.updated(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { tenant: tenantKey(tenant), id },
        UpdateExpression: `SET ${set.join(', ')}${remove.length ? ` REMOVE ${remove.join(', ')}` : ''}`,
        ConditionExpression: 'attribute_exists(id)',
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
  }

  async subscribe(tenant: Tenant, id: string, at: string): Promise<Contact | null> {
    return this.updated(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { tenant: tenantKey(tenant), id },
        UpdateExpression: 'SET #s = :subscribed, subscribedAt = :at, updatedAt = :at',
        ConditionExpression: '#s = :pending',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':subscribed': 'subscribed', ':pending': 'pending', ':at': at },
        ReturnValues: 'ALL_NEW',
      }),
    );
  }

  async delete(tenant: Tenant, id: string): Promise<boolean> {
    const del = new DeleteCommand({
      TableName: this.tableName,
      Key: { tenant: tenantKey(tenant), id },
      ConditionExpression: 'attribute_exists(id)',
    });
    return conditionHeld(this.doc.send(del));
  }

  private async updated(command: UpdateCommand): Promise<Contact | null> {
    const written = await unlessConditionFails(this.doc.send(command));
    return written ? contactItem.parse(written.Attributes) : null;
  }
}
