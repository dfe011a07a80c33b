// Contacts in DynamoDB, by tenant; the id is derived from the address, so a second create collides.
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import type { Contact, ContactChanges, ContactRepository } from '../../app/contacts/contacts';
import type { Tenant } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import { unlessConditionFails } from './operations';
import { TenantTable } from './tenant-table';

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
  private readonly table: TenantTable<Contact>;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.table = new TenantTable(doc, tableName, (item) => contactItem.parse(item));
  }

  create(contact: Contact): Promise<boolean> {
    return this.table.create(contact);
  }

  get(tenant: Tenant, id: string): Promise<Contact | null> {
    return this.table.get(tenant, id);
  }

  list(tenant: Tenant): Promise<Contact[]> {
    return this.table.list(tenant);
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
        Key: this.table.key(tenant, id),
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
        Key: this.table.key(tenant, id),
        UpdateExpression: 'SET #s = :subscribed, subscribedAt = :at, updatedAt = :at',
        ConditionExpression: '#s = :pending',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':subscribed': 'subscribed', ':pending': 'pending', ':at': at },
        ReturnValues: 'ALL_NEW',
      }),
    );
  }

  delete(tenant: Tenant, id: string): Promise<boolean> {
    return this.table.delete(tenant, id);
  }

  private async updated(command: UpdateCommand): Promise<Contact | null> {
    const written = await unlessConditionFails(this.doc.send(command));
    return written ? contactItem.parse(written.Attributes) : null;
  }
}
