// The API request log in the `apiRequests` table: one item per authenticated request, under its tenant and a
// shard (`account#mode#n`, n a hash of the id over 4) and a time-ordered id, expiring by TTL. Every request
// writes one, so a tenant at the scale plan's 500 requests a second (and a usage-plan burst past it: refused
// requests are logged too) would heat one partition key; over 4 each takes a quarter (docs/benchmarks.md,
// "Busiest partition keys"). A 4xx or 5xx also writes a small copy of its row (no bodies) under its status
// class's keys (`account#mode#4xx#n`, `…#5xx#n`, same shard): the status filter reads only those, not every
// request. Other filters (method, route, key, a status within 2xx) are FilterExpressions on a Query of the
// time-ordered keys, reading at most SEARCH_READS entries per key and page (docs/dashboard.md, "API request
// log"). It also reads the unsharded key earlier versions wrote (empty a day after the upgrade: 0.5 RCU).
// Earlier releases read the items this one writes: their zod schema ignores the new optional attributes
// (route, query, bodies), and they never query the status-class keys.
import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { ApiRequestEntry, ApiRequestFilter, ApiRequestLog, ApiRequestPage } from '../../app/api-requests/ports';
import { MODES, type Mode } from '../../domain/api-keys';
import { idTime } from '../../domain/ids';
import { shardOf } from './shards';

/** Partition key values per tenant: under half a partition's 1,000 WCU/s even in a burst of 1,500 requests. */
export const API_REQUEST_SHARDS = 4;
/** The most entries one page of a filtered search reads per key (its Query's Limit). */
export const SEARCH_READS = 100;

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
  route: z.string().optional(),
  query: z.string().optional(),
  requestBody: z.string().optional(),
  responseBody: z.string().optional(),
  expiresAt: z.number(),
});

const tenantKey = (accountId: string, mode: Mode) => `${accountId}#${mode}`;

/** The partition key of a request's entry. */
export const apiRequestKey = (e: Pick<ApiRequestEntry, 'accountId' | 'mode' | 'id'>) =>
  `${tenantKey(e.accountId, e.mode)}#${shardOf(e.id, API_REQUEST_SHARDS)}`;

/** The status classes with an index of their own: failures, what a person looks for among many successes. */
const INDEXED_CLASSES = [4, 5] as const;
const classOf = (status: number) => INDEXED_CLASSES.find((c) => Math.floor(status / 100) === c);

/** The partition key of a failed request's copy in its status class's index (`acct#mode#4xx#n`). */
export const apiRequestClassKey = (e: Pick<ApiRequestEntry, 'accountId' | 'mode' | 'id' | 'status'>) =>
  `${tenantKey(e.accountId, e.mode)}#${classOf(e.status)}xx#${shardOf(e.id, API_REQUEST_SHARDS)}`;

/** An entry as a list shows it: without its query and bodies (GET /v1/logs/:id reads them). */
function rowOf(e: ApiRequestEntry): ApiRequestEntry {
  const { requestBody: _request, responseBody: _response, query: _query, ...row } = e;
  return row;
}

const shards = (base: string) => Array.from({ length: API_REQUEST_SHARDS }, (_, n) => `${base}#${n}`);

export class DynamoApiRequestLog implements ApiRequestLog {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** Entries a filtered page reads per key at most (tests lower it to reach the bound). */
    private readonly searchReads = SEARCH_READS,
  ) {}

  async record(item: ApiRequestEntry): Promise<void> {
    const put = (Item: Record<string, unknown>) => this.doc.send(new PutCommand({ TableName: this.tableName, Item }));
    const writes = [put({ tenant: apiRequestKey(item), ...item })];
    if (classOf(item.status)) {
      writes.push(put({ tenant: apiRequestClassKey(item), ...rowOf(item) }));
    }
    await Promise.all(writes);
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
    return (await this.search(accountId, mode, {}, limit, nowMs, before)).entries;
  }

  async search(
    accountId: string,
    mode: Mode,
    filter: ApiRequestFilter,
    limit: number,
    nowMs: number,
    before?: string,
  ): Promise<ApiRequestPage> {
    const tenant = tenantKey(accountId, mode);
    // A status range inside one indexed class reads that class's keys; anything else the time-ordered keys.
    const [low, high] = filter.status ?? [0, 999];
    const indexed = classOf(low) !== undefined && classOf(low) === classOf(high) ? classOf(low) : undefined;
    const keys = indexed ? shards(`${tenant}#${indexed}xx`) : [tenant, ...shards(tenant)];
    const conditions: string[] = ['expiresAt > :now'];
    const values: Record<string, unknown> = { ':now': Math.floor(nowMs / 1000) };
    const names: Record<string, string> = {};
    const equal = (attribute: string, value: string | undefined) => {
      if (value === undefined) return;
      names[`#${attribute}`] = attribute;
      values[`:${attribute}`] = value;
      conditions.push(`#${attribute} = :${attribute}`);
    };
    if (filter.status && (!indexed || low !== indexed * 100 || high !== indexed * 100 + 99)) {
      names['#status'] = 'status';
      Object.assign(values, { ':low': low, ':high': high });
      conditions.push('#status BETWEEN :low AND :high');
    }
    equal('method', filter.method);
    equal('route', filter.route);
    equal('keyId', filter.keyId);
    // Ids are time-ordered: a time range and the cursor are a range of the sort key, read newest first.
    const from = filter.since !== undefined ? `req_${idTime(Math.max(0, filter.since))}` : 'req_';
    const untilId = filter.until !== undefined ? `req_${idTime(Math.max(0, filter.until))}` : 'req_~';
    const to = before !== undefined && before < untilId ? before : untilId;
    // Without conditions beyond expiry every entry read is shown: limit + 1 per key is enough.
    const reads = conditions.length > 1 ? Math.max(this.searchReads, limit + 1) : limit + 1;
    const pages = await Promise.all(
      keys.map(async (key) => {
        const { Items = [], LastEvaluatedKey } = await this.doc.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: 'tenant = :t AND id BETWEEN :from AND :to',
            FilterExpression: conditions.join(' AND '),
            ExpressionAttributeValues: { ':t': key, ':from': from, ':to': to, ...values },
            ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
            ScanIndexForward: false,
            Limit: reads,
          }),
        );
        return {
          items: Items.map((item) => rowOf(entry.parse(item))),
          last: LastEvaluatedKey?.id as string | undefined,
        };
      }),
    );
    // Every key was read down to its `last` (or to its end): entries at or after the newest `last` are all
    // known, older ones not yet. The page is the known matches, newest first; the next starts where it stops.
    const horizon = pages.reduce<string | undefined>((h, p) => (p.last && (!h || p.last > h) ? p.last : h), undefined);
    const known = pages
      .flatMap((p) => p.items)
      .filter((e) => e.id < to && (!horizon || e.id >= horizon) && e.id >= from)
      .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    if (known.length > limit) {
      const entries = known.slice(0, limit);
      return { entries, next: entries.at(-1)?.id ?? null };
    }
    return { entries: known, next: horizon ?? null };
  }
}
