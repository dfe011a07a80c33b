// Listen sessions in DynamoDB, one small table of two kinds of items (both with the TTL `expiresAt`):
// a session under its account (pk `acct#<accountId>`, sk its id), so one Query is both the fan-out's lookup and
// the cap's count; and each event put on a session under the session (pk its id, sk the event's cursor), so a
// poll is one Query of a key range. Reads filter on the expiry too: TTL deletes lazily.
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { ListenEvent, ListenSession, ListenSessionRepository } from '../../app/listen/ports';
import type { Tenant } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import { ConflictError } from '../../domain/errors';
import { isEventType } from '../../domain/events';
import { isLive } from '../../domain/listen';
import { conditionHeld, queryAll, unlessConditionFails } from './operations';

const sessionItem = z.object({
  id: z.string(),
  accountId: z.string(),
  mode: z.enum(MODES),
  secret: z.string(),
  // Tolerant of types a later release added (as webhooks: adapters/dynamodb/webhooks.ts).
  events: z
    .array(z.string())
    .transform((names) => names.filter(isEventType))
    .nullable(),
  createdAt: z.number(),
  expiresAt: z.number(),
});

const eventItem = z.object({
  pk: z.string(),
  sk: z.string(),
  eventId: z.string(),
  type: z.string(),
  payload: z.string(),
  expiresAt: z.number(),
});

const accountKey = (accountId: string) => `acct#${accountId}`;

export class DynamoListenSessionRepository implements ListenSessionRepository {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(session: ListenSession): Promise<void> {
    const created = await conditionHeld(
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pk: accountKey(session.accountId), sk: session.id, ...session },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
    if (!created) throw new ConflictError(`Listen session ${session.id} exists.`);
  }

  async listLive(accountId: string, nowMs: number): Promise<ListenSession[]> {
    // Strongly consistent: the cap's second look sees a concurrent opening, the fan-out a session opened a
    // moment ago. Expired sessions still stored (TTL is lazy) are read and left out; the items are small.
    const items = await queryAll(this.doc, {
      TableName: this.tableName,
      ConsistentRead: true,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': accountKey(accountId) },
    });
    return items.map(toSession).filter((session) => isLive(session.expiresAt, nowMs));
  }

  async touch(tenant: Tenant, id: string, expiresAt: number, nowMs: number): Promise<ListenSession | null> {
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(tenant, id),
          UpdateExpression: 'SET expiresAt = :expiresAt',
          ConditionExpression: 'attribute_exists(pk) AND #mode = :mode AND expiresAt > :now',
          ExpressionAttributeNames: { '#mode': 'mode' },
          ExpressionAttributeValues: {
            ':expiresAt': expiresAt,
            ':mode': tenant.mode,
            ':now': Math.floor(nowMs / 1000),
          },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return written?.Attributes ? toSession(written.Attributes) : null;
  }

  delete(tenant: Tenant, id: string): Promise<boolean> {
    return conditionHeld(
      this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: this.key(tenant, id),
          ConditionExpression: 'attribute_exists(pk) AND #mode = :mode',
          ExpressionAttributeNames: { '#mode': 'mode' },
          ExpressionAttributeValues: { ':mode': tenant.mode },
        }),
      ),
    );
  }

  async putEvents(events: readonly ListenEvent[]): Promise<void> {
    // At most LISTEN_SESSIONS_PER_ACCOUNT puts per event, in parallel: one small PutItem each.
    await Promise.all(
      events.map((event) =>
        this.doc.send(
          new PutCommand({
            TableName: this.tableName,
            Item: {
              pk: event.sessionId,
              sk: event.cursor,
              eventId: event.eventId,
              type: event.type,
              payload: event.payload,
              expiresAt: event.expiresAt,
            },
          }),
        ),
      ),
    );
  }

  async readEvents(
    sessionId: string,
    range: { readonly after: string | null; readonly before: string; readonly limit: number },
    nowMs: number,
  ): Promise<ListenEvent[]> {
    // BETWEEN is inclusive: `after!` is past `after` and before any later cursor (cursors never extend another).
    const from = range.after === null ? '0' : `${range.after}!`;
    if (from > range.before) return [];
    const { Items = [] } = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :before',
        ExpressionAttributeValues: { ':pk': sessionId, ':from': from, ':before': range.before },
        Limit: range.limit,
        // A put acknowledged before `before` is read: the settle window's promise holds only on a consistent read.
        ConsistentRead: true,
      }),
    );
    return Items.map((item) => eventItem.parse(item))
      .filter((item) => isLive(item.expiresAt, nowMs))
      .map((item) => ({
        sessionId: item.pk,
        cursor: item.sk,
        eventId: item.eventId,
        type: item.type,
        payload: item.payload,
        expiresAt: item.expiresAt,
      }));
  }

  private key(tenant: Tenant, id: string): { pk: string; sk: string } {
    return { pk: accountKey(tenant.accountId), sk: id };
  }
}

function toSession(item: Record<string, unknown>): ListenSession {
  const { id, accountId, mode, secret, events, createdAt, expiresAt } = sessionItem.parse(item);
  return { id, accountId, mode, secret, events, createdAt, expiresAt };
}
