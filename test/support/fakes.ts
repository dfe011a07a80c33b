// In-memory fakes of the application ports (lambdas/app/ports.ts), for unit tests of use cases and handlers.
// They follow the same contract as the DynamoDB adapters (see test/contract/): conflicts on duplicate keys,
// null for unknown ids, oldest-first listings, revoke only once. The webhook and delivery fakes pass the same
// contract suites as their DynamoDB adapters (test/contract/in-memory-repositories.test.ts).
import { createHash } from 'node:crypto';
import type {
  Account,
  AccountRepository,
  ApiKey,
  ApiKeyRepository,
  Clock,
  RandomBytes,
  RateLimitCounter,
  UsagePlans,
} from '../../lambdas/app/ports';
import type {
  Claim,
  Delivery,
  DeliveryJob,
  DeliveryPage,
  DeliveryQueue,
  DeliveryRepository,
  EventPublisher,
  OutboundRequest,
  RetryScheduler,
  Tenant,
  Webhook,
  WebhookChanges,
  WebhookRepository,
  WebhookSender,
} from '../../lambdas/app/webhooks/ports';
import { ConflictError } from '../../lambdas/domain/errors';
import type { SendflowEvent } from '../../lambdas/domain/events';
import type { PlanName } from '../../lambdas/domain/plans';
import type { RateWindow } from '../../lambdas/domain/rate-limit';
import type { AttemptOutcome, DeliveryStatus } from '../../lambdas/domain/webhooks/delivery';

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

  async any(): Promise<boolean> {
    return this.items.size > 0;
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

const tenantOf = (tenant: Tenant) => `${tenant.accountId}#${tenant.mode}`;

export class InMemoryWebhookRepository implements WebhookRepository {
  /** Keyed by `account#mode#id`, as the table's (tenant, id) key. */
  readonly items = new Map<string, Webhook>();

  async create(webhook: Webhook): Promise<void> {
    const key = `${tenantOf(webhook)}#${webhook.id}`;
    if (this.items.has(key)) throw new ConflictError(`Webhook ${webhook.id} exists.`);
    this.items.set(key, structuredClone(webhook));
  }

  async get(tenant: Tenant, id: string): Promise<Webhook | null> {
    const webhook = this.items.get(`${tenantOf(tenant)}#${id}`);
    return webhook ? structuredClone(webhook) : null;
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

  async delete(tenant: Tenant, id: string): Promise<boolean> {
    return this.items.delete(`${tenantOf(tenant)}#${id}`);
  }
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

  async claim(
    webhookId: string,
    id: string,
    expect: { attemptsBefore: number; statuses: readonly DeliveryStatus[]; nowMs: number },
    claim: Claim,
  ): Promise<Delivery | null> {
    const key = `${webhookId}#${id}`;
    const current = this.items.get(key);
    if (!current || current.attempts !== expect.attemptsBefore || !expect.statuses.includes(current.status))
      return null;
    if (current.claim && !(current.claim.until < expect.nowMs)) return null;
    const claimed: Delivery = { ...current, claim: { ...claim } };
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

  async list(
    webhookId: string,
    query: { status?: DeliveryStatus; limit: number; after?: string },
    nowMs: number,
  ): Promise<DeliveryPage> {
    const { after } = query;
    const matching = [...this.items.values()]
      .filter((d) => d.webhookId === webhookId && (query.status === undefined || d.status === query.status))
      .filter((d) => after === undefined || d.id < after)
      .filter((d) => liveAt(d, nowMs))
      .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return {
      items: matching.slice(0, query.limit).map((d) => structuredClone(d)),
      hasMore: matching.length > query.limit,
    };
  }

  async listDue(dueBefore: number, limit: number) {
    return [...this.items.values()]
      .filter((d) => d.status === 'pending' && d.nextAttemptAt !== null && d.nextAttemptAt <= dueBefore)
      .sort((a, b) => (a.nextAttemptAt as number) - (b.nextAttemptAt as number))
      .slice(0, limit)
      .map(({ id, webhookId, attempts, nextAttemptAt }) => ({ id, webhookId, attempts, nextAttemptAt }));
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
    return { at, statusCode: 200, durationMs: 25, error: null, response: 'ok', ...answer };
  }
}
