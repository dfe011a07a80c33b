// In-memory fakes of the application ports (lambdas/app/ports.ts), for unit tests of use cases and handlers.
// They follow the same contract as the DynamoDB adapters (see test/contract/): conflicts on duplicate keys,
// null for unknown ids, oldest-first listings, revoke only once. The webhook, delivery, email, idempotency,
// quota, suppression, domain and contact fakes pass the same contract suites as their DynamoDB adapters
// (test/contract/in-memory-repositories.test.ts).
import { createHash } from 'node:crypto';
import { matchesFilter } from '../../lambdas/app/api-requests/api-requests';
import type {
  ApiRequestEntry,
  ApiRequestFilter,
  ApiRequestLog,
  ApiRequestPage,
} from '../../lambdas/app/api-requests/ports';
import type { Contact, ContactChanges, ContactRepository } from '../../lambdas/app/contacts/contacts';
import type { SessionRecord, SessionStore, SignInRecord } from '../../lambdas/app/dashboard/ports';
import {
  DEFAULT_CAPABILITIES,
  type DnsRecord,
  type Domain,
  type DomainProvider,
  type DomainRepository,
  type DomainStatus,
  IdentityUnavailableError,
} from '../../lambdas/app/domains/ports';
import type {
  BatchState,
  CopyOutcome,
  EmailBody,
  EmailBodyStore,
  EmailEventEntry,
  EmailHistory,
  EmailListQuery,
  EmailPage,
  EmailProvider,
  EmailRecord,
  EmailRepository,
  HistoryPage,
  LinkSigner,
  NotedStatus,
  OutgoingAttachment,
  OutgoingCopy,
  RecipientExpectation,
  RecipientState,
  RescheduleResult,
  SendingEmail,
  SendScheduler,
  StatusPage,
  Suppression,
  SuppressionList,
  SuppressionPage,
  SuppressionQuery,
} from '../../lambdas/app/emails/ports';
import { EMAIL_LIST_EXAMINE, RESCHEDULE_MARGIN_MS } from '../../lambdas/app/emails/ports';
import {
  IDEMPOTENCY_LOCK_MS,
  IDEMPOTENCY_TTL_MS,
  type IdempotencyClaim,
  type IdempotencyStore,
  type StoredResponse,
} from '../../lambdas/app/idempotency';
import type { Outbox, OutboxRef, PendingEvents, Recorded } from '../../lambdas/app/outbox';
import type {
  Account,
  AccountRepository,
  ApiKey,
  ApiKeyRepository,
  AuthorizerCache,
  Clock,
  QuotaCounter,
  RandomBytes,
  RateLimitCounter,
  UsagePlans,
} from '../../lambdas/app/ports';
import {
  type CountEntry,
  type NotedFigures,
  type ReputationStore,
  type Standing,
  type Subject,
  subjectKey,
  type TenantCounts,
} from '../../lambdas/app/reputation/ports';
import type { AttemptReport, EmailOutcome, RequestReport, Telemetry } from '../../lambdas/app/telemetry';
import type { LaneKey, OrderLanes } from '../../lambdas/app/webhooks/order-lanes';
import type {
  Claim,
  ClaimExpectation,
  Delivery,
  DeliveryJob,
  DeliveryKey,
  DeliveryListQuery,
  DeliveryPage,
  DeliveryQueue,
  DeliveryRepository,
  DueDelivery,
  EventPublisher,
  OutboundRequest,
  Recovery,
  RecoveryQueue,
  RecoveryRepository,
  RecoveryStep,
  RetryScheduler,
  Tenant,
  Webhook,
  WebhookChanges,
  WebhookHealthStore,
  WebhookRef,
  WebhookRepository,
  WebhookSender,
} from '../../lambdas/app/webhooks/ports';
import { DELIVERY_LIST_EXAMINE, isDue } from '../../lambdas/app/webhooks/ports';
import type { RecoveryDeps } from '../../lambdas/app/webhooks/recoveries';
import type { Mode } from '../../lambdas/domain/api-keys';
import { bareAddress, type EmailMessage, recipients } from '../../lambdas/domain/email/email';
import { historyOrderKey } from '../../lambdas/domain/email/history';
import type { QuotaWindow } from '../../lambdas/domain/email/quota';
import { addCounts, type Counts, NO_COUNTS } from '../../lambdas/domain/email/reputation';
import { isIndexedStatus } from '../../lambdas/domain/email/status';
import { ConflictError, ServiceUnavailableError } from '../../lambdas/domain/errors';
import type { SendflowEvent } from '../../lambdas/domain/events';
import type { PlanName } from '../../lambdas/domain/plans';
import type { RateWindow } from '../../lambdas/domain/rate-limit';
import type { DisabledReason, FailureStreak } from '../../lambdas/domain/webhooks/auto-disable';
import { type AttemptOutcome, NO_TIMINGS } from '../../lambdas/domain/webhooks/delivery';
import { errorClassOf } from '../../lambdas/domain/webhooks/error-class';
import type { LaneEntry } from '../../lambdas/domain/webhooks/ordering';
import type { StoredSecrets } from '../../lambdas/domain/webhooks/secret-set';

export class InMemoryAccountRepository implements AccountRepository {
  readonly items = new Map<string, Account>();

  async create(account: Account): Promise<void> {
    if (this.items.has(account.id)) throw new ConflictError(`Account ${account.id} exists.`);
    this.items.set(account.id, structuredClone(account));
  }

  async get(id: string): Promise<Account | null> {
    const account = this.items.get(id);
    return account ? structuredClone(account) : null;
  }

  async update(
    id: string,
    changes: Partial<Pick<Account, 'plan' | 'usageKey' | 'usageKeyId'>>,
  ): Promise<Account | null> {
    const account = this.items.get(id);
    if (!account) return null;
    const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
    const updated: Account = { ...account, ...defined };
    this.items.set(id, updated);
    return structuredClone(updated);
  }

  async setNoticeEmail(id: string, email: string | null): Promise<boolean> {
    const account = this.items.get(id);
    if (!account) return false;
    const { noticeEmail: _previous, ...rest } = account;
    this.items.set(id, email === null ? rest : { ...rest, noticeEmail: email });
    return true;
  }

  async ensureAwsExternalId(id: string, candidate: string): Promise<string | null> {
    const account = this.items.get(id);
    if (!account) return null;
    if (account.awsExternalId) return account.awsExternalId;
    this.items.set(id, { ...account, awsExternalId: candidate });
    return candidate;
  }

  async any(): Promise<boolean> {
    return this.items.size > 0;
  }

  async list(): Promise<Account[]> {
    return [...this.items.values()]
      .map((account) => structuredClone(account))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }
}

export class InMemoryApiKeyRepository implements ApiKeyRepository {
  /** Stored records keyed by hash, exactly as the adapter would persist them. */
  readonly items = new Map<string, ApiKey>();

  async create(key: ApiKey): Promise<void> {
    if (this.items.has(key.hash)) throw new ConflictError('API key collision; retry.');
    this.items.set(key.hash, structuredClone(key));
  }

  async findByHash(hash: string): Promise<ApiKey | null> {
    const key = this.items.get(hash);
    return key ? structuredClone(key) : null;
  }

  async listByAccount(accountId: string): Promise<ApiKey[]> {
    return [...this.items.values()]
      .filter((key) => key.accountId === accountId)
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0))
      .map((key) => structuredClone(key));
  }

  async revoke(key: ApiKey, at: string): Promise<ApiKey | null> {
    const stored = this.items.get(key.hash);
    if (!stored || stored.revokedAt) return null;
    const revoked: ApiKey = { ...stored, revokedAt: at };
    this.items.set(key.hash, revoked);
    return structuredClone(revoked);
  }
}

export class InMemoryRateLimitCounter implements RateLimitCounter {
  readonly counts = new Map<string, number>();

  async increment(subject: string, window: RateWindow): Promise<number> {
    const key = `${subject}#${window.start}`;
    const next = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, next);
    return next;
  }
}

/** Records every call, so tests can assert that a plan move happened (or did not). */
export class RecordingUsagePlans implements UsagePlans {
  readonly enrolled: { accountId: string; plan: PlanName }[] = [];
  readonly moves: { accountId: string; from: PlanName; to: PlanName }[] = [];

  constructor(private readonly identity: Pick<Account, 'usageKey' | 'usageKeyId'> = {}) {}

  async enroll(accountId: string, plan: PlanName): Promise<Pick<Account, 'usageKey' | 'usageKeyId'>> {
    this.enrolled.push({ accountId, plan });
    return { ...this.identity };
  }

  async move(account: Account, to: PlanName): Promise<void> {
    this.moves.push({ accountId: account.id, from: account.plan, to });
  }
}

/** A clock that only moves when told to. */
export class FakeClock implements Clock {
  constructor(private current = Date.UTC(2025, 0, 1, 12, 0, 0)) {}

  now(): number {
    return this.current;
  }

  set(ms: number): void {
    this.current = ms;
  }

  advance(ms: number): void {
    this.current += ms;
  }
}

/**
 * Deterministic "random" bytes: a SHA-256 stream over a seed and a counter. Different calls give different
 * bytes (so two generated keys differ), and a run is reproducible.
 */
export function seededRandom(seed = 'sendflow-tests'): RandomBytes {
  let counter = 0;
  return (size: number) => {
    const out = new Uint8Array(size);
    let filled = 0;
    while (filled < size) {
      const block = createHash('sha256').update(`${seed}:${counter++}`).digest();
      const take = Math.min(block.length, size - filled);
      out.set(block.subarray(0, take), filled);
      filled += take;
    }
    return out;
  };
}

export class InMemoryWebhookRepository implements WebhookRepository {
  /** Keyed by `account#mode#id`, as the table's (tenant, id) key. */
  readonly items = new Map<string, Webhook>();

  async create(webhook: Webhook): Promise<void> {
    const key = `${tenantOf(webhook)}#${webhook.id}`;
    if (this.items.has(key)) throw new ConflictError(`Webhook ${webhook.id} exists.`);
    this.items.set(key, structuredClone(webhook));
  }

  async get(tenant: Tenant, id: string, _options?: { readonly consistent?: boolean }): Promise<Webhook | null> {
    const webhook = this.items.get(`${tenantOf(tenant)}#${id}`);
    return webhook ? structuredClone(webhook) : null;
  }

  async getMany(refs: readonly WebhookRef[]): Promise<Webhook[]> {
    const keys = new Set(refs.map((ref) => `${tenantOf(ref)}#${ref.id}`));
    return [...keys].flatMap((key) => {
      const webhook = this.items.get(key);
      return webhook ? [structuredClone(webhook)] : [];
    });
  }

  async list(tenant: Tenant): Promise<Webhook[]> {
    return [...this.items.values()]
      .filter((webhook) => tenantOf(webhook) === tenantOf(tenant))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((webhook) => structuredClone(webhook));
  }

  async update(tenant: Tenant, id: string, changes: WebhookChanges, updatedAt: string): Promise<Webhook | null> {
    const key = `${tenantOf(tenant)}#${id}`;
    const current = this.items.get(key);
    if (!current) return null;
    const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
    const updated: Webhook = { ...current, ...structuredClone(defined), updatedAt };
    this.items.set(key, updated);
    return structuredClone(updated);
  }

  async replaceSecrets(
    tenant: Tenant,
    id: string,
    expected: string,
    secrets: StoredSecrets,
    updatedAt: string,
  ): Promise<Webhook | null> {
    if (this.items.get(`${tenantOf(tenant)}#${id}`)?.secret !== expected) return null;
    return this.update(tenant, id, secrets, updatedAt);
  }

  async delete(tenant: Tenant, id: string): Promise<boolean> {
    return this.items.delete(`${tenantOf(tenant)}#${id}`);
  }
}

/** WebhookHealthStore over an InMemoryWebhookRepository's items, with DynamoWebhookHealth's conditions. */
export class InMemoryWebhookHealth implements WebhookHealthStore {
  constructor(readonly webhooks: InMemoryWebhookRepository) {}

  async countFailure(tenant: Tenant, id: string, at: number): Promise<FailureStreak | null> {
    const current = this.webhooks.items.get(`${tenantOf(tenant)}#${id}`);
    if (!current) return null;
    const streaking = typeof current.failingSince === 'number';
    const next: Webhook = streaking
      ? { ...current, failedDeliveries: (current.failedDeliveries ?? 0) + 1 }
      : { ...omitKey(current, 'failingNotifiedAt'), failingSince: at, failedDeliveries: 1 };
    this.put(next);
    return {
      since: next.failingSince ?? 0,
      failures: next.failedDeliveries ?? 0,
      failingNotified: typeof next.failingNotifiedAt === 'number',
    };
  }

  async clearStreak(tenant: Tenant, id: string): Promise<void> {
    const current = this.webhooks.items.get(`${tenantOf(tenant)}#${id}`);
    if (!current || typeof current.failingSince !== 'number') return;
    const { failingSince: _s, failedDeliveries: _f, failingNotifiedAt: _n, ...rest } = current;
    this.put(rest);
  }

  async noteFailing(tenant: Tenant, id: string, since: number, at: number): Promise<boolean> {
    const current = this.webhooks.items.get(`${tenantOf(tenant)}#${id}`);
    if (!current || current.failingSince !== since || typeof current.failingNotifiedAt === 'number') return false;
    this.put({ ...current, failingNotifiedAt: at });
    return true;
  }

  async disable(
    tenant: Tenant,
    id: string,
    reason: DisabledReason,
    at: number,
    since?: number,
  ): Promise<Webhook | null> {
    const current = this.webhooks.items.get(`${tenantOf(tenant)}#${id}`);
    if (!current?.active || (since !== undefined && current.failingSince !== since)) return null;
    const iso = new Date(at).toISOString();
    const next: Webhook = { ...current, active: false, disabledReason: reason, disabledAt: iso, updatedAt: iso };
    this.put(next);
    return structuredClone(next);
  }

  private put(webhook: Webhook): void {
    this.webhooks.items.set(`${tenantOf(webhook)}#${webhook.id}`, structuredClone(webhook));
  }
}

function omitKey<T extends object, K extends keyof T>(value: T, key: K): Omit<T, K> {
  const { [key]: _dropped, ...rest } = value;
  return rest;
}

const liveAt = (delivery: Delivery, nowMs: number) =>
  delivery.expiresAt === undefined || delivery.expiresAt > Math.floor(nowMs / 1000);

export class InMemoryDeliveryRepository implements DeliveryRepository {
  /** Keyed by `webhookId#id`, as the table's key. */
  readonly items = new Map<string, Delivery>();
  /** Every record() call and whether it was stored, for use-case tests. */
  readonly records: { delivery: Delivery; claimedAttempt: number; stored: boolean }[] = [];
  /** Test hook: makes record() refuse, as if another holder had taken the claim. */
  refuseRecords = false;

  async createClaimed(delivery: Delivery): Promise<boolean> {
    const key = `${delivery.webhookId}#${delivery.id}`;
    if (this.items.has(key)) return false;
    this.items.set(key, structuredClone(delivery));
    return true;
  }

  async claim(webhookId: string, id: string, expect: ClaimExpectation, claim: Claim): Promise<Delivery | null> {
    const key = `${webhookId}#${id}`;
    const current = this.items.get(key);
    if (!current || current.attempts !== expect.attemptsBefore || !expect.statuses.includes(current.status))
      return null;
    const held =
      current.claim && current.claim.until >= expect.nowMs && (current.claim.epoch ?? 0) >= (claim.epoch ?? 0);
    if (held) return null;
    const since = expect.claimedBefore;
    if (since !== undefined && Math.max(current.claimedAt ?? -1, current.settledAt ?? -1) >= since) return null;
    const retried = expect.retriedBefore;
    if (retried !== undefined && (current.retriedAt ?? -1) >= retried) return null;
    const claimed: Delivery = {
      ...current,
      claim: { ...claim },
      claimedAt: expect.nowMs,
      ...(retried !== undefined ? { retriedAt: expect.nowMs } : {}),
    };
    this.items.set(key, claimed);
    return structuredClone(claimed);
  }

  async record(delivery: Delivery, claimedAttempt: number): Promise<boolean> {
    const key = `${delivery.webhookId}#${delivery.id}`;
    const stored = !this.refuseRecords && this.items.get(key)?.claim?.attempt === claimedAttempt;
    if (stored) this.items.set(key, structuredClone(delivery));
    this.records.push({ delivery: structuredClone(delivery), claimedAttempt, stored });
    return stored;
  }

  async get(webhookId: string, id: string, nowMs: number): Promise<Delivery | null> {
    const delivery = this.items.get(`${webhookId}#${id}`);
    return delivery && liveAt(delivery, nowMs) ? structuredClone(delivery) : null;
  }

  async getMany(keys: readonly DeliveryKey[], nowMs: number): Promise<Delivery[]> {
    const unique = [...new Set(keys.map(({ webhookId, id }) => `${webhookId}#${id}`))];
    return unique
      .map((key) => this.items.get(key))
      .filter((d): d is Delivery => d !== undefined && liveAt(d, nowMs))
      .map((d) => structuredClone(d));
  }

  async list(webhookId: string, query: DeliveryListQuery, nowMs: number): Promise<DeliveryPage> {
    const { after, errorClass } = query;
    const examine = Math.max(1, query.examine ?? DELIVERY_LIST_EXAMINE);
    // As the table: the rows examined are the webhook's (failed ones only for `status=failed`: their index),
    // newest first, expired ones included (the read filters them); at most `examine` of them.
    const candidates = [...this.items.values()]
      .filter((d) => d.webhookId === webhookId && (query.status !== 'failed' || d.status === 'failed'))
      .filter((d) => after === undefined || d.id < after)
      // As the table: a window's lower end is a key condition (older rows are not examined).
      .filter((d) => query.from === undefined || d.id >= query.from)
      .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    const examined = candidates.slice(0, examine);
    const matching = examined
      .filter((d) => query.status === undefined || d.status === query.status)
      .filter((d) => query.eventTypes === undefined || query.eventTypes.includes(d.event))
      // As the table: the latest attempt's recorded class (an entry stored before classes never matches).
      .filter((d) => errorClass === undefined || d.attemptLog.at(-1)?.errorClass === errorClass)
      .filter((d) => liveAt(d, nowMs));
    const items = matching.slice(0, query.limit).map((d) => structuredClone(d));
    if (matching.length > query.limit) return { items, hasMore: true };
    const last = examined.at(-1);
    if (candidates.length > examined.length && last) return { items, hasMore: true, resumeAfter: last.id };
    return { items, hasMore: false };
  }

  async listDue(dueBefore: number, limit: number, after?: DueDelivery) {
    const order = (d: DueDelivery) => [String(d.nextAttemptAt).padStart(15, '0'), d.webhookId, d.id].join('#');
    return (
      [...this.items.values()]
        // As the table's due index (isDue): retries and re-armed dead letters, not a first attempt in flight.
        .filter((d) => isDue(d) && d.nextAttemptAt !== null && d.nextAttemptAt <= dueBefore)
        .filter((d) => !after || order(d) > order(after))
        .sort((a, b) => (order(a) < order(b) ? -1 : 1))
        .slice(0, limit)
        .map(({ id, webhookId, attempts, nextAttemptAt }) => ({ id, webhookId, attempts, nextAttemptAt }))
    );
  }

  async range(
    webhookId: string,
    query: { from: string; to: string; onlyFailed: boolean; limit: number; after?: string },
    nowMs: number,
  ) {
    const { from, to, after } = query;
    const read = [...this.items.values()]
      .filter((d) => d.webhookId === webhookId && d.id >= from && d.id <= to && (!after || d.id > after))
      .filter((d) => !query.onlyFailed || d.status === 'failed')
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .slice(0, query.limit);
    const ids = read.filter((d) => liveAt(d, nowMs)).map((d) => d.id);
    return { ids, next: read.length === query.limit ? (read.at(-1)?.id ?? null) : null };
  }
}

/** Recovery jobs by `webhookId#id`; every write conditional as in DynamoDB. */
export class InMemoryRecoveryRepository implements RecoveryRepository {
  readonly items = new Map<string, Recovery>();

  async create(recovery: Recovery): Promise<void> {
    const key = `${recovery.webhookId}#${recovery.id}`;
    if (this.items.has(key)) throw new Error(`recovery ${key} exists`);
    this.items.set(key, structuredClone(recovery));
  }

  async get(webhookId: string, id: string, nowMs: number): Promise<Recovery | null> {
    const found = this.items.get(`${webhookId}#${id}`);
    if (!found || found.expiresAt <= Math.floor(nowMs / 1000)) return null;
    return structuredClone(found);
  }

  async list(webhookId: string, nowMs: number, limit: number): Promise<Recovery[]> {
    return [...this.items.values()]
      .filter((r) => r.webhookId === webhookId)
      .sort((a, b) => (a.id < b.id ? 1 : -1))
      .slice(0, limit)
      .filter((r) => r.expiresAt > Math.floor(nowMs / 1000))
      .map((r) => structuredClone(r));
  }

  async lease(webhookId: string, id: string, step: number, lease: Claim, nowMs: number): Promise<Recovery | null> {
    const key = `${webhookId}#${id}`;
    const current = this.items.get(key);
    if (current?.status !== 'running' || current.step !== step) return null;
    const held = current.lease && current.lease.until >= nowMs && (current.lease.epoch ?? 0) >= (lease.epoch ?? 0);
    if (held) return null;
    const leased = { ...current, lease: { ...lease } };
    this.items.set(key, leased);
    return structuredClone(leased);
  }

  async advance(next: Recovery, step: number): Promise<boolean> {
    const key = `${next.webhookId}#${next.id}`;
    const current = this.items.get(key);
    if (current?.status !== 'running' || current.step !== step) return false;
    const { lease: _released, ...item } = next;
    this.items.set(key, structuredClone(item));
    return true;
  }

  async markQueued(webhookId: string, id: string, step: number): Promise<void> {
    const key = `${webhookId}#${id}`;
    const current = this.items.get(key);
    if (current?.status === 'running' && current.step === step) this.items.set(key, { ...current, queuedStep: step });
  }

  async cancel(webhookId: string, id: string, nowMs: number, expiresAt: number): Promise<Recovery | null> {
    const key = `${webhookId}#${id}`;
    const current = this.items.get(key);
    if (current?.status === 'running')
      this.items.set(key, { ...current, status: 'canceled', updatedAt: nowMs, expiresAt });
    return this.get(webhookId, id, nowMs);
  }
}

/** Records every recovery step queued, with its delay. */
export class RecordingRecoveryQueue implements RecoveryQueue {
  readonly sent: { step: RecoveryStep; delaySeconds: number | undefined }[] = [];

  async send(step: RecoveryStep, delaySeconds?: number): Promise<void> {
    this.sent.push({ step: structuredClone(step), delaySeconds });
  }
}

/** Records every send call with its delay. */
export class RecordingDeliveryQueue implements DeliveryQueue {
  readonly sent: { jobs: DeliveryJob[]; delaySeconds: number | undefined }[] = [];

  async send(jobs: readonly DeliveryJob[], delaySeconds?: number): Promise<void> {
    this.sent.push({ jobs: structuredClone([...jobs]), delaySeconds });
  }
}

export class RecordingRetryScheduler implements RetryScheduler {
  readonly scheduled: { job: DeliveryJob; delaySeconds: number }[] = [];

  async schedule(job: DeliveryJob, delaySeconds: number): Promise<void> {
    this.scheduled.push({ job: structuredClone(job), delaySeconds });
  }
}

export class RecordingEventPublisher implements EventPublisher {
  readonly published: { events: SendflowEvent[]; delaySeconds: number | undefined }[] = [];

  async publish(events: readonly SendflowEvent[], delaySeconds?: number): Promise<void> {
    this.published.push({ events: structuredClone([...events]), delaySeconds });
  }
}

/**
 * A WebhookSender that records each request and answers from a script: a fixed outcome, or one computed per
 * call (1-based). Outcomes are stamped with the given clock's time; the default answer is a 200.
 */
export class ScriptedSender implements WebhookSender {
  readonly requests: OutboundRequest[] = [];
  private answer: (n: number) => Partial<AttemptOutcome> | Promise<Partial<AttemptOutcome>> = () => ({
    statusCode: 200,
    error: null,
  });

  constructor(private readonly clock: Clock) {}

  /** A function answer may be async: the attempt stays in flight until it resolves. */
  answers(
    answer: Partial<AttemptOutcome> | ((n: number) => Partial<AttemptOutcome> | Promise<Partial<AttemptOutcome>>),
  ): void {
    this.answer = typeof answer === 'function' ? answer : () => answer;
  }

  async send(request: OutboundRequest): Promise<AttemptOutcome> {
    this.requests.push(structuredClone(request));
    const at = this.clock.now();
    const answer = await this.answer(this.requests.length);
    const outcome = { at, statusCode: 200, durationMs: 25, error: null, response: 'ok', ...answer };
    // Unless told, classed from the status or the text (what the real sender writes for that failure).
    const errorClass = answer.errorClass !== undefined ? answer.errorClass : errorClassOf(outcome);
    return { ...outcome, errorClass, timings: answer.timings ?? NO_TIMINGS };
  }
}

/** Idempotency records as DynamoIdempotencyStore keeps them: claimed, done, lock lapse and 24 h expiry. */
export class InMemoryIdempotencyStore implements IdempotencyStore {
  readonly items = new Map<
    string,
    {
      fingerprint: string;
      state: 'in_progress' | 'done';
      lockedUntil: number;
      expiresAt: number;
      response?: StoredResponse;
    }
  >();

  async begin(key: string, fingerprint: string, nowMs: number): Promise<IdempotencyClaim> {
    const existing = this.items.get(key);
    const reclaimable =
      !existing ||
      existing.expiresAt < Math.floor(nowMs / 1000) ||
      (existing.state === 'in_progress' && existing.lockedUntil < nowMs);
    if (reclaimable) {
      this.items.set(key, {
        fingerprint,
        state: 'in_progress',
        lockedUntil: nowMs + IDEMPOTENCY_LOCK_MS,
        expiresAt: Math.floor((nowMs + IDEMPOTENCY_TTL_MS) / 1000),
      });
      return { kind: 'new' };
    }
    if (existing.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (existing.state === 'done' && existing.response) return { kind: 'replay', response: { ...existing.response } };
    return { kind: 'in_progress' };
  }

  async complete(key: string, fingerprint: string, response: StoredResponse): Promise<void> {
    const existing = this.items.get(key);
    // The adapter's conditional update fails the same way when the key is no longer this request's.
    if (existing?.fingerprint !== fingerprint) throw new Error(`Idempotency record ${key} is not this request's.`);
    this.items.set(key, { ...existing, state: 'done', response: { ...response } });
  }

  async release(key: string, fingerprint: string): Promise<void> {
    const existing = this.items.get(key);
    if (existing?.fingerprint === fingerprint && existing.state === 'in_progress') this.items.delete(key);
  }
}

/** The monthly counter: refused (and unchanged) past the limit, as DynamoQuotaCounter's conditional ADD. */
export class InMemoryQuotaCounter implements QuotaCounter {
  /** Keyed by `accountId#YYYY-MM`. */
  readonly counts = new Map<string, number>();

  async consume(accountId: string, window: QuotaWindow, count: number, limit: number): Promise<boolean> {
    const key = `${accountId}#${window.month}`;
    const used = this.counts.get(key) ?? 0;
    if (count > limit || used + count > limit) return false;
    this.counts.set(key, used + count);
    return true;
  }

  async release(accountId: string, window: QuotaWindow, count: number): Promise<void> {
    const key = `${accountId}#${window.month}`;
    const used = this.counts.get(key) ?? 0;
    if (used >= count) this.counts.set(key, used - count);
  }

  async used(accountId: string, window: QuotaWindow): Promise<number> {
    return this.counts.get(`${accountId}#${window.month}`) ?? 0;
  }
}

export class InMemorySuppressionList implements SuppressionList {
  /** Keyed by `account#mode#address`. */
  readonly items = new Map<string, Suppression>();
  /** `account#mode#address#emailId` of every recorded one-click unsubscribe. */
  readonly unsubscribes = new Set<string>();
  readonly outbox = new InMemoryOutbox('suppressions');

  async unsubscribe(
    tenant: Tenant,
    suppression: Suppression & { readonly emailId: string },
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null> {
    const key = `${tenantOf(tenant)}#${suppression.address}`;
    if (this.unsubscribes.has(`${key}#${suppression.emailId}`)) return null;
    this.unsubscribes.add(`${key}#${suppression.emailId}`);
    if (!this.items.has(key)) this.items.set(key, structuredClone(suppression));
    return this.outbox.record({ tenant: tenantOf(tenant), address: suppression.address }, events);
  }

  async add(tenant: Tenant, suppression: Suppression): Promise<boolean> {
    const key = `${tenantOf(tenant)}#${suppression.address}`;
    if (this.items.has(key)) return false;
    this.items.set(key, structuredClone(suppression));
    return true;
  }

  async find(tenant: Tenant, addresses: readonly string[]): Promise<Map<string, Suppression>> {
    const found = new Map<string, Suppression>();
    for (const address of addresses) {
      const suppression = this.items.get(`${tenantOf(tenant)}#${address}`);
      if (suppression) found.set(address, structuredClone(suppression));
    }
    return found;
  }

  async record(
    tenant: Tenant,
    suppression: Suppression,
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null> {
    const key = `${tenantOf(tenant)}#${suppression.address}`;
    if (this.items.has(key)) return null;
    this.items.set(key, structuredClone(suppression));
    return this.outbox.record({ tenant: tenantOf(tenant), address: suppression.address }, events);
  }

  async remove(tenant: Tenant, address: string, events: readonly SendflowEvent[]): Promise<PendingEvents | null> {
    const key = `${tenantOf(tenant)}#${address}`;
    if (!this.items.delete(key)) return null;
    for (const unsubscribed of [...this.unsubscribes].filter((u) => u.startsWith(`${key}#`))) {
      this.unsubscribes.delete(unsubscribed);
    }
    return this.outbox.record({ tenant: tenantOf(tenant), address }, events);
  }

  async list(tenant: Tenant, query: SuppressionQuery): Promise<SuppressionPage> {
    const prefix = `${tenantOf(tenant)}#`;
    const all = [...this.items.entries()]
      .filter(([key]) => key.startsWith(prefix))
      .map(([, item]) => structuredClone(item))
      .filter((item) => !query.reasons?.length || query.reasons.includes(item.reason))
      .filter((item) => query.after === undefined || item.address > query.after)
      .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
    const items = all.slice(0, query.limit);
    const hasMore = all.length > query.limit;
    return { items, hasMore, nextAfter: hasMore ? (items.at(-1)?.address ?? null) : null };
  }
}

/**
 * An outbox as DynamoOutbox keeps one per table: events recorded with a state change (in the same synchronous
 * step here, which is what one item write is there), cleared exactly, listed by age. `failClears` makes the
 * next clears throw (fault injection).
 */
export class InMemoryOutbox implements Outbox {
  readonly entries = new Map<string, { ref: OutboxRef; events: Map<string, SendflowEvent>; since: number }>();
  failClears = 0;

  constructor(readonly name: string) {}

  record(ref: OutboxRef, events: readonly SendflowEvent[]): PendingEvents {
    const key = JSON.stringify(ref);
    if (events.length) {
      const entry = this.entries.get(key) ?? { ref, events: new Map(), since: Number.POSITIVE_INFINITY };
      for (const event of events) entry.events.set(event.id, structuredClone(event));
      entry.since = Math.min(entry.since, ...events.map((event) => Date.parse(event.timestamp)));
      this.entries.set(key, entry);
    }
    return { ref, events: structuredClone([...events]) };
  }

  async clear(pending: PendingEvents): Promise<void> {
    if (this.failClears > 0) {
      this.failClears -= 1;
      throw new Error(`clearing the ${this.name} outbox failed (injected)`);
    }
    const key = JSON.stringify(pending.ref);
    const entry = this.entries.get(key);
    if (!entry) return;
    for (const event of pending.events) entry.events.delete(event.id);
    if (entry.events.size === 0) this.entries.delete(key);
  }

  async due(before: number, limit: number): Promise<PendingEvents[]> {
    return [...this.entries.values()]
      .filter((entry) => entry.since <= before)
      .sort((a, b) => a.since - b.since)
      .slice(0, limit)
      .map((entry) => ({ ref: entry.ref, events: structuredClone([...entry.events.values()]) }));
  }

  /** Every event waiting in this outbox. */
  waiting(): SendflowEvent[] {
    return [...this.entries.values()].flatMap((entry) => [...entry.events.values()]);
  }
}

const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export class InMemoryDomainRepository implements DomainRepository {
  /** Keyed by `account#mode#id`. */
  readonly items = new Map<string, Domain>();
  /** Domain name → the account holding it. */
  readonly names = new Map<string, string>();
  readonly outbox = new InMemoryOutbox('domains');

  async claimName(name: string, accountId: string): Promise<boolean> {
    const holder = this.names.get(name);
    if (holder && holder !== accountId) return false;
    this.names.set(name, accountId);
    return true;
  }

  async releaseName(name: string, accountId: string): Promise<void> {
    if (this.names.get(name) === accountId) this.names.delete(name);
  }

  async nameHolder(name: string): Promise<string | null> {
    return this.names.get(name) ?? null;
  }

  async setCapabilities(
    tenant: Tenant,
    id: string,
    change: Pick<Domain, 'capabilities' | 'records'>,
    at: string,
    events: readonly SendflowEvent[],
  ): Promise<Recorded<Domain> | null> {
    const key = `${tenantOf(tenant)}#${id}`;
    const current = this.items.get(key);
    if (!current) return null;
    const updated: Domain = { ...current, ...structuredClone(change), updatedAt: at };
    this.items.set(key, updated);
    return { value: structuredClone(updated), pending: this.outbox.record({ tenant: tenantOf(tenant), id }, events) };
  }

  async create(domain: Domain, events: readonly SendflowEvent[]): Promise<PendingEvents | null> {
    const key = `${tenantOf(domain)}#${domain.id}`;
    if (this.items.has(key)) return null;
    // As the DynamoDB adapter reads a domain stored without capabilities.
    this.items.set(key, structuredClone({ capabilities: DEFAULT_CAPABILITIES, ...domain }));
    return this.outbox.record({ tenant: tenantOf(domain), id: domain.id }, events);
  }

  async get(tenant: Tenant, id: string): Promise<Domain | null> {
    const domain = this.items.get(`${tenantOf(tenant)}#${id}`);
    return domain ? structuredClone(domain) : null;
  }

  async list(tenant: Tenant): Promise<Domain[]> {
    return [...this.items.values()]
      .filter((domain) => tenantOf(domain) === tenantOf(tenant))
      .sort(byId)
      .map((domain) => structuredClone(domain));
  }

  async setStatus(
    tenant: Tenant,
    id: string,
    change: { from: DomainStatus; to: DomainStatus; at: string },
    events: readonly SendflowEvent[],
  ): Promise<Recorded<Domain> | null> {
    const key = `${tenantOf(tenant)}#${id}`;
    const current = this.items.get(key);
    if (current?.status !== change.from) return null;
    const updated: Domain = { ...current, status: change.to, updatedAt: change.at };
    this.items.set(key, updated);
    return { value: structuredClone(updated), pending: this.outbox.record({ tenant: tenantOf(tenant), id }, events) };
  }

  async setTracking(
    tenant: Tenant,
    id: string,
    tracking: Partial<Pick<Domain, 'openTracking' | 'clickTracking'>>,
    at: string,
    events: readonly SendflowEvent[],
  ): Promise<Recorded<Domain> | null> {
    const key = `${tenantOf(tenant)}#${id}`;
    const current = this.items.get(key);
    if (!current) return null;
    const updated: Domain = { ...current, ...tracking, updatedAt: at };
    this.items.set(key, updated);
    return { value: structuredClone(updated), pending: this.outbox.record({ tenant: tenantOf(tenant), id }, events) };
  }

  async delete(
    tenant: Tenant,
    id: string,
    _at: string,
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null> {
    if (!this.items.delete(`${tenantOf(tenant)}#${id}`)) return null;
    return this.outbox.record({ tenant: tenantOf(tenant), id }, events);
  }

  async listPending(limit: number): Promise<Domain[]> {
    return [...this.items.values()]
      .filter((domain) => domain.status === 'pending')
      .sort(byId)
      .slice(0, limit)
      .map((domain) => structuredClone(domain));
  }
}

export class InMemoryContactRepository implements ContactRepository {
  /** Keyed by `account#mode#id`. */
  readonly items = new Map<string, Contact>();
  readonly outbox = new InMemoryOutbox('contacts');

  async create(contact: Contact, events: readonly SendflowEvent[]): Promise<PendingEvents | null> {
    const key = `${tenantOf(contact)}#${contact.id}`;
    if (this.items.has(key)) return null;
    this.items.set(key, structuredClone(contact));
    return this.outbox.record({ tenant: tenantOf(contact), id: contact.id }, events);
  }

  async get(tenant: Tenant, id: string): Promise<Contact | null> {
    const contact = this.items.get(`${tenantOf(tenant)}#${id}`);
    return contact ? structuredClone(contact) : null;
  }

  async list(tenant: Tenant): Promise<Contact[]> {
    return [...this.items.values()]
      .filter((contact) => tenantOf(contact) === tenantOf(tenant))
      .sort(byId)
      .map((contact) => structuredClone(contact));
  }

  async update(
    tenant: Tenant,
    id: string,
    changes: ContactChanges,
    at: string,
    announce: (updated: Contact) => SendflowEvent[],
  ): Promise<Recorded<Contact> | null> {
    const key = `${tenantOf(tenant)}#${id}`;
    const current = this.items.get(key);
    if (!current) return null;
    const updated: Record<string, unknown> = { ...current, updatedAt: at };
    for (const field of ['firstName', 'lastName'] as const) {
      const value = changes[field];
      if (value === null) delete updated[field];
      else if (value !== undefined) updated[field] = value;
    }
    const contact = updated as unknown as Contact;
    this.items.set(key, contact);
    const pending = this.outbox.record({ tenant: tenantOf(tenant), id }, announce(structuredClone(contact)));
    return { value: structuredClone(contact), pending };
  }

  async subscribe(
    tenant: Tenant,
    id: string,
    at: string,
    announce: (subscribed: Contact) => SendflowEvent[],
  ): Promise<Recorded<Contact> | null> {
    const key = `${tenantOf(tenant)}#${id}`;
    const current = this.items.get(key);
    if (current?.status !== 'pending') return null;
    const subscribed: Contact = { ...current, status: 'subscribed', subscribedAt: at, updatedAt: at };
    this.items.set(key, subscribed);
    const pending = this.outbox.record({ tenant: tenantOf(tenant), id }, announce(structuredClone(subscribed)));
    return { value: structuredClone(subscribed), pending };
  }

  async delete(
    tenant: Tenant,
    id: string,
    _at: string,
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null> {
    if (!this.items.delete(`${tenantOf(tenant)}#${id}`)) return null;
    return this.outbox.record({ tenant: tenantOf(tenant), id }, events);
  }
}

/** Every accepted email waits for the send worker until every recipient is settled, or it is cancelled. */
export class InMemoryEmailRepository implements EmailRepository {
  readonly items = new Map<string, EmailRecord>();
  /** Ids of emails still waiting (the byScheduleShard index). */
  readonly waiting = new Set<string>();
  readonly outbox = new InMemoryOutbox('emails');
  readonly batches = new Map<string, BatchState>();
  /** Fault injection: the write (1-based, counted across createMany's emails) that throws. */
  failOnWrite: number | null = null;
  private writes = 0;

  async createMany(
    emails: readonly EmailRecord[],
    events: readonly SendflowEvent[] = [],
    options: { readonly queued?: boolean } = {},
  ): Promise<PendingEvents[]> {
    const recorded: PendingEvents[] = [];
    for (const email of emails) {
      this.writes += 1;
      if (this.failOnWrite === this.writes) throw new Error(`write ${this.writes} failed (injected)`);
      // As the table's conditional put: a queued email's id given up on (abandon) is never stored (the same email
      // stored again, a retried put, is the store done).
      if (options.queued && this.abandoned.has(email.id))
        throw new Error(`Email ${email.id} was abandoned by the send worker before it was stored`);
      this.items.set(email.id, structuredClone(email));
      if (!email.sentAt && !email.canceledAt && !options.queued) this.waiting.add(email.id);
      const own = events.filter((event) => event.emailId === email.id);
      recorded.push(this.outbox.record({ id: email.id }, own));
    }
    return recorded;
  }

  /** Always consistent: one copy of each item. */
  async get(id: string, options: { metadataOnly?: boolean; consistent?: boolean } = {}): Promise<EmailRecord | null> {
    const email = this.items.get(id);
    if (!email) return null;
    if (options.metadataOnly) {
      const { html: _html, text: _text, recipientStates: _states, ...meta } = email;
      return structuredClone({ ...meta, headers: {}, unsubscribeUrls: {} });
    }
    const states = email.recipientStates ?? {};
    const byState = recipients(email).filter((_, i) => states[String(i)]?.state === 'suppressed');
    return structuredClone({ ...email, suppressed: [...new Set([...email.suppressed, ...byState])] });
  }

  async list(tenant: Tenant, query: EmailListQuery): Promise<EmailPage> {
    const { after, to } = query;
    const examine = Math.max(1, query.examine ?? EMAIL_LIST_EXAMINE);
    // As the table: the tenant's emails newest first, at most `examine` of them examined, matching or not.
    const candidates = [...this.items.values()]
      .filter((e) => e.accountId === tenant.accountId && e.mode === tenant.mode)
      .filter((e) => after === undefined || e.id < after)
      .filter((e) => query.from === undefined || e.id >= query.from)
      .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    const examined = candidates.slice(0, examine);
    const matching = examined.filter((e) => to === undefined || recipients(e).some((r) => bareAddress(r) === to));
    const page = await this.listedByIds(
      tenant,
      matching.slice(0, query.limit).map((e) => e.id),
    );
    if (matching.length > query.limit) return { items: page, hasMore: true };
    const last = examined.at(-1);
    if (candidates.length > examined.length && last) return { items: page, hasMore: true, resumeAfter: last.id };
    return { items: page, hasMore: false };
  }

  async listedByIds(tenant: Tenant, ids: readonly string[], to?: string): Promise<EmailRecord[]> {
    const listed: EmailRecord[] = [];
    for (const id of ids) {
      const email = await this.get(id);
      if (!email || email.accountId !== tenant.accountId || email.mode !== tenant.mode) continue;
      if (to !== undefined && !recipients(email).some((r) => bareAddress(r) === to)) continue;
      // The bodies and headers are never read for a listing (the list view shows none of them).
      const { html: _html, text: _text, ...rest } = email;
      listed.push({ ...rest, headers: {} });
    }
    return listed;
  }

  async decideBatch(
    batchId: string,
    state: BatchState,
    events: readonly SendflowEvent[] = [],
  ): Promise<{ state: BatchState; pending: PendingEvents | null }> {
    const decided = this.batches.get(batchId);
    if (decided) return { state: decided, pending: null };
    this.batches.set(batchId, state);
    return { state, pending: this.outbox.record({ id: batchId }, events) };
  }

  async batchState(batchId: string): Promise<BatchState | null> {
    return this.batches.get(batchId) ?? null;
  }

  async startSending(
    id: string,
    at: string,
    options: { scheduled?: boolean; dueBy?: string } = {},
  ): Promise<SendingEmail | null> {
    const email = this.items.get(id);
    if (!email || email.canceledAt) return null;
    // As the table: a scheduled one starts only while it waits in the index; one sent now is read whatever.
    if (options.scheduled !== false && !this.waiting.has(id)) return null;
    if (options.dueBy !== undefined && !(email.scheduledAt !== undefined && email.scheduledAt <= options.dueBy))
      return null;
    const sentAt = options.scheduled === false ? email.sentAt : (email.sentAt ?? at);
    const started: EmailRecord = {
      ...email,
      ...(sentAt !== undefined ? { sentAt } : {}),
      recipientStates: email.recipientStates ?? {},
    };
    this.items.set(id, started);
    const got = await this.get(id);
    return got && { ...got, indexed: this.waiting.has(id) };
  }

  /** As the table: kept until the retention after its first due time (or acceptance), fixed at acceptance. */
  async reschedule(id: string, scheduledAt: string): Promise<RescheduleResult> {
    const email = this.items.get(id);
    if (!email?.scheduledAt || !this.waiting.has(id) || email.sentAt || email.canceledAt)
      return { kind: 'not_waiting' };
    const keptUntil =
      this.keptUntil.get(id) ?? Math.max(Date.parse(email.createdAt), Date.parse(email.scheduledAt)) + this.retentionMs;
    this.keptUntil.set(id, keptUntil);
    if (Date.parse(scheduledAt) + RESCHEDULE_MARGIN_MS > keptUntil) {
      return { kind: 'beyond_retention', latest: new Date(keptUntil - RESCHEDULE_MARGIN_MS).toISOString() };
    }
    this.items.set(id, { ...email, scheduledAt });
    return { kind: 'rescheduled' };
  }

  /** Emails are kept this long after their first due time (the stage's retention; 30 days by default). */
  retentionMs = 30 * 86_400_000;
  private readonly keptUntil = new Map<string, number>();

  async cancel(id: string, at: string): Promise<EmailRecord | null> {
    const email = this.items.get(id);
    if (!email || !this.waiting.has(id) || email.sentAt) return null;
    this.items.set(id, { ...email, canceledAt: at });
    this.waiting.delete(id);
    return this.get(id);
  }

  async setRecipient(
    id: string,
    index: number,
    expect: RecipientExpectation,
    to: RecipientState,
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null> {
    const email = this.items.get(id);
    if (!email?.recipientStates) return null;
    const current = email.recipientStates[String(index)];
    const holds =
      expect.state === 'pending'
        ? current === undefined || current.state === 'pending'
        : expect.state === 'claimed'
          ? current?.state === 'claimed' && current.tries === expect.tries
          : expect.state === 'orphaned'
            ? current?.state === 'claimed' && current.epoch !== undefined && current.epoch < expect.epoch
            : current?.state === 'claimed' && current.until < expect.now;
    if (!holds) return null;
    this.items.set(id, { ...email, recipientStates: { ...email.recipientStates, [String(index)]: { ...to } } });
    return this.outbox.record({ id }, events);
  }

  async recipientStates(id: string): Promise<Readonly<Record<string, RecipientState>> | null> {
    const email = this.items.get(id);
    return email ? structuredClone(email.recipientStates ?? {}) : null;
  }

  /** Due times moved by deferSend (otherwise scheduledAt or createdAt). */
  readonly deferred = new Map<string, number>();

  async deferSend(id: string, untilMs: number): Promise<void> {
    const email = this.items.get(id);
    // As the table: never a cancelled email, nor a scheduled one not started (it stays at its time).
    if (!email || email.canceledAt || (email.scheduledAt && !email.sentAt)) return;
    this.waiting.add(id);
    this.deferred.set(id, untilMs);
  }

  /** Ids given up on by abandon(). */
  readonly abandoned = new Set<string>();

  async abandon(id: string): Promise<boolean> {
    if (this.items.has(id) || this.abandoned.has(id)) return false;
    this.abandoned.add(id);
    return true;
  }

  async finishSending(id: string): Promise<void> {
    this.waiting.delete(id);
  }

  async listScheduled(dueBefore: number, limit: number): Promise<{ id: string; sendAt: number }[]> {
    return [...this.items.values()]
      .filter((email) => this.waiting.has(email.id))
      .map((email) => ({
        id: email.id,
        sendAt:
          this.deferred.get(email.id) ?? Math.max(0, Math.floor(Date.parse(email.scheduledAt ?? email.createdAt))),
      }))
      .filter((entry) => entry.sendAt <= dueBefore)
      .sort((a, b) => a.sendAt - b.sendAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, limit);
  }
}

/** Email bodies in memory, one per email, as written (the first write stays: a body is never rewritten). */
export class InMemoryEmailBodyStore implements EmailBodyStore {
  readonly items = new Map<string, { body: EmailBody; expiresAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async putMany(bodies: readonly { emailId: string; body: EmailBody; expiresAt: number }[]): Promise<void> {
    for (const { emailId, body, expiresAt } of bodies) {
      if (!this.items.has(emailId)) this.items.set(emailId, structuredClone({ body, expiresAt }));
    }
  }

  async get(emailId: string): Promise<EmailBody | null> {
    const stored = this.items.get(emailId);
    if (!stored || stored.expiresAt * 1000 <= this.now()) return null;
    const { headers, ...body } = structuredClone(stored.body);
    // As every adapter: headers on no prototype (a header may be named `__proto__`).
    return { ...body, headers: Object.assign(Object.create(null), headers) };
  }
}

/** Email histories in memory: one entry per event id, read newest first by (time, id) as the byTime index. */
export class InMemoryEmailHistory implements EmailHistory {
  readonly items = new Map<string, Map<string, EmailEventEntry>>();
  readonly statuses = new Map<string, NotedStatus & { tenant: string }>();

  async noteStatus(tenant: Tenant, emailId: string, noted: NotedStatus): Promise<void> {
    const held = this.statuses.get(emailId);
    if (held && held.rank >= noted.rank) return;
    // As the adapter: a scanned status is noted only to take an indexed email out of the index.
    if (!isIndexedStatus(noted.status) && (!held || !isIndexedStatus(held.status))) return;
    this.statuses.set(emailId, { ...noted, tenant: `${tenant.accountId}#${tenant.mode}` });
  }

  async idsByStatus(tenant: Tenant, status: string, page: { limit: number; after?: string }): Promise<StatusPage> {
    const key = `${tenant.accountId}#${tenant.mode}`;
    const ids = [...this.statuses]
      .filter(
        ([id, noted]) =>
          noted.tenant === key &&
          noted.status === status &&
          isIndexedStatus(status) &&
          (!page.after || id < page.after),
      )
      .map(([id]) => id)
      .sort()
      .reverse();
    return { ids: ids.slice(0, page.limit), hasMore: ids.length > page.limit };
  }

  async record(emailId: string, entry: EmailEventEntry): Promise<boolean> {
    const events = this.items.get(emailId) ?? new Map<string, EmailEventEntry>();
    this.items.set(emailId, events);
    if (events.has(entry.id)) return false;
    events.set(entry.id, structuredClone(entry));
    return true;
  }

  async recorded(emailId: string, eventIds: readonly string[]): Promise<ReadonlySet<string>> {
    const events = this.items.get(emailId);
    return new Set(eventIds.filter((id) => events?.has(id)));
  }

  async latest(emailId: string, limit: number): Promise<HistoryPage> {
    const events = [...(this.items.get(emailId)?.values() ?? [])].sort((a, b) =>
      historyOrderKey(a) < historyOrderKey(b) ? -1 : historyOrderKey(a) > historyOrderKey(b) ? 1 : 0,
    );
    return {
      events: structuredClone(events.slice(Math.max(0, events.length - limit))),
      truncated: events.length > limit,
    };
  }
}

/**
 * Records every send: the email and each recipient's copy with its headers. Each copy is taken unless
 * `outcome` says otherwise (per recipient address); `throws` makes the next calls fail outright.
 */
export class RecordingEmailProvider implements EmailProvider {
  readonly sent: { email: EmailMessage; copies: OutgoingCopy[]; attachments?: OutgoingAttachment[] }[] = [];
  outcome: (to: string) => CopyOutcome = () => ({ status: 'sent' });
  throws = 0;
  /** Runs inside each call, after it is recorded (e.g. to stage a crash mid-send). */
  during: () => Promise<void> | void = () => {};

  async send(
    email: EmailMessage,
    copies: readonly OutgoingCopy[],
    attachments?: readonly OutgoingAttachment[],
  ): Promise<CopyOutcome[]> {
    this.sent.push({
      email: structuredClone(email),
      copies: structuredClone([...copies]),
      ...(attachments ? { attachments: structuredClone([...attachments]) } : {}),
    });
    await this.during();
    if (this.throws > 0) {
      this.throws -= 1;
      const error = new Error('connect ETIMEDOUT (injected)');
      error.name = 'TimeoutError';
      throw error;
    }
    return copies.map((copy) => this.outcome(copy.to));
  }

  /** Every recipient a copy went to, in order. */
  recipients(): string[] {
    return this.sent.flatMap((send) => send.copies.map((copy) => copy.to));
  }
}

export class RecordingSendScheduler implements SendScheduler {
  readonly scheduled: { emailId: string; atMs: number }[] = [];
  readonly rescheduled: { emailId: string; atMs: number }[] = [];
  readonly canceled: string[] = [];

  async schedule(emailId: string, atMs: number): Promise<void> {
    this.scheduled.push({ emailId, atMs });
  }

  async reschedule(emailId: string, atMs: number): Promise<void> {
    this.rescheduled.push({ emailId, atMs });
  }

  async cancel(emailId: string): Promise<void> {
    this.canceled.push(emailId);
  }
}

/**
 * A domain provider whose verification state tests set per name (pending until told otherwise); records
 * registrations and removals. `onStatus` runs before each status answer, to stage races.
 */
export class ScriptedDomainProvider implements DomainProvider {
  readonly statuses = new Map<string, DomainStatus>();
  readonly registered: string[] = [];
  readonly removed: string[] = [];
  /** Names the provider already has as identities Sendflow did not create (the operator's own). */
  readonly unavailable = new Set<string>();
  onStatus: (name: string) => Promise<void> | void = () => {};

  async register(name: string, _accountId?: string): Promise<readonly DnsRecord[]> {
    if (this.unavailable.has(name)) throw new IdentityUnavailableError(name);
    this.registered.push(name);
    return [1, 2, 3].map((i) => ({
      type: 'CNAME' as const,
      name: `tok${i}._domainkey.${name}`,
      value: `tok${i}.dkim.amazonses.com`,
    }));
  }

  async status(domain: Pick<Domain, 'name' | 'createdAt'>): Promise<DomainStatus> {
    await this.onStatus(domain.name);
    return this.statuses.get(domain.name) ?? 'pending';
  }

  async remove(name: string): Promise<void> {
    this.removed.push(name);
  }
}

/** Link signing with a fixed secret and base URL. */
export function fixedLinks(secret = 'link-secret-for-tests', baseUrl = 'https://api.sendflow.test/v1'): LinkSigner {
  return { secret: () => Promise.resolve(secret), baseUrl: () => baseUrl };
}

/** Links whose secret cannot be read right now (Secrets Manager failing on AWS): every use is a 503. */
export function unreadableLinks(baseUrl = 'https://api.sendflow.test/v1'): LinkSigner {
  return {
    secret: () => Promise.reject(new ServiceUnavailableError('Links cannot be signed or checked right now.')),
    baseUrl: () => baseUrl,
  };
}

/** Counts authorizer-cache flushes. */
export class RecordingAuthorizerCache implements AuthorizerCache {
  flushes = 0;

  async flush(): Promise<void> {
    this.flushes += 1;
  }
}

/** Telemetry that keeps every report, and counts flushes. */
export class RecordingTelemetry implements Telemetry {
  readonly attempts: AttemptReport[] = [];
  readonly requests: RequestReport[] = [];
  readonly emailCounts: { outcome: EmailOutcome; count: number }[] = [];
  readonly sendLags: number[] = [];
  flushes = 0;

  sendStarted(lagMs: number): void {
    this.sendLags.push(lagMs);
  }

  attempted(report: AttemptReport): void {
    this.attempts.push(report);
  }

  requested(report: RequestReport): void {
    this.requests.push(report);
  }

  emails(outcome: EmailOutcome, count: number): void {
    this.emailCounts.push({ outcome, count });
  }

  flush(): void {
    this.flushes += 1;
  }

  /** Total of one email outcome. */
  emailTotal(outcome: EmailOutcome): number {
    return this.emailCounts.filter((e) => e.outcome === outcome).reduce((sum, e) => sum + e.count, 0);
  }
}

/** Sign-in links and sessions as DynamoSessionStore keeps them: a link redeemed once, expiry by epoch seconds. */
export class InMemorySessionStore implements SessionStore {
  readonly items = new Map<string, (SignInRecord & { usedAt?: number }) | SessionRecord>();

  async putSignIn(record: SignInRecord): Promise<void> {
    this.items.set(record.hash, { ...record });
  }

  async redeemSignIn(hash: string, nowMs: number): Promise<SignInRecord | null> {
    const item = this.items.get(hash);
    if (item?.kind !== 'sign-in' || item.usedAt !== undefined || item.expiresAt <= Math.floor(nowMs / 1000))
      return null;
    this.items.set(hash, { ...item, usedAt: nowMs });
    const { usedAt: _used, ...record } = item;
    return record;
  }

  async peekSignIn(hash: string, nowMs: number): Promise<SignInRecord | null> {
    const item = this.items.get(hash);
    if (item?.kind !== 'sign-in' || item.usedAt !== undefined || item.expiresAt <= Math.floor(nowMs / 1000))
      return null;
    const { usedAt: _used, ...record } = item;
    return record;
  }

  async putSession(record: SessionRecord): Promise<void> {
    if (this.items.has(record.hash)) throw new Error(`Session ${record.hash} exists.`);
    this.items.set(record.hash, { ...record });
  }

  async getSession(hash: string, nowMs: number): Promise<SessionRecord | null> {
    const item = this.items.get(hash);
    return item?.kind === 'session' && item.expiresAt > Math.floor(nowMs / 1000) ? { ...item } : null;
  }

  async setMode(hash: string, mode: Mode, nowMs: number): Promise<SessionRecord | null> {
    const current = await this.getSession(hash, nowMs);
    if (!current) return null;
    const updated = { ...current, mode };
    this.items.set(hash, updated);
    return { ...updated };
  }

  async deleteSession(hash: string): Promise<void> {
    this.items.delete(hash);
  }

  readonly signedOut = new Map<string, { at: number; expiresAt: number }>();

  async signOutEverywhere(accountId: string, atMs: number, expiresAt: number): Promise<void> {
    this.signedOut.set(accountId, { at: atMs, expiresAt });
  }

  async signedOutEverywhereAt(accountId: string, nowMs: number): Promise<number | null> {
    const mark = this.signedOut.get(accountId);
    return mark && mark.expiresAt > Math.floor(nowMs / 1000) ? mark.at : null;
  }

  async revokeAccount(accountId: string): Promise<number> {
    const mine = [...this.items.values()].filter((item) => item.accountId === accountId);
    for (const item of mine) this.items.delete(item.hash);
    return mine.length;
  }
}

/** The API request log as DynamoApiRequestLog keeps it: per account and mode, newest first, expired ones hidden. */
export class InMemoryApiRequestLog implements ApiRequestLog {
  readonly entries: ApiRequestEntry[] = [];

  async record(entry: ApiRequestEntry): Promise<void> {
    this.entries.push(structuredClone(entry));
  }

  async get(accountId: string, mode: Mode, id: string, nowMs: number): Promise<ApiRequestEntry | null> {
    const found = this.entries.find((e) => e.accountId === accountId && e.mode === mode && e.id === id);
    return found && found.expiresAt > Math.floor(nowMs / 1000) ? structuredClone(found) : null;
  }

  async recent(
    accountId: string,
    mode: Mode,
    limit: number,
    nowMs: number,
    before?: string,
  ): Promise<ApiRequestEntry[]> {
    return (await this.search(accountId, mode, {}, limit, nowMs, before)).entries;
  }

  async search(
    accountId: string,
    mode: Mode,
    filter: ApiRequestFilter,
    limit: number,
    nowMs: number,
    before?: string,
  ): Promise<ApiRequestPage> {
    const now = Math.floor(nowMs / 1000);
    const found = this.entries
      .filter((e) => e.accountId === accountId && e.mode === mode && (before === undefined || e.id < before))
      .filter((e) => e.expiresAt > now && matchesFilter(e, filter))
      .sort((a, b) => (a.id < b.id ? 1 : -1));
    const entries = found
      .slice(0, limit)
      .map(({ requestBody: _b, responseBody: _r, query: _q, ...row }) => ({ ...row }));
    return { entries, next: found.length > limit ? (entries.at(-1)?.id ?? null) : null };
  }
}

/**
 * The delivery worker's dependencies on fresh in-memory fakes: a scripted sender on `clock`, a recorded retry
 * scheduler and recovery queue, four retry delays. Pass the fakes a test inspects (or any other) as overrides.
 */
export function inMemoryRecoveryDeps(clock: FakeClock, overrides: Partial<RecoveryDeps> = {}): RecoveryDeps {
  return {
    webhooks: new InMemoryWebhookRepository(),
    deliveries: new InMemoryDeliveryRepository(),
    sender: new ScriptedSender(clock),
    retries: new RecordingRetryScheduler(),
    recoveries: new InMemoryRecoveryRepository(),
    recoveryQueue: new RecordingRecoveryQueue(),
    clock,
    random: seededRandom(),
    policy: { delaysSeconds: [1, 30, 300, 1800] },
    claimMs: 40_000,
    retentionSeconds: 30 * 86_400,
    ...overrides,
  };
}

/** Per-email ordering lanes in memory, as DynamoOrderLanes keeps them (one entry per delivery, by sequence). */
export class InMemoryOrderLanes implements OrderLanes {
  readonly lanes = new Map<string, Map<string, LaneEntry>>();

  async enter(lane: LaneKey, entry: LaneEntry, _expiresAt: number): Promise<LaneEntry[]> {
    const key = `${lane.webhookId}#${lane.emailId}`;
    const entries = this.lanes.get(key) ?? new Map<string, LaneEntry>();
    entries.set(entry.deliveryId, { ...entry });
    this.lanes.set(key, entries);
    return sortedLane(entries);
  }

  async read(lane: LaneKey): Promise<LaneEntry[]> {
    return sortedLane(this.lanes.get(`${lane.webhookId}#${lane.emailId}`) ?? new Map());
  }

  async leave(lane: LaneKey, deliveryId: string): Promise<LaneEntry[]> {
    const entries = this.lanes.get(`${lane.webhookId}#${lane.emailId}`);
    entries?.delete(deliveryId);
    return sortedLane(entries ?? new Map());
  }
}

function sortedLane(entries: ReadonlyMap<string, LaneEntry>): LaneEntry[] {
  return [...entries.values()]
    .map((entry) => ({ ...entry }))
    .sort((a, b) => a.sequence - b.sequence || (a.deliveryId < b.deliveryId ? -1 : 1));
}

/**
 * Sending reputation in memory (app/reputation/ports): counters by tenant, day and domain (no shards: the sums are
 * what the port returns), standings by tenant and subject with the conditional writes of the DynamoDB adapter.
 */
export class InMemoryReputationStore implements ReputationStore {
  readonly outbox = new InMemoryOutbox('reputation');
  /** `account#mode` → `a#day` / `d#day#domain` → counts. */
  readonly counters = new Map<string, Map<string, Counts>>();
  /** `account#mode` → subject key → standing. */
  readonly standingsByTenant = new Map<string, Map<string, Standing>>();
  /** Makes the next `count` calls throw (fault injection). */
  failCounts = 0;

  async count(tenant: Tenant, entry: CountEntry): Promise<void> {
    if (this.failCounts > 0) {
      this.failCounts -= 1;
      throw new Error('counting failed (injected)');
    }
    const items = this.counters.get(tenantOf(tenant)) ?? new Map<string, Counts>();
    this.counters.set(tenantOf(tenant), items);
    const add = entry.counts;
    for (const key of [`a#${entry.day}`, ...(entry.domain ? [`d#${entry.day}#${entry.domain}`] : [])]) {
      items.set(key, addCounts(items.get(key) ?? NO_COUNTS, add));
    }
  }

  async countsBetween(tenant: Tenant, from: string, to: string, maxItems: number): Promise<TenantCounts> {
    const counted = this.gather(tenant, (day) => day >= from && day <= to);
    const items = Object.values(counted.domains).flatMap(Object.keys).length;
    if (items > maxItems)
      throw new RangeError(`more than ${maxItems} counters from ${from} to ${to}: narrow the range`);
    return counted;
  }

  async standings(tenant: Tenant): Promise<Standing[]> {
    return structuredClone([...(this.standingsByTenant.get(tenantOf(tenant))?.values() ?? [])]);
  }

  async note(
    tenant: Tenant,
    subject: Subject,
    change: { at: string; warning?: NotedFigures; pause?: NotedFigures },
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null> {
    const held = this.standing(tenant, subject);
    if ((change.warning && held?.warnedAt) || (change.pause && held?.pausedAt)) return null;
    if (!change.warning && !change.pause) return null;
    this.put(tenant, {
      ...(held ?? { subject }),
      ...(change.warning ? { warnedAt: change.at, warning: change.warning } : {}),
      ...(change.pause ? { pausedAt: change.at, pause: change.pause } : {}),
    });
    return this.outbox.record({ pk: tenantOf(tenant), sk: subjectKey(subject) }, events);
  }

  async clearWarning(tenant: Tenant, subject: Subject, warnedAt: string): Promise<void> {
    const held = this.standing(tenant, subject);
    if (!held || held.warnedAt !== warnedAt || held.pausedAt) return;
    const { warnedAt: _at, warning: _figures, ...rest } = held;
    this.put(tenant, rest);
  }

  async lift(
    tenant: Tenant,
    subject: Subject,
    lift: { at: string; note: string; baseline: Readonly<Record<string, Counts>> },
  ): Promise<Standing | null> {
    const held = this.standing(tenant, subject);
    if (!held?.pausedAt) return null;
    const { pausedAt: _p, pause: _f, warnedAt: _w, warning: _g, ...rest } = held;
    const after: Standing = {
      ...rest,
      liftedAt: lift.at,
      liftNote: lift.note,
      baseline: structuredClone(lift.baseline),
    };
    this.put(tenant, after);
    return structuredClone(after);
  }

  private standing(tenant: Tenant, subject: Subject): Standing | undefined {
    return this.standingsByTenant.get(tenantOf(tenant))?.get(subjectKey(subject));
  }

  private put(tenant: Tenant, standing: Standing): void {
    const items = this.standingsByTenant.get(tenantOf(tenant)) ?? new Map<string, Standing>();
    this.standingsByTenant.set(tenantOf(tenant), items);
    items.set(subjectKey(standing.subject), structuredClone(standing));
  }

  private gather(tenant: Tenant, keep: (day: string) => boolean): TenantCounts {
    const account: Record<string, Counts> = {};
    const domains: Record<string, Record<string, Counts>> = {};
    for (const [key, counts] of this.counters.get(tenantOf(tenant)) ?? []) {
      const [kind, day = '', ...rest] = key.split('#');
      const domain = kind === 'd' ? rest.join('#') : null;
      if (!keep(day)) continue;
      if (domain === null) account[day] = counts;
      else domains[domain] = { ...(domains[domain] ?? {}), [day]: counts };
    }
    return structuredClone({ account, domains });
  }
}

const tenantOf = (tenant: Tenant) => `${tenant.accountId}#${tenant.mode}`;
