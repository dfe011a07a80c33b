// The DynamoDB document client every repository is built on, with the one marshalling choice they share. Apart
// from repositories.ts so a function that needs two repositories (the authorizer) does not carry all twelve.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export function documentClient(client: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}
