// Dashboard sign-in links and sessions in the `sessions` table, keyed by token hash. A link is redeemed with
// one conditional update (unused and unexpired), so it works once even under concurrent clicks.
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { SessionRecord, SessionStore, SignInRecord } from '../../app/dashboard/ports';
import { MODES, type Mode } from '../../domain/api-keys';
import { toEpochSeconds } from '../../domain/dashboard/session';
import { unlessConditionFails } from './operations';

const signIn = z.object({
  kind: z.literal('sign-in'),
  hash: z.string(),
  accountId: z.string(),
  mode: z.enum(MODES),
  expiresAt: z.number(),
});
const session = z.object({
  kind: z.literal('session'),
  hash: z.string(),
  accountId: z.string(),
  mode: z.enum(MODES),
  csrf: z.string(),
  expiresAt: z.number(),
});

const signOutMark = z.object({
  kind: z.literal('sign-out-everywhere'),
  accountId: z.string(),
  at: z.number(),
  expiresAt: z.number(),
});

/**
 * The key of an account's sign-out-everywhere mark: never a token's hash (64 hex digits), so no session or link
 * lookup finds it, and the release before it never reads it (its Scan in `revokeAccount` may delete it, which only
 * forgets a mark that operator tool made moot).
 */
const signOutKey = (accountId: string) => `sign-out-everywhere#${accountId}`;

export class DynamoSessionStore implements SessionStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async putSignIn(record: SignInRecord): Promise<void> {
    await this.doc.send(new PutCommand({ TableName: this.tableName, Item: { ...record } }));
  }

  async redeemSignIn(hash: string, nowMs: number): Promise<SignInRecord | null> {
    const result = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { hash },
          UpdateExpression: 'SET usedAt = :now',
          ConditionExpression: 'kind = :kind AND attribute_not_exists(usedAt) AND expiresAt > :nowSec',
          ExpressionAttributeValues: { ':now': nowMs, ':kind': 'sign-in', ':nowSec': toEpochSeconds(nowMs) },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (!result?.Attributes) return null;
    const { usedAt: _used, ...record } = result.Attributes;
    return signIn.parse(record);
  }

  async peekSignIn(hash: string, nowMs: number): Promise<SignInRecord | null> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: { hash } }));
    if (Item?.kind !== 'sign-in' || Item.usedAt !== undefined) return null;
    const { usedAt: _used, ...record } = Item;
    const link = signIn.parse(record);
    return link.expiresAt > toEpochSeconds(nowMs) ? link : null;
  }

  async putSession(record: SessionRecord): Promise<void> {
    await this.doc.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...record },
        // Hashes of 32 random bytes never collide; the condition makes a bug loud instead of a takeover.
        ConditionExpression: 'attribute_not_exists(#h)',
        ExpressionAttributeNames: { '#h': 'hash' },
      }),
    );
  }

  async getSession(hash: string, nowMs: number): Promise<SessionRecord | null> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: { hash } }));
    if (Item?.kind !== 'session') return null;
    const record = session.parse(Item);
    return record.expiresAt > toEpochSeconds(nowMs) ? record : null;
  }

  async setMode(hash: string, mode: Mode, nowMs: number): Promise<SessionRecord | null> {
    const result = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { hash },
          UpdateExpression: 'SET #m = :mode',
          ConditionExpression: 'kind = :kind AND expiresAt > :nowSec',
          ExpressionAttributeNames: { '#m': 'mode' },
          ExpressionAttributeValues: { ':mode': mode, ':kind': 'session', ':nowSec': toEpochSeconds(nowMs) },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return result?.Attributes ? session.parse(result.Attributes) : null;
  }

  async deleteSession(hash: string): Promise<void> {
    await this.doc.send(new DeleteCommand({ TableName: this.tableName, Key: { hash } }));
  }

  async signOutEverywhere(accountId: string, atMs: number, expiresAt: number): Promise<void> {
    await this.doc.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { hash: signOutKey(accountId), kind: 'sign-out-everywhere', accountId, at: atMs, expiresAt },
      }),
    );
  }

  async signedOutEverywhereAt(accountId: string, nowMs: number): Promise<number | null> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { hash: signOutKey(accountId) } }),
    );
    if (Item?.kind !== 'sign-out-everywhere') return null;
    const mark = signOutMark.parse(Item);
    return mark.expiresAt > toEpochSeconds(nowMs) ? mark.at : null;
  }

  async revokeAccount(accountId: string): Promise<number> {
    let removed = 0;
    let cursor: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new ScanCommand({
          TableName: this.tableName,
          // Sessions and links, not the account's sign-out-everywhere mark (it ends nothing by itself).
          FilterExpression: 'accountId = :a AND kind <> :mark',
          ProjectionExpression: '#h',
          ExpressionAttributeNames: { '#h': 'hash' },
          ExpressionAttributeValues: { ':a': accountId, ':mark': 'sign-out-everywhere' },
          ExclusiveStartKey: cursor,
        }),
      );
      for (const item of page.Items ?? []) {
        await this.deleteSession(String(item.hash));
        removed += 1;
      }
      cursor = page.LastEvaluatedKey;
    } while (cursor);
    return removed;
  }
}
