// Ports of the webhook pipeline: webhook and delivery storage, the queues, the retry transport, the sender.
import type { Mode } from '../../domain/api-keys';
import type { EventType, SendflowEvent } from '../../domain/events';
import type { DisabledReason, FailureStreak } from '../../domain/webhooks/auto-disable';
import type { AttemptKind, AttemptOutcome, DeliveryStatus } from '../../domain/webhooks/delivery';
import type { AwsDestination } from '../../domain/webhooks/destination';
import type { ErrorClass } from '../../domain/webhooks/error-class';
import type { WebhookFilter } from '../../domain/webhooks/filter';
import type { WebhookFormat } from '../../domain/webhooks/format';
import type { Ordering } from '../../domain/webhooks/ordering';
import type { RecoveryCounts, RecoveryStatus } from '../../domain/webhooks/recovery';
import type { SecretSet, StoredSecrets } from '../../domain/webhooks/secret-set';
import type { TransformInput } from '../../domain/webhooks/transformation';

/** An account in one mode: test-mode data never meets live-mode data. */
export interface Tenant {
  readonly accountId: string;
  readonly mode: Mode;
}

/** Whether two things belong to the same account and mode. */
export const sameTenant = (a: Tenant, b: Tenant): boolean => a.accountId === b.accountId && a.mode === b.mode;

export interface Webhook extends Tenant {
  readonly id: string;
  readonly url: string;
  readonly events: readonly EventType[];
  readonly format: WebhookFormat;
  readonly description?: string;
  /** `whsec_…`; signs `standard` deliveries. */
  readonly secret: string;
  /** The secret before the last rotation: it also signs until `previousSecretExpiresAt` (ISO 8601). */
  readonly previousSecret?: string;
  readonly previousSecretExpiresAt?: string;
  /**
   * Every secret that signs (the current one and all still in their grace period), written by rotations since it
   * was added; absent on webhooks never rotated since. Read through `secretSetOf` (domain/webhooks/secret-set),
   * which trusts it only while its `current` is `secret`.
   */
  readonly secretSet?: SecretSet;
  readonly active: boolean;
  /** Requests started per second at most (rate_limit_per_second); absent or null: unpaced. */
  readonly rateLimitPerSecond?: number | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** `per_email`: an email's events are attempted one after another (app/webhooks/ordering); absent: `none`. */
  readonly ordering?: Ordering;
  /** Why Sendflow disabled it (auto-disable); null or absent when active or paused by its owner. */
  readonly disabledReason?: DisabledReason | null;
  /** ISO 8601: when Sendflow disabled it. */
  readonly disabledAt?: string | null;
  /**
   * The failure streak (see FailureStreak), kept on the item so the worker reads it with the webhook it already
   * has: epoch ms of its start, failed deliveries counted, epoch ms of its `webhook.failing` notice. Null or
   * absent when the last attempt succeeded or since a resume.
   */
  readonly failingSince?: number | null;
  readonly failedDeliveries?: number | null;
  readonly failingNotifiedAt?: number | null;
  /**
   * The payload filter (domain/webhooks/filter.ts): only events it matches are delivered. Absent or null: every
   * subscribed event. Stored as its JSON text (adapters/dynamodb/webhooks.ts); a release before it ignores it.
   */
  readonly filter?: WebhookFilter | null;
  /**
   * Where events go when not to `url` (domain/webhooks/destination.ts): the customer's EventBridge bus or SQS
   * queue. Absent: HTTP to `url`. With one, `url` holds a stand-in no HTTP sender accepts (storedUrlOf), so a
   * release before destinations, which ignores this attribute, fails those attempts visibly instead.
   */
  readonly destination?: AwsDestination;
  /**
   * The transformation's JavaScript source (domain/webhooks/transformation.ts): `handler(webhook)` reshapes each
   * attempt's request or cancels it. Absent or null: none. While set, the stored URL carries STORED_URL_PREFIX.
   */
  readonly transformation?: string | null;
}

export type WebhookChanges = Partial<
  Pick<
    Webhook,
    | 'url'
    | 'events'
    | 'active'
    | 'format'
    | 'description'
    | 'secret'
    | 'previousSecret'
    | 'previousSecretExpiresAt'
    | 'secretSet'
    | 'ordering'
    | 'rateLimitPerSecond'
    | 'disabledReason'
    | 'disabledAt'
    | 'failingSince'
    | 'failedDeliveries'
    | 'failingNotifiedAt'
    | 'filter'
    | 'transformation'
  >
>;

/** Events a webhook's filter kept from it: one counter per webhook and hour (adapters/dynamodb/filtered-counts). */
export interface FilteredCounts {
  /** Adds each entry's count to its webhook's counter of that hour (hours since the epoch). */
  add(entries: readonly { readonly webhookId: string; readonly hour: number; readonly count: number }[]): Promise<void>;
  /** The webhook's filtered events of the 24 hours ending with `hour` (that hour and the 23 before it). */
  last24h(webhookId: string, hour: number): Promise<number>;
}

/** A webhook's key: its tenant and its id. */
export type WebhookRef = Tenant & { readonly id: string };

export interface WebhookRepository {
  create(webhook: Webhook): Promise<void>;
  /** `consistent`: a strongly consistent read (a rotation reads what the last rotation wrote). */
  get(tenant: Tenant, id: string, options?: { readonly consistent?: boolean }): Promise<Webhook | null>;
  /** The webhooks found under these references (any tenants, duplicates allowed); missing ones are left out. */
  getMany(refs: readonly WebhookRef[]): Promise<Webhook[]>;
  /** Every webhook of the tenant (the dispatcher's fan-out query), oldest first. */
  list(tenant: Tenant): Promise<Webhook[]>;
  update(tenant: Tenant, id: string, changes: WebhookChanges, updatedAt: string): Promise<Webhook | null>;
  /**
   * A rotation's conditional write: writes `secrets` only while the webhook's `secret` is still `expected`, so
   * two rotations that read the same set cannot both write (every rotation, this release's or the previous
   * one's, replaces `secret` with a new random one). The webhook as written; null when the condition failed
   * (another rotation came first, or the webhook is gone).
   */
  replaceSecrets(
    tenant: Tenant,
    id: string,
    expected: string,
    secrets: StoredSecrets,
    updatedAt: string,
  ): Promise<Webhook | null>;
  delete(tenant: Tenant, id: string): Promise<boolean>;
}

/** The reads the delivery worker makes of webhooks (one batch's), which a runtime may keep for a bounded time. */
export type WebhookReads = Pick<WebhookRepository, 'get' | 'getMany'>;

/**
 * One attempt in a delivery's log: its outcome without the response. `errorClass` and `timings` are absent on
 * entries stored before they were recorded (errorClassOf derives the class; the timings are unknown).
 */
export type AttemptRecord = Omit<AttemptOutcome, 'response' | 'errorClass' | 'timings' | 'responseHeaders'> &
  Partial<Pick<AttemptOutcome, 'errorClass' | 'timings' | 'responseHeaders'>> & {
    /** What made it (absent on entries stored before it was recorded). */
    readonly kind?: AttemptKind;
    /**
     * The headers sent (signature headers included: they are not secrets; the signing secret never is a
     * header). Like `responseHeaders`, kept on the latest attempt only: earlier entries drop both.
     */
    readonly requestHeaders?: Readonly<Record<string, string>>;
    /**
     * Seconds the receiver asked to wait before the next attempt (a 429 or 503 with Retry-After, capped at an
     * hour: domain/webhooks/retry-after.ts); absent when it did not ask.
     */
    readonly retryAfterSeconds?: number;
  };

/** An attempt being made: who holds it and until when (a crashed holder's claim lapses). */
export interface Claim {
  readonly attempt: number;
  readonly until: number;
  /**
   * The claiming runtime's epoch: a claim from an earlier epoch is void at once. The local runtime, the only
   * process on its data directory, takes its start time, so a restart frees what the dead process held; on AWS
   * it is 0 and claims only lapse.
   */
  readonly epoch?: number;
  /**
   * The recovery job that claimed it: the job's step, run again after a crash, finishes the attempts it claimed
   * and never recorded (they would otherwise look like someone else's attempt, and be skipped).
   */
  readonly by?: string;
}

export interface Delivery extends Tenant {
  readonly id: string;
  readonly webhookId: string;
  readonly eventId: string;
  /** Event type, or `test`. */
  readonly event: string;
  readonly format: WebhookFormat;
  /** The exact body sent on every attempt. */
  readonly payload: string;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly maxAttempts: number;
  /** One entry per attempt; the latest attempt's status, duration and error are the last entry's. */
  readonly attemptLog: readonly AttemptRecord[];
  /** First 500 characters of the latest attempt's response body. */
  readonly response: string;
  /** Epoch ms; null when nothing is scheduled. */
  readonly nextAttemptAt: number | null;
  readonly deliveredAt: number | null;
  readonly createdAt: number;
  readonly claim?: Claim;
  /**
   * Epoch ms: when the latest attempt was claimed. Kept after the attempt ends: a manual retry asked before
   * that moment was simultaneous with that attempt, and must not make another (single-flight).
   */
  readonly claimedAt?: number;
  /**
   * Epoch ms: when the latest attempt's result was recorded. A manual retry that arrived before that moment
   * arrived while the attempt was in flight: it was simultaneous with it too, however late it is handled.
   */
  readonly settledAt?: number;
  /**
   * Epoch ms: when the latest manual retry was claimed. Simultaneous retries can reach the handler up to about a
   * second apart on a busy process, so a retry within RETRY_SETTLE_MS of the last one is the same click.
   */
  readonly retriedAt?: number;
  /**
   * How many times a job of this delivery dead-lettered (failed in our own code maxReceiveCount times): each
   * re-arms it as a due retry, until DEAD_LETTER_LIMIT ends it failed.
   */
  readonly deadLetters?: number;
  /** TTL, epoch seconds: set once the delivery is final. */
  readonly expiresAt?: number;
  /**
   * Only on deliveries to a `per_email` webhook (app/webhooks/ordering): the event's email and its sequence, and,
   * while it is held behind an earlier event of that email, the sequence it waits for.
   */
  readonly emailId?: string;
  readonly sequence?: number;
  readonly waitingFor?: number;
  /**
   * The trace context of the event's span (domain/trace-context.ts, compact): every attempt's span is its child
   * and every request's `traceparent` continues it. Absent when the event was untraced.
   */
  readonly trace?: string;
}

/**
 * The due index (the reconciler's list) holds pending rows with an attempt due: retries, deliveries re-armed
 * after a dead letter, and held deliveries (per-email ordering: the backstop of their release). A first attempt in
 * flight is its queue's to keep.
 */
export const isDue = (
  d: Pick<Delivery, 'status' | 'attempts' | 'deadLetters' | 'nextAttemptAt' | 'waitingFor'>,
): boolean =>
  d.status === 'pending' &&
  (d.attempts > 0 || (d.deadLetters ?? 0) > 0 || d.waitingFor !== undefined) &&
  d.nextAttemptAt !== null;

/** A delivery's table key: its webhook and its id. */
export type DeliveryKey = Pick<Delivery, 'webhookId' | 'id'>;

/** The most rows one delivery-log request examines (a filter that rarely matches stops there). */
export const DELIVERY_LIST_EXAMINE = 5000;

export interface DeliveryPage {
  readonly items: Delivery[];
  readonly hasMore: boolean;
  /**
   * Set when the read stopped at `examine` before the page was full and older rows remain: the id of the last row
   * examined, to pass as `after` to go on.
   */
  readonly resumeAfter?: string;
}

export interface DeliveryListQuery {
  readonly status?: DeliveryStatus;
  readonly errorClass?: ErrorClass;
  readonly limit: number;
  readonly after?: string;
  /**
   * A delivery id (or a prefix of one, e.g. `dlv_` and an id's time part): only ids at or after it. A time window's
   * lower end, read as a key condition (no row before it is read); its upper end is an `after`.
   */
  readonly from?: string;
  /** Only deliveries of these event types (`test` for test sends); checked on the rows examined. */
  readonly eventTypes?: readonly string[];
  /**
   * The most rows to examine, matching or not (`status=failed` examines failed rows only); DELIVERY_LIST_EXAMINE
   * when absent.
   */
  readonly examine?: number;
}

/** What a claim of a delivery's next attempt expects of the row (DeliveryRepository.claim). */
export interface ClaimExpectation {
  readonly attemptsBefore: number;
  readonly statuses: readonly DeliveryStatus[];
  readonly nowMs: number;
  readonly claimedBefore?: number;
  readonly retriedBefore?: number;
}

export interface DeliveryRepository {
  /** Creates the row already claimed for its first attempt; false when it exists (a duplicate job). */
  createClaimed(delivery: Delivery): Promise<boolean>;
  /**
   * Claims the next attempt of an existing row: only if `attempts` is still `attemptsBefore`, the status is one
   * of `statuses`, no claim is held (unexpired at `nowMs`, and of `claim.epoch` or later), and (when
   * `claimedBefore` is given) no attempt was claimed or settled at or after `claimedBefore` (none was in flight
   * then, none began since), and (when `retriedBefore` is given: a manual retry) no manual retry was claimed at or
   * after `retriedBefore`. Stores `claimedAt` = `nowMs`, and `retriedAt` = `nowMs` for a manual retry.
   * Returns the claimed row, or null when someone else has it.
   */
  claim(webhookId: string, id: string, expect: ClaimExpectation, claim: Claim): Promise<Delivery | null>;
  /** Stores the attempt's result, only if the claim for that attempt is still held. */
  record(delivery: Delivery, claimedAttempt: number): Promise<boolean>;
  get(webhookId: string, id: string, nowMs: number): Promise<Delivery | null>;
  /**
   * The deliveries stored under these keys, in the order of `keys` (a key given twice is read and returned once).
   * Missing and expired rows are left out. One BatchGetItem per 100 keys on DynamoDB.
   */
  getMany(keys: readonly DeliveryKey[], nowMs: number): Promise<Delivery[]>;
  /**
   * Newest first; `after` is a delivery id (returns older ones). Expired rows are never returned. `errorClass`
   * keeps the deliveries whose latest attempt recorded that class (entries stored before classes were recorded
   * never match). At most `examine` rows are examined: `hasMore` is exact, and `resumeAfter` says where a read
   * cut short by that bound stopped.
   */
  list(webhookId: string, query: DeliveryListQuery, nowMs: number): Promise<DeliveryPage>;
  /**
   * Pending retries (at least one attempt made) due before `dueBefore` (epoch ms), oldest due first; `after` (the
   * last one of the page before) continues the listing past it. A first attempt is never listed: until its record
   * its job is in the queue (redelivered while it fails, recorded failed once dead-lettered: failDeadLettered).
   */
  listDue(dueBefore: number, limit: number, after?: DueDelivery): Promise<DueDelivery[]>;
  /**
   * Oldest first, the ids of a webhook's unexpired deliveries from id `from` to id `to` (inclusive), only failed
   * ones when `onlyFailed`; at most `limit` ids are read; `after` continues past that id. `next` is the id to
   * continue after, or null when the range is read to its end.
   */
  range(
    webhookId: string,
    query: { from: string; to: string; onlyFailed: boolean; limit: number; after?: string },
    nowMs: number,
  ): Promise<{ ids: string[]; next: string | null }>;
}

/** A recovery job (POST /v1/webhooks/:id/recoveries): its window, where it is, and what it did so far. */
export interface Recovery extends Tenant, RecoveryCounts {
  readonly id: string;
  readonly webhookId: string;
  readonly status: RecoveryStatus;
  /** The window, epoch ms. */
  readonly since: number;
  readonly until: number;
  readonly onlyFailed: boolean;
  /** Steps done: the next step message carries this number. */
  readonly step: number;
  /** The last delivery id read; null before the first step. */
  readonly cursor: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** TTL, epoch seconds: the retention after its last change (a job that stalls still goes away). */
  readonly expiresAt: number;
  /** The step now being run, by whom and until when (see Claim: the same epoch rule); absent between steps. */
  readonly lease?: Claim;
  /** The last step whose message was queued: a redelivered step re-queues the next one only if it is not. */
  readonly queuedStep?: number;
}

export interface RecoveryRepository {
  create(recovery: Recovery): Promise<void>;
  get(webhookId: string, id: string, nowMs: number): Promise<Recovery | null>;
  /** The webhook's unexpired jobs, newest first, at most `limit`. */
  list(webhookId: string, nowMs: number, limit: number): Promise<Recovery[]>;
  /**
   * Takes step `step` of a running job for `lease` (see Claim: unexpired at `nowMs`, or of an earlier epoch, is
   * void); the job as leased, or null when it is not running at that step or another lease holds it.
   */
  lease(webhookId: string, id: string, step: number, lease: Claim, nowMs: number): Promise<Recovery | null>;
  /** Stores the job after step `step` (lease released), only if it is still running at that step; false otherwise. */
  advance(next: Recovery, step: number): Promise<boolean>;
  /** Notes that step `step`'s message is queued (only while the job is running at that step). */
  markQueued(webhookId: string, id: string, step: number): Promise<void>;
  /** Ends a running job as canceled; null when there is none, else the job as it now stands. */
  cancel(webhookId: string, id: string, nowMs: number, expiresAt: number): Promise<Recovery | null>;
}

/** A unit of work of a recovery job: its step `step` (the delivery queue carries it). */
export interface RecoveryStep extends Tenant {
  readonly webhookId: string;
  readonly recoveryId: string;
  readonly step: number;
}

export interface RecoveryQueue {
  send(step: RecoveryStep, delaySeconds?: number): Promise<void>;
}

/** What the reconciler needs of a pending delivery. */
export type DueDelivery = Pick<Delivery, 'id' | 'webhookId' | 'attempts' | 'nextAttemptAt'>;

/** A unit of work on the deliveries queue: make attempt `attempt` of one delivery. */
export interface DeliveryJob {
  readonly deliveryId: string;
  readonly webhookId: string;
  readonly attempt: number;
  /** First attempts: epoch ms of the event's time (its `timestamp`), for the event-to-first-attempt lag. */
  readonly eventAt?: number;
  /** The delivery's account, on retries (first attempts carry it in `seed`): the lanes share by account. */
  readonly accountId?: string;
  /** The webhook's rate_limit_per_second when the job was made (absent: unpaced): the worker paces by it. */
  readonly ratePerSecond?: number;
  /** A paced job sent back to the queue until its turn: that turn (epoch ms), kept when it comes back. */
  readonly paceTurn?: number;
  /**
   * Only on first attempts made from a fresh event: what the row is created from (`emailId` and `sequence` only
   * for a `per_email` webhook).
   */
  readonly seed?: Pick<
    Delivery,
    'accountId' | 'mode' | 'eventId' | 'event' | 'format' | 'payload' | 'createdAt' | 'emailId' | 'sequence' | 'trace'
  >;
}

export interface DeliveryQueue {
  send(jobs: readonly DeliveryJob[], delaySeconds?: number): Promise<void>;
}

/** Schedules a later attempt: SQS DelaySeconds under a minute, EventBridge Scheduler beyond (DESIGN §4). */
export interface RetryScheduler {
  schedule(job: DeliveryJob, delaySeconds: number): Promise<void>;
}

export interface EventPublisher {
  /** Queues events for fan-out; `delaySeconds` lets the simulator space its sequences. */
  publish(events: readonly SendflowEvent[], delaySeconds?: number): Promise<void>;
}

export interface OutboundRequest {
  readonly url: string;
  /** POST unless a transformation chose another (domain/webhooks/transformation.ts TRANSFORM_METHODS). */
  readonly method?: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Not HTTP: the AWS destination to send the body to instead of `url` (DestinationSender chooses by it). */
  readonly destination?: AwsDestination;
  /** What the attempt carries, for destinations that name it (EventBridge's DetailType, SQS's attributes). */
  readonly context?: OutboundContext;
}

/** The attempt's event and delivery, as a non-HTTP destination labels its message. */
export interface OutboundContext {
  readonly accountId: string;
  readonly eventId: string;
  /** Event type (EventBridge DetailType, SQS attribute). */
  readonly eventType: string;
  /** SQS FIFO MessageDeduplicationId: every attempt of one delivery is the same message. */
  readonly deliveryId: string;
  /** SQS FIFO MessageGroupId: the email the event is about (per-email order), else the event. */
  readonly orderingKey: string;
}

/** One attempt: never throws for the endpoint's failures; they are the outcome. */
export interface WebhookSender {
  send(request: OutboundRequest): Promise<AttemptOutcome>;
}

/** DNS-aware check of a webhook host at create/update time (DESIGN §4). */
export interface UrlVerifier {
  /** Null when acceptable, else the reason it is refused. */
  problem(url: string): Promise<string | null>;
}

/**
 * A webhook's failure streak and its disabling (auto-disable), written on the webhook's own item by the delivery
 * worker: a few small conditional updates per streak, never one per successful delivery.
 */
export interface WebhookHealthStore {
  /**
   * Counts one failed delivery: starts a streak at `at` when none is stored, else adds one to it. `streaking` is
   * what the caller's copy of the webhook shows (the write it tries first). The streak as it now stands, or null
   * when the webhook is gone.
   */
  countFailure(tenant: Tenant, id: string, at: number, streaking: boolean): Promise<FailureStreak | null>;
  /** Ends the stored streak (a success); nothing to do when none is stored. */
  clearStreak(tenant: Tenant, id: string): Promise<void>;
  /** Notes the `webhook.failing` notice of the streak begun at `since`: true for the one caller that noted it. */
  noteFailing(tenant: Tenant, id: string, since: number, at: number): Promise<boolean>;
  /**
   * Disables an active webhook for `reason` at `at` (for `failing`, only while its streak still began at `since`):
   * the webhook as disabled, or null when this call did not disable it (inactive already, gone, another streak).
   */
  disable(tenant: Tenant, id: string, reason: DisabledReason, at: number, since?: number): Promise<Webhook | null>;
}

/** One run of a transformation in the sandbox: the handler's result as JSON, or why there is none; its CPU time. */
export type TransformRun =
  | { readonly ok: true; readonly output: string; readonly cpuMs: number }
  | { readonly ok: false; readonly error: string; readonly cpuMs: number };

/**
 * The sandbox transformations run in (adapters/sandbox/quickjs-sandbox.ts): no I/O, no host objects, a fresh
 * context per run, limits on CPU time, memory, stack and output. Never throws: a failure is the run's `error`.
 */
export interface TransformRunner {
  /** Null when `source` loads and defines `handler`; else what is wrong (a syntax error, no handler, a limit). */
  check(source: string): Promise<string | null>;
  /** Calls `handler(input)`; `fixedNow` is what the clock reads inside (Date.now(), new Date()). */
  run(source: string, input: TransformInput, fixedNow: number): Promise<TransformRun>;
}
