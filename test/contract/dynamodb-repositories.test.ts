// Runs every DynamoDB repository contract suite (test/contract/suites/) against each emulator: dynalite in
// memory, and DynamoDB Local when Java is present. Each emulator starts once for the whole file.
import { describe } from 'vitest';
import { DynamoDeliveryRepository } from '../../lambdas/adapters/dynamodb/deliveries';
import { DynamoWebhookRepository } from '../../lambdas/adapters/dynamodb/webhooks';
import {
  type DynamoEndpointFactory,
  dynaliteInMemory,
  dynamoDbLocal,
  hasJava,
  SKIP_WITHOUT_JAVA,
  sharedEndpoint,
} from '../support/dynamo';
import { deliveryRepositoryContract } from './suites/delivery-repository';
import { accountRepositoryContract } from './suites/dynamo-account-repository';
import { apiKeyRepositoryContract } from './suites/dynamo-api-key-repository';
import { emailRepositoryContract } from './suites/dynamo-email-repository';
import { rateLimitCounterContract } from './suites/dynamo-rate-limit-counter';
import { dynamoHarness } from './suites/harness';
import { webhookRepositoryContract } from './suites/webhook-repository';

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
    describe('DynamoWebhookRepository', () =>
      webhookRepositoryContract(
        dynamoHarness(endpoint, 'webhooks', (db, table) => new DynamoWebhookRepository(db.doc, table)),
      ));
    describe('DynamoDeliveryRepository', () =>
      deliveryRepositoryContract(
        dynamoHarness(endpoint, 'deliveries', (db, table) => new DynamoDeliveryRepository(db.doc, table)),
      ));
    describe('DynamoEmailRepository', () => emailRepositoryContract(endpoint));
  });
}
