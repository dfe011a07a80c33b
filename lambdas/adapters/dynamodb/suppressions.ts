// The suppression list in DynamoDB: one item per (account and mode, address). Adding is a conditional Put,
// so the first reason wins and a repeat says "already there"; checking a send is one BatchGetItem. A one-click
// unsubscribe is one conditional UpdateItem that suppresses, notes the email in `unsubscribedEmails` and records
// email.unsubscribed in the item's outbox, so the event is recorded once per email and address, with the change.
import { type DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Suppression, SuppressionList } from '../../app/emails/ports';
import type { PendingEvents } from '../../app/outbox';
import type { Tenant } from '../../app/webhooks/ports';
import type { SendflowEvent } from '../../domain/events';
import { batchGetAll, conditionHeld, unlessConditionFails } from './operations';
import { DynamoOutbox, recordEvents, updateExpression } from './outbox';
import { tenantKey } from './tenant-table';

export class DynamoSuppressionList implements SuppressionList {
  readonly outbox: DynamoOutbox;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.outbox = new DynamoOutbox(doc, tableName, ['tenant', 'address']);
  }

  async unsubscribe(
    tenant: Tenant,
    suppression: Suppression & { readonly emailId: string },
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null> {
    const Key = { tenant: tenantKey(tenant), address: suppression.address };
    const first = {
      set: ['reason = if_not_exists(reason, :r)', 'createdAt = if_not_exists(createdAt, :c)'],
      add: ['unsubscribedEmails :emails'],
      values: {
        ':r': suppression.reason,
        ':c': suppression.createdAt,
        ':emails': new Set([suppression.emailId]),
        ':e': suppression.emailId,
      },
    };
    const written = await conditionHeld(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key,
          // The first reason (and the email that caused it) stays.
          ...updateExpression(first, { set: ['emailId = if_not_exists(emailId, :e)'] }, recordEvents(events)),
          ConditionExpression: 'NOT contains(unsubscribedEmails, :e)',
        }),
      ),
    );
    return written ? this.outbox.pending(Key, events) : null;
  }

  async add(tenant: Tenant, suppression: Suppression): Promise<boolean> {
    return (
      (await unlessConditionFails(
        this.doc.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { tenant: tenantKey(tenant), ...suppression },
            ConditionExpression: 'attribute_not_exists(address)',
          }),
        ),
      )) !== null
    );
  }

  async find(tenant: Tenant, addresses: readonly string[]): Promise<Map<string, Suppression>> {
    const keys = addresses.map((address) => ({ tenant: tenantKey(tenant), address }));
    const items = await batchGetAll(this.doc, this.tableName, keys);
    return new Map(
      items.map((item) => [
        item.address as string,
        {
          address: item.address,
          reason: item.reason,
          createdAt: item.createdAt,
          ...(item.emailId ? { emailId: item.emailId } : {}),
        } as Suppression,
      ]),
    );
  }
}
