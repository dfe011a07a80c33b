// API keys in DynamoDB: keyed by the secret's SHA-256 (the authorizer's one lookup), listed per account
// through the byAccount index.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import type { ApiKey, ApiKeyRepository } from '../../app/ports';
import { MODES } from '../../domain/api-keys';
import { ConflictError } from '../../domain/errors';
import { SCOPES } from '../../domain/scopes';

const apiKeyItem = z.object({
  id: z.string(),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  accountId: z.string(),
  mode: z.enum(MODES),
  scopes: z.array(z.enum(SCOPES)),
  name: z.string(),
  hint: z.string(),
  createdAt: z.string(),
  revokedAt: z.string().optional(),
});

export class DynamoApiKeyRepository implements ApiKeyRepository {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(key: ApiKey): Promise<void> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: key,
          ConditionExpression: 'attribute_not_exists(#h)',
          ExpressionAttributeNames: { '#h': 'hash' },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new ConflictError('API key collision; retry.');
      throw error;
    }
  }

  async findByHash(hash: string): Promise<ApiKey | null> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: { hash } }));
    return Item ? apiKeyItem.parse(Item) : null;
  }

  async listByAccount(accountId: string): Promise<ApiKey[]> {
    const keys: ApiKey[] = [];
    let cursor: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: 'byAccount',
          KeyConditionExpression: 'accountId = :a',
          ExpressionAttributeValues: { ':a': accountId },
          ExclusiveStartKey: cursor,
        }),
      );
      for (const item of page.Items ?? []) keys.push(apiKeyItem.parse(item));
      cursor = page.LastEvaluatedKey;
    } while (cursor);
    return keys;
  }

  async revoke(key: ApiKey, at: string): Promise<ApiKey | null> {
    try {
      const { Attributes } = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { hash: key.hash },
          UpdateExpression: 'SET revokedAt = :at',
          ConditionExpression: 'attribute_exists(#h) AND attribute_not_exists(revokedAt)',
          ExpressionAttributeNames: { '#h': 'hash' },
          ExpressionAttributeValues: { ':at': at },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return apiKeyItem.parse(Attributes);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return null;
      throw error;
    }
  }
}
