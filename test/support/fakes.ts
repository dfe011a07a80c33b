// In-memory fakes of the application ports (lambdas/app/ports.ts), for unit tests of use cases and handlers.
// They follow the same contract as the DynamoDB adapters (see test/contract/): conflicts on duplicate keys,
// null for unknown ids, oldest-first listings, revoke only once.
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
import { ConflictError } from '../../lambdas/domain/errors';
import type { PlanName } from '../../lambdas/domain/plans';
import type { RateWindow } from '../../lambdas/domain/rate-limit';

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
