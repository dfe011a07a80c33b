// The suppression list in DynamoDB: one item per (account and mode, address). Adding is a conditional Put,
// so the first reason wins and a repeat says "already there"; checking a send is one BatchGetItem.
import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Suppression, SuppressionList } from '../../app/emails/ports';
import type { Tenant } from '../../app/webhooks/ports';
import { batchGetAll, unlessConditionFails } from './operations';
import { tenantKey } from './tenant-table';

export class DynamoSuppressionList implements SuppressionList {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

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
