// Runs every DynamoDB repository contract suite (test/contract/suites/) against each emulator: dynalite in
// memory, and DynamoDB Local when Java is present. Each emulator starts once for the whole file.
import { describe } from 'vitest';
import { DynamoApiRequestLog } from '../../lambdas/adapters/dynamodb/api-requests';
import { DynamoContactRepository } from '../../lambdas/adapters/dynamodb/contacts';
import { DynamoDeliveryRepository } from '../../lambdas/adapters/dynamodb/deliveries';
import { DynamoDomainRepository } from '../../lambdas/adapters/dynamodb/domains';
import { DynamoEmailBodyStore } from '../../lambdas/adapters/dynamodb/email-bodies';
import { DynamoEmailHistory } from '../../lambdas/adapters/dynamodb/email-history';
import { DynamoEmailRepository } from '../../lambdas/adapters/dynamodb/emails';
import { DynamoIdempotencyStore } from '../../lambdas/adapters/dynamodb/idempotency';
import { DynamoReceivedEmailRepository } from '../../lambdas/adapters/dynamodb/inbound-emails';
import { DynamoListenSessionRepository } from '../../lambdas/adapters/dynamodb/listen-sessions';
import { DynamoOrderLanes } from '../../lambdas/adapters/dynamodb/order-lanes';
import { DynamoPaceCounter } from '../../lambdas/adapters/dynamodb/pace-counter';
import { DynamoQuotaCounter } from '../../lambdas/adapters/dynamodb/quotas';
import { DynamoRateLimitCounter } from '../../lambdas/adapters/dynamodb/rate-limits';
import { DynamoRecoveryRepository } from '../../lambdas/adapters/dynamodb/recoveries';
import { DynamoReputationStore } from '../../lambdas/adapters/dynamodb/reputation';
import { DynamoSessionStore } from '../../lambdas/adapters/dynamodb/sessions';
import { DynamoSuppressionList } from '../../lambdas/adapters/dynamodb/suppressions';
import { DynamoTemplateRepository } from '../../lambdas/adapters/dynamodb/templates';
import { DynamoWebhookHealth } from '../../lambdas/adapters/dynamodb/webhook-health';
import { DynamoWebhookRepository } from '../../lambdas/adapters/dynamodb/webhooks';
import { MemoryEmailBodyStore } from '../../lambdas/adapters/local/file-email-bodies';
import { TieredEmailBodyStore } from '../../lambdas/adapters/tiered-email-bodies';
import type { TableName } from '../../lambdas/manifest';
import {
  type DynamoEndpointFactory,
  dynaliteInMemory,
  dynamoDbLocal,
  hasJava,
  SKIP_WITHOUT_JAVA,
  sharedEndpoint,
  useDynamoTables,
} from '../support/dynamo';
import { apiRequestLogContract } from './suites/api-request-log';
import { contactRepositoryContract } from './suites/contact-repository';
import { deliveryRepositoryContract } from './suites/delivery-repository';
import { domainRepositoryContract } from './suites/domain-repository';
import { accountRepositoryContract } from './suites/dynamo-account-repository';
import { apiKeyRepositoryContract } from './suites/dynamo-api-key-repository';
import { emailRepositoryContract } from './suites/dynamo-email-repository';
import { emailBodyStoreContract } from './suites/email-body-store';
import { emailHistoryContract } from './suites/email-history';
import { emailRepositoryPortContract } from './suites/email-repository';
import { dynamoHarness } from './suites/harness';
import { idempotencyStoreContract } from './suites/idempotency-store';
import { listenSessionRepositoryContract } from './suites/listen-session-repository';
import { orderLanesContract } from './suites/order-lanes';
import { outboxContract } from './suites/outbox';
import { paceCounterContract } from './suites/pace-counter';
import { quotaCounterContract } from './suites/quota-counter';
import { rateLimitCounterContract } from './suites/rate-limit-counter';
import { receivedEmailRepositoryContract } from './suites/received-email-repository';
import { recoveryRepositoryContract } from './suites/recovery-repository';
import { reputationStoreContract } from './suites/reputation-store';
import { sessionStoreContract } from './suites/session-store';
import { suppressionListContract } from './suites/suppression-list';
import { templateRepositoryContract } from './suites/template-repository';
import { webhookHealthStoreContract } from './suites/webhook-health-store';
import { webhookRepositoryContract } from './suites/webhook-repository';

const backends: readonly { factory: DynamoEndpointFactory; skip: string | null }[] = [
  { factory: dynaliteInMemory, skip: null },
  { factory: dynamoDbLocal, skip: hasJava ? null : SKIP_WITHOUT_JAVA },
];

for (const { factory, skip } of backends) {
  describe.skipIf(skip !== null)(`on ${factory.name}${skip ? ` (${skip})` : ''}`, () => {
    const endpoint = sharedEndpoint(factory);
    describe('DynamoAccountRepository', () => accountRepositoryContract(endpoint));
    describe('DynamoTemplateRepository', () =>
      templateRepositoryContract(
        dynamoHarness(endpoint, 'templates', (db, table) => new DynamoTemplateRepository(db.doc, table)),
      ));
    describe('DynamoApiKeyRepository', () => apiKeyRepositoryContract(endpoint));
    describe('DynamoRateLimitCounter', () =>
      rateLimitCounterContract(
        dynamoHarness(endpoint, 'rateLimits', (db, table) => new DynamoRateLimitCounter(db.doc, table)),
      ));
    describe('DynamoPaceCounter', () =>
      paceCounterContract(dynamoHarness(endpoint, 'rateLimits', (db, table) => new DynamoPaceCounter(db.doc, table))));
    describe('DynamoApiRequestLog', () =>
      apiRequestLogContract(
        dynamoHarness(endpoint, 'apiRequests', (db, table) => new DynamoApiRequestLog(db.doc, table)),
      ));
    describe('DynamoSessionStore', () =>
      sessionStoreContract(dynamoHarness(endpoint, 'sessions', (db, table) => new DynamoSessionStore(db.doc, table))));
    describe('DynamoListenSessionRepository', () =>
      listenSessionRepositoryContract(
        dynamoHarness(endpoint, 'listenSessions', (db, table) => new DynamoListenSessionRepository(db.doc, table)),
      ));
    describe('DynamoWebhookRepository', () =>
      webhookRepositoryContract(
        dynamoHarness(endpoint, 'webhooks', (db, table) => new DynamoWebhookRepository(db.doc, table)),
      ));
    describe('DynamoWebhookHealth', () =>
      webhookHealthStoreContract(
        dynamoHarness(endpoint, 'webhooks', (db, table) => ({
          webhooks: new DynamoWebhookRepository(db.doc, table),
          health: new DynamoWebhookHealth(db.doc, table),
        })),
      ));
    describe('DynamoDeliveryRepository', () =>
      deliveryRepositoryContract(
        dynamoHarness(endpoint, 'deliveries', (db, table) => new DynamoDeliveryRepository(db.doc, table)),
      ));
    describe('DynamoOrderLanes', () =>
      orderLanesContract(dynamoHarness(endpoint, 'deliveries', (db, table) => new DynamoOrderLanes(db.doc, table))));
    describe('DynamoRecoveryRepository', () =>
      recoveryRepositoryContract(
        dynamoHarness(endpoint, 'deliveries', (db, table) => ({
          recoveries: new DynamoRecoveryRepository(db.doc, table),
          deliveries: new DynamoDeliveryRepository(db.doc, table),
        })),
      ));
    describe('DynamoEmailRepository', () => emailRepositoryContract(endpoint));
    describe('DynamoEmailRepository (port)', () =>
      emailRepositoryPortContract(
        dynamoHarness(
          endpoint,
          'emails',
          (db, table) => new DynamoEmailRepository(db.doc, { emails: table, emailParts: db.tables.emailParts }),
        ),
      ));
    describe('DynamoEmailBodyStore', () => {
      const harness = dynamoHarness(
        endpoint,
        'emailParts',
        (db, table) => (now: () => number) => new DynamoEmailBodyStore(db.doc, table, now),
      );
      emailBodyStoreContract((now) => harness.shared()(now));
    });
    describe('TieredEmailBodyStore (DynamoDB inline, large bodies in the S3 stand-in)', () => {
      const large = new Map<string, { store: MemoryEmailBodyStore; clock: { now: () => number } }>();
      const harness = dynamoHarness(
        endpoint,
        'emailParts',
        (db, table) => (now: () => number) =>
          new TieredEmailBodyStore(new DynamoEmailBodyStore(db.doc, table, now), stand(large, table, now)),
      );
      emailBodyStoreContract((now) => harness.shared()(now));
    });
    describe('DynamoEmailHistory', () =>
      emailHistoryContract(
        dynamoHarness(endpoint, 'emailEvents', (db, table) => new DynamoEmailHistory(db.doc, table)),
      ));
    describe('DynamoIdempotencyStore', () =>
      idempotencyStoreContract(
        dynamoHarness(endpoint, 'idempotency', (db, table) => new DynamoIdempotencyStore(db.doc, table)),
      ));
    describe('DynamoQuotaCounter', () =>
      quotaCounterContract(
        dynamoHarness(endpoint, 'rateLimits', (db, table) => new DynamoQuotaCounter(db.doc, table)),
      ));
    describe('DynamoReputationStore', () =>
      reputationStoreContract(
        dynamoHarness(endpoint, 'reputation', (db, table) => new DynamoReputationStore(db.doc, table)),
      ));
    describe('DynamoSuppressionList', () =>
      suppressionListContract(
        dynamoHarness(endpoint, 'suppressions', (db, table) => new DynamoSuppressionList(db.doc, table)),
      ));
    describe('DynamoDomainRepository', () =>
      domainRepositoryContract(
        dynamoHarness(endpoint, 'domains', (db, table) => new DynamoDomainRepository(db.doc, table)),
      ));
    describe('DynamoReceivedEmailRepository', () =>
      receivedEmailRepositoryContract(
        dynamoHarness(endpoint, 'inboundEmails', (db, table) => new DynamoReceivedEmailRepository(db.doc, table)),
      ));
    describe('DynamoContactRepository', () =>
      contactRepositoryContract(
        dynamoHarness(endpoint, 'contacts', (db, table) => new DynamoContactRepository(db.doc, table)),
      ));
    describe('DynamoOutbox (domains, contacts, suppressions)', () => {
      const db = useDynamoTables(endpoint);
      const build = (tables: Readonly<Record<TableName, string>>) => ({
        domains: new DynamoDomainRepository(db().doc, tables.domains),
        contacts: new DynamoContactRepository(db().doc, tables.contacts),
        suppressions: new DynamoSuppressionList(db().doc, tables.suppressions),
      });
      outboxContract({ shared: () => build(db().tables), fresh: async () => build(await db().freshTables()) });
    });
  });
}

/** One S3 stand-in per table (the bucket beside it), its clock set by each call, as the DynamoDB tier's is. */
function stand(
  stores: Map<string, { store: MemoryEmailBodyStore; clock: { now: () => number } }>,
  table: string,
  now: () => number,
): MemoryEmailBodyStore {
  const existing = stores.get(table);
  if (existing) {
    existing.clock.now = now;
    return existing.store;
  }
  const clock = { now };
  const store = new MemoryEmailBodyStore(() => clock.now());
  stores.set(table, { store, clock });
  return store;
}
