// Runs the port contract suites (test/contract/suites/) against the in-memory fakes of test/support/fakes.ts,
// so the use-case tests that rely on those fakes rely on the same behaviour as the DynamoDB adapters.
import { describe } from 'vitest';
import { InMemoryDeliveryRepository, InMemoryWebhookRepository } from '../support/fakes';
import { deliveryRepositoryContract } from './suites/delivery-repository';
import { memoryHarness } from './suites/harness';
import { webhookRepositoryContract } from './suites/webhook-repository';

describe('InMemoryWebhookRepository', () =>
  webhookRepositoryContract(memoryHarness(() => new InMemoryWebhookRepository())));

describe('InMemoryDeliveryRepository', () =>
  deliveryRepositoryContract(memoryHarness(() => new InMemoryDeliveryRepository())));
