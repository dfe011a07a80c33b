// Accounts in DynamoDB: one item per account, keyed by id.
import { type DynamoDBDocumentClient, GetCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { Account, AccountRepository } from '../../app/ports';
import { ConflictError } from '../../domain/errors';
import { PLAN_NAMES } from '../../domain/plans';
import { conditionHeld, unlessConditionFails } from './operations';

const accountItem = z.object({
  id: z.string(),
  plan: z.enum(PLAN_NAMES),
  createdAt: z.string(),
  usageKey: z.string().optional(),
  usageKeyId: z.string().optional(),
  isDefault: z.literal(true).optional(),
  // Added with the settings page's address for notices: the release before parses accounts with this schema's
  // earlier form, which drops unknown attributes (zod's default), so an item carrying it reads there as before.
  noticeEmail: z.string().optional(),
  // AWS destinations' external id: the release before drops it on read, as it dropped noticeEmail.
  awsExternalId: z.string().optional(),
});

export class DynamoAccountRepository implements AccountRepository {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(account: Account): Promise<void> {
    const written = await conditionHeld(
      this.doc.send(
        new PutCommand({ TableName: this.tableName, Item: account, ConditionExpression: 'attribute_not_exists(id)' }),
      ),
    );
    if (!written) throw new ConflictError(`Account ${account.id} exists.`);
  }

  async get(id: string): Promise<Account | null> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: { id } }));
    return Item ? accountItem.parse(Item) : null;
  }

  async update(
    id: string,
    changes: Partial<Pick<Account, 'plan' | 'usageKey' | 'usageKeyId'>>,
  ): Promise<Account | null> {
    const entries = Object.entries(changes).filter(([, value]) => value !== undefined);
    if (entries.length === 0) return this.get(id);
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { id },
          UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
          ExpressionAttributeNames: Object.fromEntries(entries.map(([name], i) => [`#f${i}`, name])),
          ExpressionAttributeValues: Object.fromEntries(entries.map(([, value], i) => [`:v${i}`, value])),
          ConditionExpression: 'attribute_exists(id)',
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (written === null) return null;
    return accountItem.parse(written.Attributes);
  }

  async setNoticeEmail(id: string, email: string | null): Promise<boolean> {
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { id },
          UpdateExpression: email === null ? 'REMOVE #e' : 'SET #e = :e',
          ExpressionAttributeNames: { '#e': 'noticeEmail' },
          ...(email === null ? {} : { ExpressionAttributeValues: { ':e': email } }),
          ConditionExpression: 'attribute_exists(id)',
          // The grant allows this attribute only, and no values returned beyond it (dynamodb:Attributes).
          ReturnValues: 'NONE',
        }),
      ),
    );
    return written !== null;
  }

  async ensureAwsExternalId(id: string, candidate: string): Promise<string | null> {
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { id },
          // Set once: a later call (or a simultaneous first one) keeps the stored id and gets it back.
          UpdateExpression: 'SET #x = if_not_exists(#x, :x)',
          ExpressionAttributeNames: { '#x': 'awsExternalId' },
          ExpressionAttributeValues: { ':x': candidate },
          ConditionExpression: 'attribute_exists(id)',
          // The grant allows this attribute only, and returns nothing beyond it (dynamodb:Attributes).
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
    if (written === null) return null;
    const stored = written.Attributes?.awsExternalId;
    return typeof stored === 'string' ? stored : null;
  }

  async any(): Promise<boolean> {
    const { Items } = await this.doc.send(
      new ScanCommand({ TableName: this.tableName, Limit: 1, ProjectionExpression: 'id' }),
    );
    return (Items?.length ?? 0) > 0;
  }

  async list(options: { pageSize?: number } = {}): Promise<Account[]> {
    const accounts: Account[] = [];
    let cursor: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new ScanCommand({
          TableName: this.tableName,
          ExclusiveStartKey: cursor,
          ...(options.pageSize ? { Limit: options.pageSize } : {}),
        }),
      );
      accounts.push(...(page.Items ?? []).map((item) => accountItem.parse(item)));
      cursor = page.LastEvaluatedKey;
    } while (cursor);
    return accounts.sort(oldestFirst);
  }
}

function oldestFirst(a: Account, b: Account): number {
  return a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);
}
