// API keys in DynamoDB: keyed by the secret's SHA-256 (the authorizer's one lookup), listed per account
// through the byAccount index.
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { ApiKey, ApiKeyRepository } from '../../app/ports';
import { MODES } from '../../domain/api-keys';
import { ConflictError } from '../../domain/errors';
import { SCOPES } from '../../domain/scopes';
import { conditionHeld, queryAll, unlessConditionFails } from './operations';

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
  sendingDomain: z.object({ id: z.string(), name: z.string() }).optional(),
});

export class DynamoApiKeyRepository implements ApiKeyRepository {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(key: ApiKey): Promise<void> {
    const written = await conditionHeld(
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: key,
          ConditionExpression: 'attribute_not_exists(#h)',
          ExpressionAttributeNames: { '#h': 'hash' },
        }),
      ),
    );
    if (!written) throw new ConflictError('API key collision; retry.');
  }

  async findByHash(hash: string): Promise<ApiKey | null> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: { hash } }));
    return Item ? apiKeyItem.parse(Item) : null;
  }

  async listByAccount(accountId: string): Promise<ApiKey[]> {
    const items = await queryAll(this.doc, {
      TableName: this.tableName,
      IndexName: 'byAccount',
      KeyConditionExpression: 'accountId = :a',
      ExpressionAttributeValues: { ':a': accountId },
    });
    return items.map((item) => apiKeyItem.parse(item));
  }

  async revoke(key: ApiKey, at: string): Promise<ApiKey | null> {
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { hash: key.hash },
          UpdateExpression: 'SET revokedAt = :at',
          ConditionExpression: 'attribute_exists(#h) AND attribute_not_exists(revokedAt)',
          ExpressionAttributeNames: { '#h': 'hash' },
          ExpressionAttributeValues: { ':at': at },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (written === null) return null;
    return apiKeyItem.parse(written.Attributes);
  }
}
