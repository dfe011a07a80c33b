// Every DynamoDB repository over one document client and the manifest's tables: the one place they are built
// (both runtimes' services, the admin CLI, tests and benchmarks).
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoAccountRepository } from '../adapters/dynamodb/accounts';
import { DynamoApiKeyRepository } from '../adapters/dynamodb/api-keys';
import { DynamoApiRequestLog } from '../adapters/dynamodb/api-requests';
import { DynamoContactRepository } from '../adapters/dynamodb/contacts';
import { DynamoDeliveryRepository } from '../adapters/dynamodb/deliveries';
import { DynamoDeliveryFigures } from '../adapters/dynamodb/delivery-figures';
import { DynamoDomainRepository } from '../adapters/dynamodb/domains';
import { DynamoEmailHistory } from '../adapters/dynamodb/email-history';
import { DynamoEmailRepository } from '../adapters/dynamodb/emails';
import { DynamoFilteredCounts } from '../adapters/dynamodb/filtered-counts';
import { DynamoIdempotencyStore } from '../adapters/dynamodb/idempotency';
import { DynamoReceivedEmailRepository } from '../adapters/dynamodb/inbound-emails';
import { DynamoListenSessionRepository } from '../adapters/dynamodb/listen-sessions';
import { DynamoOrderLanes } from '../adapters/dynamodb/order-lanes';
import { DynamoQuotaCounter } from '../adapters/dynamodb/quotas';
import { DynamoRateLimitCounter } from '../adapters/dynamodb/rate-limits';
import { DynamoRecoveryRepository } from '../adapters/dynamodb/recoveries';
import { DynamoReputationStore } from '../adapters/dynamodb/reputation';
import { DynamoSessionStore } from '../adapters/dynamodb/sessions';
import { DynamoSuppressionList } from '../adapters/dynamodb/suppressions';
import { DynamoTemplateRepository } from '../adapters/dynamodb/templates';
import { DynamoWebhookHealth } from '../adapters/dynamodb/webhook-health';
import { DynamoWebhookRepository } from '../adapters/dynamodb/webhooks';
import type { EmailBodyStore } from '../app/emails/ports';
import { defaultStoredFormats, type StoredFormats } from '../domain/stored-formats';
import type { TableName } from '../manifest';
import { documentClient } from './document-client';

/** Settings of the stores that take them; each has its default. */
export interface RepositoryOptions {
  /** How long emails and everything of theirs are kept (SF_EMAIL_RETENTION_DAYS). */
  readonly emailRetentionSeconds?: number;
  /** Where email bodies go: S3 on AWS, the data directory locally; the emailParts table when absent. */
  readonly emailBodies?: EmailBodyStore;
  /** Which new stored formats are written (SF_STORED_FORMATS); this release's defaults when absent. */
  readonly storedFormats?: StoredFormats;
}

export function createRepositories(
  client: DynamoDBClient,
  tables: Readonly<Record<TableName, string>>,
  options: RepositoryOptions = {},
) {
  const doc = documentClient(client);
  const retention =
    options.emailRetentionSeconds !== undefined ? { retentionSeconds: options.emailRetentionSeconds } : {};
  const bodies = options.emailBodies ? { bodies: options.emailBodies } : {};
  return {
    accounts: new DynamoAccountRepository(doc, tables.accounts),
    apiKeys: new DynamoApiKeyRepository(doc, tables.apiKeys),
    counter: new DynamoRateLimitCounter(doc, tables.rateLimits),
    quotas: new DynamoQuotaCounter(doc, tables.rateLimits),
    webhooks: new DynamoWebhookRepository(doc, tables.webhooks),
    // Events webhook filters kept back, per webhook and hour (filtered_24h), among the counters.
    filteredCounts: new DynamoFilteredCounts(doc, tables.rateLimits),
    // Auto-disable's streak and disabling, on the webhook items.
    webhookHealth: new DynamoWebhookHealth(doc, tables.webhooks),
    deliveries: new DynamoDeliveryRepository(doc, tables.deliveries, options.storedFormats ?? defaultStoredFormats()),
    // Recovery jobs live in the deliveries table, next to the log they replay.
    recoveries: new DynamoRecoveryRepository(doc, tables.deliveries),
    // The hourly delivery figures the charts read (one `fig#` item per webhook, hour and shard) too.
    deliveryFigures: new DynamoDeliveryFigures(doc, tables.deliveries),
    // Per-email ordering's lanes too: one item per (webhook, email) under its own partition key.
    orderLanes: new DynamoOrderLanes(doc, tables.deliveries),
    emails: new DynamoEmailRepository(
      doc,
      { emails: tables.emails, emailParts: tables.emailParts },
      { ...retention, ...bodies },
    ),
    emailHistory: new DynamoEmailHistory(doc, tables.emailEvents, retention),
    idempotency: new DynamoIdempotencyStore(doc, tables.idempotency),
    suppressions: new DynamoSuppressionList(doc, tables.suppressions),
    domains: new DynamoDomainRepository(doc, tables.domains),
    contacts: new DynamoContactRepository(doc, tables.contacts),
    sessions: new DynamoSessionStore(doc, tables.sessions),
    apiRequests: new DynamoApiRequestLog(doc, tables.apiRequests),
    listenSessions: new DynamoListenSessionRepository(doc, tables.listenSessions),
    receivedEmails: new DynamoReceivedEmailRepository(doc, tables.inboundEmails),
    templates: new DynamoTemplateRepository(doc, tables.templates),
    // Sending reputation: daily counters and each tenant's standings (warned, paused).
    reputationStore: new DynamoReputationStore(doc, tables.reputation),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;
