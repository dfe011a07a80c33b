// The API request log in the `apiRequests` table: one item per authenticated request, under its tenant
// (`account#mode`) and a time-ordered id, expiring by TTL. A write is one PutItem of about 200 bytes (1 WRU);
// a read is one Query, newest first, with Limit (100 entries of ~200 bytes: 3 RCU, eventually consistent).
import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { ApiRequestEntry, ApiRequestLog } from '../../app/api-requests/ports';
import { MODES, type Mode } from '../../domain/api-keys';

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
  expiresAt: z.number(),
});

const tenantKey = (accountId: string, mode: Mode) => `${accountId}#${mode}`;

export class DynamoApiRequestLog implements ApiRequestLog {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async record(item: ApiRequestEntry): Promise<void> {
    await this.doc.send(
      new PutCommand({ TableName: this.tableName, Item: { tenant: tenantKey(item.accountId, item.mode), ...item } }),
    );
  }

  async recent(accountId: string, mode: Mode, limit: number, nowMs: number): Promise<ApiRequestEntry[]> {
    // TTL deletes lazily: expired items are filtered out (a filter still reads them, but they are at most a
    // day's tail, and Limit bounds the read).
    const { Items = [] } = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'tenant = :t',
        ExpressionAttributeValues: { ':t': tenantKey(accountId, mode) },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    const now = Math.floor(nowMs / 1000);
    return Items.map((item) => entry.parse(item)).filter((e) => e.expiresAt > now);
  }
}
