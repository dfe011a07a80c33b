// Wiring shared by both runtimes: DynamoDB repositories over one document client and the manifest's tables.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoAccountRepository } from '../adapters/dynamodb/accounts';
import { DynamoApiKeyRepository } from '../adapters/dynamodb/api-keys';
import { DynamoRateLimitCounter } from '../adapters/dynamodb/rate-limits';
import type { TableName } from '../manifest';

export function createRepositories(client: DynamoDBClient, tables: Readonly<Record<TableName, string>>) {
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  return {
    accounts: new DynamoAccountRepository(doc, tables.accounts),
    apiKeys: new DynamoApiKeyRepository(doc, tables.apiKeys),
    counter: new DynamoRateLimitCounter(doc, tables.rateLimits),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;
