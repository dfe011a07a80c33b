// Sending domains in DynamoDB: by tenant, with a sparse index of pending ones for the reconciler.
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import type { Domain, DomainRepository, DomainStatus } from '../../app/domains/ports';
import type { Tenant } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import { conditionHeld, unlessConditionFails } from './operations';
import { TenantTable } from './tenant-table';

const STATUSES = ['pending', 'verified', 'failed'] as const;
const domainItem = z.object({
  id: z.string(),
  accountId: z.string(),
  mode: z.enum(MODES),
  name: z.string(),
  status: z.enum(STATUSES),
  records: z.array(z.object({ type: z.enum(['CNAME', 'TXT', 'MX']), name: z.string(), value: z.string() })),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** The partition of name claims: one item per domain name, naming the account that holds it. */
const NAME_CLAIMS = '#names';

const pendingMarks = (status: DomainStatus) => (status === 'pending' ? { pendingShard: 'pending' } : {});

export class DynamoDomainRepository implements DomainRepository {
  private readonly table: TenantTable<Domain>;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.table = new TenantTable(doc, tableName, (item) => domainItem.parse(item));
  }

  create(domain: Domain): Promise<boolean> {
    return this.table.create({ ...domain, ...pendingMarks(domain.status) });
  }

  get(tenant: Tenant, id: string): Promise<Domain | null> {
    return this.table.get(tenant, id);
  }

  list(tenant: Tenant): Promise<Domain[]> {
    return this.table.list(tenant);
  }

  async setStatus(
    tenant: Tenant,
    id: string,
    from: DomainStatus,
    to: DomainStatus,
    at: string,
  ): Promise<Domain | null> {
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.table.key(tenant, id),
          UpdateExpression:
            to === 'pending'
              ? 'SET #s = :to, updatedAt = :at, pendingShard = :p'
              : 'SET #s = :to, updatedAt = :at REMOVE pendingShard',
          ConditionExpression: '#s = :from',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: {
            ':to': to,
            ':from': from,
            ':at': at,
            ...(to === 'pending' ? { ':p': 'pending' } : {}),
          },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (written === null) return null;
    return domainItem.parse(written.Attributes);
  }

  delete(tenant: Tenant, id: string): Promise<boolean> {
    return this.table.delete(tenant, id);
  }

  async claimName(name: string, accountId: string): Promise<boolean> {
    return conditionHeld(
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { tenant: NAME_CLAIMS, id: name, accountId },
          ConditionExpression: 'attribute_not_exists(id) OR accountId = :a',
          ExpressionAttributeValues: { ':a': accountId },
        }),
      ),
    );
  }

  async releaseName(name: string, accountId: string): Promise<void> {
    await unlessConditionFails(
      this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { tenant: NAME_CLAIMS, id: name },
          ConditionExpression: 'accountId = :a',
          ExpressionAttributeValues: { ':a': accountId },
        }),
      ),
    );
  }

  async listPending(limit: number): Promise<Domain[]> {
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: 'byPending',
        KeyConditionExpression: 'pendingShard = :p',
        ExpressionAttributeValues: { ':p': 'pending' },
        Limit: limit,
      }),
    );
    return (Items ?? []).map((item) => domainItem.parse(item));
  }
}
