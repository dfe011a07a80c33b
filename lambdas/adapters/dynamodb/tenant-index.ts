// A tenant's emails newest first across the byTenant keys they are spread over: one tenant sending 1,000 emails a
// second writes 1,000 index entries a second, as much as one partition takes, so each email's entry goes under one
// of TENANT_SHARDS keys (`account#mode#n`, n from its id), and a listing merges them. Emails indexed before the
// shards keep the unsharded key (`account#mode`), read as one more key until they expire. Ids are time-ordered and
// unique, so an email id is a stable cursor across keys: each key resumes below it (ShardMerge merges them).
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Tenant } from '../../app/webhooks/ports';
import { ShardMerge } from './shard-merge';
import { shardOf } from './shards';
import { tenantKey } from './tenant-table';

/** byTenant keys per tenant and mode: 1,000 emails a second put 250 entry writes a second on each. */
export const TENANT_SHARDS = 4;

/** The byTenant key of one email: its tenant and its shard. */
export const tenantShardKey = (tenant: Tenant, emailId: string) =>
  `${tenantKey(tenant)}#${shardOf(emailId, TENANT_SHARDS)}`;

/** Every byTenant key a tenant's emails may be under, the unsharded one (emails indexed before the shards) first. */
export const tenantKeys = (tenant: Tenant): string[] => [
  tenantKey(tenant),
  ...Array.from({ length: TENANT_SHARDS }, (_, n) => `${tenantKey(tenant)}#${n}`),
];

/** The most entries one Query of a key reads (keys only: small entries). */
const MAX_PAGE = 1000;

/**
 * A merged, newest-first walk over a tenant's byTenant keys (older than `after` when given; at or after `from`
 * when given: a time window's lower end, a key condition, so nothing older is read).
 */
export class TenantIndexWalk {
  private readonly merge: ShardMerge;
  private readonly empty: boolean;
  private readonly skip: string | undefined;

  constructor(
    doc: DynamoDBDocumentClient,
    tableName: string,
    tenant: Tenant,
    after: string | undefined,
    expected: number,
    from?: string,
  ) {
    this.empty = after !== undefined && from !== undefined && after <= from;
    this.skip = from !== undefined ? after : undefined;
    this.merge = new ShardMerge(doc, {
      queries: tenantKeys(tenant).map((key) => ({
        TableName: tableName,
        IndexName: 'byTenant',
        ...keyCondition(key, after, from),
        ScanIndexForward: false,
      })),
      sortKey: 'id',
      descending: true,
      expected,
      maxPage: MAX_PAGE,
    });
  }

  /** The next `n` ids of all keys, newest first, and whether any is left after them (exact). */
  async next(n: number): Promise<{ ids: string[]; more: boolean }> {
    if (this.empty) return { ids: [], more: false };
    const ids: string[] = [];
    while (ids.length < n) {
      const entry = await this.merge.next();
      if (!entry) break;
      if (entry.id !== this.skip) ids.push(String(entry.id));
    }
    return { ids, more: await this.merge.hasMore() };
  }
}

/**
 * One key's condition: below `after`, at or above `from`. With both, BETWEEN `from` AND `after` (inclusive: the
 * walk skips `after` itself, the first entry it could meet, as the merge is newest first).
 */
function keyCondition(key: string, after: string | undefined, from: string | undefined) {
  if (from === undefined)
    return {
      KeyConditionExpression: after ? 'tenant = :t AND id < :after' : 'tenant = :t',
      ExpressionAttributeValues: { ':t': key, ...(after ? { ':after': after } : {}) },
    };
  if (after === undefined)
    return {
      KeyConditionExpression: 'tenant = :t AND id >= :from',
      ExpressionAttributeValues: { ':t': key, ':from': from },
    };
  return {
    KeyConditionExpression: 'tenant = :t AND id BETWEEN :from AND :after',
    ExpressionAttributeValues: { ':t': key, ':from': from, ':after': after },
  };
}
