// Ports: what the use cases need from the outside world. Adapters implement them per runtime.
import type { Mode } from '../domain/api-keys';
import type { QuotaWindow } from '../domain/email/quota';
import type { PlanName } from '../domain/plans';
import type { RateWindow } from '../domain/rate-limit';
import type { Scope } from '../domain/scopes';

/** Wall-clock time in epoch milliseconds. Tests pass a fake. */
export interface Clock {
  now(): number;
}

/** Cryptographically strong random bytes. */
export type RandomBytes = (size: number) => Uint8Array;

export interface Account {
  readonly id: string;
  readonly plan: PlanName;
  readonly createdAt: string;
  /** Value of the account's API Gateway API key (usage-plan identity on AWS); absent locally. */
  readonly usageKey?: string;
  /** Id of that API Gateway key, to move it between usage plans. */
  readonly usageKeyId?: string;
  /** The account the local runtime created (and printed a key for) on its first start; absent otherwise. */
  readonly isDefault?: true;
  /**
   * Where Sendflow sends the account's notices (a reputation warning or pause, a webhook it disabled); absent:
   * none are sent. Set and cleared on the dashboard's settings page (app/dashboard/notice-address).
   */
  readonly noticeEmail?: string;
  /**
   * The external id Sendflow gives STS when it assumes this account's roles (AWS destinations): made once, on the
   * first AWS destination, and never changed (the customer's trust policies name it).
   */
  readonly awsExternalId?: string;
}

export interface AccountRepository {
  /** Fails with a ConflictError when the id exists. */
  create(account: Account): Promise<void>;
  get(id: string): Promise<Account | null>;
  /** Returns the updated account, or null when it does not exist. */
  update(id: string, changes: Partial<Pick<Account, 'plan' | 'usageKey' | 'usageKeyId'>>): Promise<Account | null>;
  /**
   * Sets the address for notices, or removes it (null); false when the account does not exist. Writes that one
   * attribute and reads nothing back: the API's role may update no other attribute of an account (lib/api-stack).
   */
  setNoticeEmail(id: string, email: string | null): Promise<boolean>;
  /**
   * The account's external id: the stored one, else `candidate`, stored now (only if none is: of simultaneous
   * first calls, one candidate wins and every caller gets it). Null when the account does not exist.
   */
  ensureAwsExternalId(id: string, candidate: string): Promise<string | null>;
  /** Whether any account exists. */
  any(): Promise<boolean>;
  /**
   * Every account, oldest first. On DynamoDB a Scan of the whole table, followed page by page: for the admin
   * CLI and the local runtime's start, never on a request path.
   */
  list(options?: { pageSize?: number }): Promise<Account[]>;
}

export interface ApiKey {
  readonly id: string;
  /** SHA-256 hex of the secret; the secret itself is never stored. */
  readonly hash: string;
  readonly accountId: string;
  readonly mode: Mode;
  readonly scopes: readonly Scope[];
  readonly name: string;
  /** Non-secret reminder of which key this is, e.g. `sf_test_…a1B2`. */
  readonly hint: string;
  readonly createdAt: string;
  readonly revokedAt?: string;
  /** A sending key restricted to one domain (Resend's `domain_id`): it may send only from that domain. */
  readonly sendingDomain?: { readonly id: string; readonly name: string };
}

export interface ApiKeyRepository {
  create(key: ApiKey): Promise<void>;
  findByHash(hash: string): Promise<ApiKey | null>;
  /** Keys of one account, oldest first, revoked ones included. */
  listByAccount(accountId: string): Promise<ApiKey[]>;
  /** Marks the key revoked; returns the revoked key, or null when there is no such active key. */
  revoke(key: ApiKey, at: string): Promise<ApiKey | null>;
}

/**
 * Atomic per-window request counter (one DynamoDB UpdateItem ADD on AWS and locally; a window of many requests
 * is spread over `shards` items, each request adding to one and reading the others' counts).
 */
export interface RateLimitCounter {
  /**
   * Adds one to the subject's counter for this window and returns the window's count with it: with one shard,
   * exactly this request's position; with several, the sum of every shard read after this request's addition,
   * which counts every request added before it (so never more than `limit` requests see a count ≤ `limit`).
   */
  increment(subject: string, window: RateWindow, shards?: number): Promise<number>;
}

/** The monthly email counter per account. */
export interface QuotaCounter {
  /** Adds `count` emails unless that would pass `limit`; false (and nothing added) when it would. */
  consume(accountId: string, window: QuotaWindow, count: number, limit: number): Promise<boolean>;
  /** Gives back `count` emails consumed by a request that then failed (nothing of it was sent). */
  release(accountId: string, window: QuotaWindow, count: number): Promise<void>;
  /** What the window has counted so far (0 when nothing was). */
  used(accountId: string, window: QuotaWindow): Promise<number>;
}

/**
 * The authorizer's result cache (API Gateway caches the REQUEST authorizer per Authorization header). Flushed
 * when a key is revoked or a plan changes, so neither waits for the cache entry to expire.
 */
export interface AuthorizerCache {
  flush(): Promise<void>;
}

/** API Gateway usage plans: the outer, best-effort throttle on AWS. */
export interface UsagePlans {
  /** Creates the account's usage identity in its plan; returns what to store on the account. */
  enroll(accountId: string, plan: PlanName): Promise<Pick<Account, 'usageKey' | 'usageKeyId'>>;
  /** Moves the account's usage identity from one plan to another. */
  move(account: Account, to: PlanName): Promise<void>;
}

/**
 * An account's share of the runtime: at most so many of its tasks run at once, the others wait their turn (the
 * local gateway's per-account concurrency, KeyedSlots). Absent (AWS: Lambda's concurrency is the bound): at once.
 */
export interface AccountSlots {
  run<T>(accountId: string, task: () => Promise<T>): Promise<T>;
  /**
   * Runs `task` with the caller's slot given back meanwhile (a long-poll's wait holds none), and takes one again,
   * in turn, before the caller goes on. A caller holding no slot of the account just runs it.
   */
  outside<T>(accountId: string, task: () => Promise<T>): Promise<T>;
}

/**
 * Where one key's (an account's) heavy work takes turns by time: `run` waits while the key's share of the time is
 * spent, then runs the work and charges it the time it took (domain/work-share.ts). The local runtime's email
 * listings; absent on AWS, where each request has its own function instance.
 */
export interface WorkShares {
  run<T>(key: string, work: () => Promise<T>): Promise<T>;
}

/** The authenticated caller: what the authorizer hands to every handler. */
export interface Principal {
  readonly accountId: string;
  readonly keyId: string;
  readonly mode: Mode;
  readonly scopes: readonly Scope[];
  readonly plan: PlanName;
  readonly usageKey?: string;
  /** The one domain (its name) a restricted sending key may send from; absent: any of the account's. */
  readonly sendingDomain?: string;
}
