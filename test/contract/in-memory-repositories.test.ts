// Runs the port contract suites (test/contract/suites/) against the in-memory fakes of test/support/fakes.ts,
// so the use-case tests that rely on those fakes rely on the same behaviour as the DynamoDB adapters.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe } from 'vitest';
import { InMemoryPaceCounter } from '../../lambdas/adapters/in-process/pace-counter';
import { FileEmailBodyStore, MemoryEmailBodyStore } from '../../lambdas/adapters/local/file-email-bodies';
import { TieredEmailBodyStore } from '../../lambdas/adapters/tiered-email-bodies';
import {
  InMemoryApiRequestLog,
  InMemoryContactRepository,
  InMemoryDeliveryRepository,
  InMemoryDomainRepository,
  InMemoryEmailBodyStore,
  InMemoryEmailHistory,
  InMemoryEmailRepository,
  InMemoryIdempotencyStore,
  InMemoryOrderLanes,
  InMemoryQuotaCounter,
  InMemoryRateLimitCounter,
  InMemoryRecoveryRepository,
  InMemoryReputationStore,
  InMemorySessionStore,
  InMemorySuppressionList,
  InMemoryWebhookHealth,
  InMemoryWebhookRepository,
} from '../support/fakes';
import { InMemoryReceivedEmailRepository } from '../support/inbound-fakes';
import { InMemoryListenSessionRepository } from '../support/listen-fake';
import { InMemoryTemplateRepository } from '../support/template-fake';
import { apiRequestLogContract } from './suites/api-request-log';
import { contactRepositoryContract } from './suites/contact-repository';
import { deliveryRepositoryContract } from './suites/delivery-repository';
import { domainRepositoryContract } from './suites/domain-repository';
import { emailBodyStoreContract } from './suites/email-body-store';
import { emailHistoryContract } from './suites/email-history';
import { emailRepositoryPortContract } from './suites/email-repository';
import { memoryHarness } from './suites/harness';
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

describe('InMemoryWebhookRepository', () =>
  webhookRepositoryContract(memoryHarness(() => new InMemoryWebhookRepository())));

describe('InMemoryWebhookHealth', () =>
  webhookHealthStoreContract(
    memoryHarness(() => {
      const webhooks = new InMemoryWebhookRepository();
      return { webhooks, health: new InMemoryWebhookHealth(webhooks) };
    }),
  ));
describe('InMemoryListenSessionRepository', () =>
  listenSessionRepositoryContract(memoryHarness(() => new InMemoryListenSessionRepository())));

describe('InMemoryDeliveryRepository', () =>
  deliveryRepositoryContract(memoryHarness(() => new InMemoryDeliveryRepository())));

describe('InMemoryRecoveryRepository', () =>
  recoveryRepositoryContract(
    memoryHarness(() => ({
      recoveries: new InMemoryRecoveryRepository(),
      deliveries: new InMemoryDeliveryRepository(),
    })),
  ));

describe('InMemoryEmailRepository', () =>
  emailRepositoryPortContract(memoryHarness(() => new InMemoryEmailRepository())));

describe('InMemoryEmailHistory', () => emailHistoryContract(memoryHarness(() => new InMemoryEmailHistory())));

describe('InMemoryOrderLanes', () => orderLanesContract(memoryHarness(() => new InMemoryOrderLanes())));

/** One store whose clock each call of the factory sets (the suite awaits each call before the next). */
function withClock<T>(build: (now: () => number) => T): (now: () => number) => T {
  let current = () => 0;
  const store = build(() => current());
  return (now) => {
    current = now;
    return store;
  };
}

describe('InMemoryEmailBodyStore', () => emailBodyStoreContract(withClock((now) => new InMemoryEmailBodyStore(now))));
describe('MemoryEmailBodyStore (SF_DATA_DIR=:memory:)', () =>
  emailBodyStoreContract(withClock((now) => new MemoryEmailBodyStore(now))));
describe('TieredEmailBodyStore (small bodies inline, large ones in the other store)', () =>
  emailBodyStoreContract(
    withClock((now) => new TieredEmailBodyStore(new InMemoryEmailBodyStore(now), new MemoryEmailBodyStore(now), 1024)),
  ));
describe('FileEmailBodyStore (the data directory)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sendflow-bodies-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  emailBodyStoreContract((now) => new FileEmailBodyStore(dir, now));
});

describe('InMemoryIdempotencyStore', () =>
  idempotencyStoreContract(memoryHarness(() => new InMemoryIdempotencyStore())));

describe('InMemoryRateLimitCounter', () =>
  rateLimitCounterContract(memoryHarness(() => new InMemoryRateLimitCounter())));

describe('InMemoryPaceCounter', () => paceCounterContract(memoryHarness(() => new InMemoryPaceCounter())));

describe('InMemoryQuotaCounter', () => quotaCounterContract(memoryHarness(() => new InMemoryQuotaCounter())));

describe('InMemorySuppressionList', () => suppressionListContract(memoryHarness(() => new InMemorySuppressionList())));

describe('InMemoryReputationStore', () => reputationStoreContract(memoryHarness(() => new InMemoryReputationStore())));

describe('InMemoryDomainRepository', () =>
  domainRepositoryContract(memoryHarness(() => new InMemoryDomainRepository())));

describe('InMemoryReceivedEmailRepository', () =>
  receivedEmailRepositoryContract(memoryHarness(() => new InMemoryReceivedEmailRepository())));

describe('InMemoryContactRepository', () =>
  contactRepositoryContract(memoryHarness(() => new InMemoryContactRepository())));

describe('InMemoryOutbox (domains, contacts, suppressions)', () =>
  outboxContract(
    memoryHarness(() => ({
      domains: new InMemoryDomainRepository(),
      contacts: new InMemoryContactRepository(),
      suppressions: new InMemorySuppressionList(),
    })),
  ));

describe('InMemorySessionStore', () => sessionStoreContract(memoryHarness(() => new InMemorySessionStore())));

describe('InMemoryApiRequestLog', () => apiRequestLogContract(memoryHarness(() => new InMemoryApiRequestLog())));

describe('InMemoryTemplateRepository', () =>
  templateRepositoryContract(memoryHarness(() => new InMemoryTemplateRepository())));
