// A tenant's emails newest first across the byTenant keys they are spread over: one tenant sending 1,000 emails a
// second writes 1,000 index entries a second, as much as one partition takes, so each email's entry goes under one
// of TENANT_SHARDS keys (`account#mode#n`, n from its id), and a listing merges them. Emails indexed before the
// shards keep the unsharded key (`account#mode`), read as one more key until they expire. Ids are time-ordered and
// unique, so an email id is a stable cursor across keys: each key resumes below it.
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Tenant } from '../../app/webhooks/ports';
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

interface KeyCursor {
  readonly key: string;
  /** Ids read and not yet handed out, newest first. */
  buffer: string[];
  /** Where the next Query of this key starts; undefined once it has nothing more. */
  start: Record<string, unknown> | undefined;
  done: boolean;
}

/** A merged, newest-first walk over a tenant's byTenant keys (older than `after` when given). */
export class TenantIndexWalk {
  private readonly keys: KeyCursor[];

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    tenant: Tenant,
    private readonly after?: string,
  ) {
    this.keys = tenantKeys(tenant).map((key) => ({ key, buffer: [], start: undefined, done: false }));
  }

  /**
   * The next `n` ids of all keys, newest first, and whether any is left after them (exact). Each key is read
   * until it holds n + 1 ids or has no more, so the n newest of all are among them and the extra one says
   * whether more follow; ids a key read beyond those handed out wait for the next call.
   */
  async next(n: number): Promise<{ ids: string[]; more: boolean }> {
    await Promise.all(this.keys.map((cursor) => this.fill(cursor, n + 1)));
    const ids: string[] = [];
    while (ids.length < n) {
      let newest: KeyCursor | undefined;
      for (const cursor of this.keys) {
        const head = cursor.buffer[0];
        if (head !== undefined && (newest === undefined || head > (newest.buffer[0] as string))) newest = cursor;
      }
      if (!newest) break;
      ids.push(newest.buffer.shift() as string);
    }
    return { ids, more: this.keys.some((cursor) => cursor.buffer.length > 0) };
  }

  private async fill(cursor: KeyCursor, want: number): Promise<void> {
    while (!cursor.done && cursor.buffer.length < want) {
      const limit = want - cursor.buffer.length;
      const page = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: 'byTenant',
          KeyConditionExpression: this.after ? 'tenant = :t AND id < :after' : 'tenant = :t',
          ExpressionAttributeValues: { ':t': cursor.key, ...(this.after ? { ':after': this.after } : {}) },
          ScanIndexForward: false,
          Limit: limit,
          ExclusiveStartKey: cursor.start,
        }),
      );
      const items = page.Items ?? [];
      cursor.buffer.push(...items.map((item) => String(item.id)));
      cursor.start = page.LastEvaluatedKey;
      // Fewer than asked, or no key to go on from: this key has nothing more.
      cursor.done = page.LastEvaluatedKey === undefined || items.length < limit;
    }
  }
}
