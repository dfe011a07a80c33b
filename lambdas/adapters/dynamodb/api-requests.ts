// The API request log in the `apiRequests` table: one item per authenticated request, under its tenant and a
// shard (`account#mode#n`, n a hash of the id over 4) and a time-ordered id, expiring by TTL. Every request
// writes one, so a tenant at the scale plan's 500 requests a second (and a usage-plan burst past it: refused
// requests are logged too) would heat one partition key; over 4 each takes a quarter (docs/benchmarks.md,
// "Busiest partition keys"). A write is one PutItem of about 200 bytes (1 WRU); a read is one Query per shard,
// newest first, with Limit (up to 4 × 100 entries of ~200 bytes: about 12 RCU, eventually consistent), merged
// by id. It also reads the unsharded key earlier versions wrote (empty a day after the upgrade: 0.5 RCU).
import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { ApiRequestEntry, ApiRequestLog } from '../../app/api-requests/ports';
import { MODES, type Mode } from '../../domain/api-keys';
import { shardOf } from './shards';

/** Partition key values per tenant: under half a partition's 1,000 WCU/s even in a burst of 1,500 requests. */
export const API_REQUEST_SHARDS = 4;

const entry = z.object({
  accountId: z.string(),
  mode: z.enum(MODES),
  id: z.string(),
  method: z.string(),
  path: z.string(),
  status: z.number().int(),
  keyId: z.string(),
  at: z.number(),
  requestId: z.string(),
  durationMs: z.number(),
  userAgent: z.string().optional(),
  expiresAt: z.number(),
});

const tenantKey = (accountId: string, mode: Mode) => `${accountId}#${mode}`;

/** The partition key of a request's entry. */
export const apiRequestKey = (e: Pick<ApiRequestEntry, 'accountId' | 'mode' | 'id'>) =>
  `${tenantKey(e.accountId, e.mode)}#${shardOf(e.id, API_REQUEST_SHARDS)}`;

export class DynamoApiRequestLog implements ApiRequestLog {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async record(item: ApiRequestEntry): Promise<void> {
    await this.doc.send(new PutCommand({ TableName: this.tableName, Item: { tenant: apiRequestKey(item), ...item } }));
  }

  async get(accountId: string, mode: Mode, id: string, nowMs: number): Promise<ApiRequestEntry | null> {
    // Its shard's key, then (an entry of the day before the upgrade) the unsharded key earlier versions wrote.
    for (const tenant of [apiRequestKey({ accountId, mode, id }), tenantKey(accountId, mode)]) {
      const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: { tenant, id } }));
      if (Item) {
        const found = entry.parse(Item);
        return found.expiresAt > Math.floor(nowMs / 1000) ? found : null;
      }
    }
    return null;
  }

  async recent(
    accountId: string,
    mode: Mode,
    limit: number,
    nowMs: number,
    before?: string,
  ): Promise<ApiRequestEntry[]> {
    // TTL deletes lazily: expired items are filtered out (a filter still reads them, but they are at most a
    // day's tail, and Limit bounds the read).
    const tenant = tenantKey(accountId, mode);
    const keys = [tenant, ...Array.from({ length: API_REQUEST_SHARDS }, (_, n) => `${tenant}#${n}`)];
    const pages = await Promise.all(
      keys.map(async (key) => {
        const { Items = [] } = await this.doc.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: before ? 'tenant = :t AND id < :before' : 'tenant = :t',
            ExpressionAttributeValues: { ':t': key, ...(before ? { ':before': before } : {}) },
            ScanIndexForward: false,
            Limit: limit,
          }),
        );
        return Items.map((item) => entry.parse(item));
      }),
    );
    // Ids are time-ordered and unique: the newest `limit` of the shards' newest `limit` are the tenant's.
    const newest = pages
      .flat()
      .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
      .slice(0, limit);
    const now = Math.floor(nowMs / 1000);
    return newest.filter((e) => e.expiresAt > now);
  }
}
