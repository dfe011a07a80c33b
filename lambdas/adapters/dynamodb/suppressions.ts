// The suppression list in DynamoDB: one item per (account and mode, address). Adding is a conditional Put,
// so the first reason wins and a repeat says "already there"; checking a send is one BatchGetItem.
import { BatchGetCommand, type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Suppression, SuppressionList } from '../../app/emails/ports';
import type { Tenant } from '../../app/webhooks/ports';
import { unlessConditionFails } from './operations';
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
    const found = new Map<string, Suppression>();
    const unique = [...new Set(addresses)];
    for (let i = 0; i < unique.length; i += 100) {
      let keys: Record<string, unknown>[] | undefined = unique
        .slice(i, i + 100)
        .map((address) => ({ tenant: tenantKey(tenant), address }));
      for (let round = 0; keys?.length; round++) {
        if (round > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** round)));
        const result = await this.doc.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: keys } } }));
        for (const item of result.Responses?.[this.tableName] ?? []) {
          found.set(
            item.address as string,
            {
              address: item.address,
              reason: item.reason,
              createdAt: item.createdAt,
              ...(item.emailId ? { emailId: item.emailId } : {}),
            } as Suppression,
          );
        }
        keys = result.UnprocessedKeys?.[this.tableName]?.Keys as Record<string, unknown>[] | undefined;
        if (round > 8 && keys?.length) throw new Error('DynamoDB kept keys unprocessed');
      }
    }
    return found;
  }
}
