// Contacts in DynamoDB, by tenant; the id is derived from the address, so a second create collides.
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
import type { Contact, ContactChanges, ContactRepository } from '../../app/contacts/contacts';
import type { Tenant } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
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
    return (await this.conditional(put)) !== null;
  }

  async get(tenant: Tenant, id: string): Promise<Contact | null> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { tenant: tenantKey(tenant), id } }),
    );
    return Item ? contactItem.parse(Item) : null;
  }

  async list(tenant: Tenant): Promise<Contact[]> {
    const contacts: Contact[] = [];
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
      for (const item of page.Items ?? []) contacts.push(contactItem.parse(item));
      cursor = page.LastEvaluatedKey;
    } while (cursor);
    return contacts;
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
    return (await this.conditional(del)) !== null;
  }

  private async updated(command: UpdateCommand): Promise<Contact | null> {
    const attributes = await this.conditional(command);
    return attributes ? contactItem.parse(attributes) : null;
  }

  /** Runs a conditional write: the returned attributes (possibly empty), or null when the condition failed. */
  private async conditional(
    command: PutCommand | UpdateCommand | DeleteCommand,
  ): Promise<Record<string, unknown> | null> {
    try {
      const result = await this.doc.send(command as UpdateCommand);
      return result.Attributes ?? {};
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return null;
      throw error;
    }
  }
}
