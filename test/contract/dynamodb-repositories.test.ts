// Runs every DynamoDB repository contract suite (test/contract/suites/) against each emulator: dynalite in
// memory, and DynamoDB Local when Java is present. Each emulator starts once for the whole file.
import { describe } from 'vitest';
import {
  type DynamoEndpointFactory,
  dynaliteInMemory,
  dynamoDbLocal,
  hasJava,
  SKIP_WITHOUT_JAVA,
  sharedEndpoint,
} from '../support/dynamo';
import { accountRepositoryContract } from './suites/dynamo-account-repository';
import { apiKeyRepositoryContract } from './suites/dynamo-api-key-repository';
import { rateLimitCounterContract } from './suites/dynamo-rate-limit-counter';

const backends: readonly { factory: DynamoEndpointFactory; skip: string | null }[] = [
  { factory: dynaliteInMemory, skip: null },
  { factory: dynamoDbLocal, skip: hasJava ? null : SKIP_WITHOUT_JAVA },
];

for (const { factory, skip } of backends) {
  describe.skipIf(skip !== null)(`on ${factory.name}${skip ? ` (${skip})` : ''}`, () => {
    const endpoint = sharedEndpoint(factory);
    describe('DynamoAccountRepository', () => accountRepositoryContract(endpoint));
    describe('DynamoApiKeyRepository', () => apiKeyRepositoryContract(endpoint));
    describe('DynamoRateLimitCounter', () => rateLimitCounterContract(endpoint));
  });
}
