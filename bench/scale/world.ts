// bench:scale's world: one stage's webhook pipeline as the defaults deploy it, on the models of SQS, Lambda and
// Scheduler (sqs.ts, lambda.ts, scheduler.ts) and a virtual clock. Real code: the dispatcher's and the delivery
// worker's handlers (createDispatcherHandler, createDeliveryWorkerHandler), every use case they call (fan-out,
// claims, attempts, the retry policy, Retry-After, endpoint health and its streaks, the lanes and their gate,
// dead letters), the SQS adapters (SqsEventPublisher, SqsDeliveryQueue: batching, MessageGroupId, DelaySeconds),
// the AWS retry transport (AwsRetryScheduler: SQS up to 15 minutes, Scheduler beyond), the delivery lanes' wiring
// (deliveryLanes) and the webhook cache. Modelled: the endpoints (bench/cost/bad-day.ts's answers, or hangs),
// DynamoDB (the in-memory fakes of the ports, each call taking `dynamoMs`), and the services above.
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { AwsRetryScheduler, SCHEDULES_PER_SECOND } from '../../lambdas/adapters/aws/retry-scheduler';
import {
  SQS_MAX_DELAY_SECONDS,
  SqsDeliveryQueue,
  SqsEventPublisher,
  SqsQueueDepth,
  SqsRecoveryQueue,
} from '../../lambdas/adapters/aws/sqs';
import { InProcessKnownStreaks } from '../../lambdas/adapters/in-process/known-streaks';
import { InMemoryPaceCounter } from '../../lambdas/adapters/in-process/pace-counter';
import { CachedWebhookReads } from '../../lambdas/adapters/in-process/webhook-cache';
import type { ProcessEventDeps } from '../../lambdas/app/events/process-event';
import type { Telemetry } from '../../lambdas/app/telemetry';
import { BypassDeliveryQueue } from '../../lambdas/app/webhooks/bypass-delivery-queue';
import { watchEndpointSafely } from '../../lambdas/app/webhooks/endpoint-watch';
import { EndpointPace, IN_PROCESS_PACE } from '../../lambdas/app/webhooks/pace';
import type {
  Claim,
  ClaimExpectation,
  Delivery,
  DeliveryRepository,
  Tenant,
  Webhook,
  WebhookHealthStore,
  WebhookRef,
  WebhookRepository,
  WebhookSender,
} from '../../lambdas/app/webhooks/ports';
import type { SendflowEvent } from '../../lambdas/domain/events';
import {
  autoDisablePolicy,
  DEFAULT_DISABLE_AFTER_SECONDS,
  DEFAULT_FAILING_AFTER_SECONDS,
} from '../../lambdas/domain/webhooks/auto-disable';
import { type AttemptOutcome, NO_TIMINGS } from '../../lambdas/domain/webhooks/delivery';
import type { LanePolicy } from '../../lambdas/domain/webhooks/endpoint-health';
import { deliveryIdFor } from '../../lambdas/domain/webhooks/render';
import { DEFAULT_RETRY_DELAYS_SECONDS } from '../../lambdas/domain/webhooks/retry-policy';
import { createDeliveryWorkerHandler } from '../../lambdas/handlers/queue/delivery-worker';
import { createDispatcherHandler } from '../../lambdas/handlers/queue/dispatcher';
import { DELIVERIES_BYPASS, type QueueSpec, visibilityTimeoutSeconds } from '../../lambdas/manifest';
import { deliveryLanes } from '../../lambdas/runtime/services';
import { InMemoryRecoveryRepository } from '../../test/support/fakes';
import { BAD_DAY, badDayLatencyMs } from '../cost/bad-day';
import { AccountConcurrency, EventSourceMapping, type Handler, SimFunction } from './lambda';
import { SimScheduler } from './scheduler';
import { type SimMessage, SimQueue, SimSqsClient } from './sqs';
import type { VirtualTime } from './virtual-time';

export type Behaviour = 'bad-day' | 'hang';
/** Who a tenant is in a scenario's figures. */
export type TenantClass = 'live' | 'backlog' | 'hanging';

export interface Endpoint {
  readonly webhook: Webhook;
  readonly behaviour: Behaviour;
  readonly tenantClass: TenantClass;
}

/** Model latencies of the AWS calls the code makes (ms): round trips from a Lambda in the same region. */
export const LATENCY = { dynamoMs: 8, sqsMs: 12, schedulerMs: 25 } as const;

/**
 * Lambda's model costs: a cold start, and CPU per invocation and per record at 512 MB (about a third of a vCPU): a
 * record's JSON and zod, its two HMACs, the SDK's marshalling of its writes.
 */
export const LAMBDA_COSTS = { coldStartMs: 400, cpuPerInvocationMs: 5, cpuPerRecordMs: 0.5 } as const;

/**
 * CPU of a new TLS connection's handshake at 512 MB, taken by each attempt one after another on its container's
 * one CPU (every attempt counts as a new connection: a container rarely meets an endpoint twice within 4 s).
 */
export const TLS_HANDSHAKE_CPU_MS = 1.5;

/** The stage's defaults as deployed: the manifest's queues, 14-day retention, the account's concurrency. */
export interface StageSettings {
  readonly queues: Readonly<Record<'events' | 'deliveries' | 'slowDeliveries', QueueSpec>>;
  readonly retentionSeconds: number;
  /** Unreserved account concurrency (the quota less the API's and the authorizer's reservations). */
  readonly unreservedConcurrency: number;
  readonly lanePolicy: LanePolicy;
  /** The shared lane's bypass queue and its consumer's MaximumConcurrency (none: the settings before issue 29). */
  readonly bypass?: { readonly maxConcurrency: number };
  /**
   * The simulation's scale-down factor k: every event source's MaximumConcurrency, the account's concurrency,
   * Lambda's scaling steps and SQS fair queues' absolute threshold (30 in flight) are divided by k, as the
   * scenarios divide their rates, tenants and backlog (bench/scale.ts); batch sizes, windows, time-outs, latencies
   * and retention are not, so each container sees the batches it would at full scale.
   */
  readonly scale: number;
}

const SCHEDULE_GROUP = 'sim-retries';

/** A deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Per tenant class: first-attempt lags (ms) by the minute they happened in, attempts, and final deliveries. */
export class Figures {
  readonly lags = new Map<TenantClass, number[]>();
  readonly lagsByMinute = new Map<TenantClass, Map<number, number[]>>();
  readonly attempts = new Map<TenantClass, number>();
  readonly finals = new Map<TenantClass, number>();
  /** Attempt-seconds spent in each lane per class (the lane's capacity a class held). */
  readonly laneSeconds = new Map<string, number>();
  /** Records (a batch's slots: an attempt holds one while its batch runs) each tenant had in each lane. */
  readonly laneRecords = new Map<string, Map<string, number>>();
  /** Attempts each tenant made in each lane, by the minute they started in (`lane minute` → tenant → count). */
  readonly laneAttempts = new Map<string, Map<string, number>>();
  /** The seconds of each minute a lane's queue had messages waiting (`lane minute` → seconds): it was behind. */
  readonly laneBehind = new Map<string, number>();
  /** Each tenant's jobs waiting (ready) in a lane at the end of each minute (`lane minute` → tenant → count). */
  readonly laneWaiting = new Map<string, Map<string, number>>();

  add<K>(map: Map<K, number>, key: K, n = 1): void {
    map.set(key, (map.get(key) ?? 0) + n);
  }

  lag(cls: TenantClass, at: number, ms: number, start: number): void {
    const all = this.lags.get(cls) ?? [];
    this.lags.set(cls, all);
    all.push(ms);
    const byMinute = this.lagsByMinute.get(cls) ?? new Map<number, number[]>();
    this.lagsByMinute.set(cls, byMinute);
    const minute = Math.floor((at - start) / 60_000);
    const list = byMinute.get(minute) ?? [];
    byMinute.set(minute, list);
    list.push(ms);
  }
}

/**
 * DeliveryRepository's contract on a map, each call taking `dynamoMs`; a final row is dropped once recorded (its id
 * kept, so a duplicate job's createClaimed still finds it), which bounds memory over millions of deliveries.
 */
class SimDeliveries implements DeliveryRepository {
  private readonly rows = new Map<string, Delivery>();
  private readonly finished = new Set<string>();
  constructor(
    private readonly time: VirtualTime,
    private readonly onFinal: (delivery: Delivery) => void,
  ) {}

  get pending(): number {
    return this.rows.size;
  }

  async createClaimed(delivery: Delivery): Promise<boolean> {
    await this.time.sleep(LATENCY.dynamoMs);
    const key = `${delivery.webhookId}#${delivery.id}`;
    if (this.rows.has(key) || this.finished.has(key)) return false;
    this.rows.set(key, delivery);
    return true;
  }

  async claim(webhookId: string, id: string, expect: ClaimExpectation, claim: Claim): Promise<Delivery | null> {
    await this.time.sleep(LATENCY.dynamoMs);
    const current = this.rows.get(`${webhookId}#${id}`);
    if (!current || current.attempts !== expect.attemptsBefore || !expect.statuses.includes(current.status))
      return null;
    if (current.claim && current.claim.until >= expect.nowMs && (current.claim.epoch ?? 0) >= (claim.epoch ?? 0))
      return null;
    const claimed: Delivery = { ...current, claim: { ...claim }, claimedAt: expect.nowMs };
    this.rows.set(`${webhookId}#${id}`, claimed);
    return { ...claimed };
  }

  async record(delivery: Delivery, claimedAttempt: number): Promise<boolean> {
    await this.time.sleep(LATENCY.dynamoMs);
    const key = `${delivery.webhookId}#${delivery.id}`;
    if (this.rows.get(key)?.claim?.attempt !== claimedAttempt) return false;
    if (delivery.status === 'pending') this.rows.set(key, delivery);
    else {
      this.rows.delete(key);
      this.finished.add(key);
      this.onFinal(delivery);
    }
    return true;
  }

  async get(webhookId: string, id: string): Promise<Delivery | null> {
    await this.time.sleep(LATENCY.dynamoMs);
    const row = this.rows.get(`${webhookId}#${id}`);
    return row ? { ...row } : null;
  }

  async getMany(): Promise<Delivery[]> {
    throw new Error('not used by the pipeline');
  }
  async list(): Promise<never> {
    throw new Error('not used by the pipeline');
  }
  async listDue(): Promise<never[]> {
    return [];
  }
  async range(): Promise<never> {
    throw new Error('not used by the pipeline');
  }
}

/** Every async method of `target` first waits `ms` of virtual time (a DynamoDB round trip). */
function latent<T extends object>(target: T, time: VirtualTime, ms: number): T {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await time.sleep(ms);
        return (value as (...a: unknown[]) => unknown).apply(obj, args);
      };
    },
  });
}

/**
 * WebhookRepository (the reads) and WebhookHealthStore on maps by tenant, with DynamoWebhookHealth's conditions,
 * each call taking `dynamoMs`: the ports' contract without the test fakes' copying and scans (millions of calls).
 */
class SimWebhooks {
  private readonly byKey = new Map<string, Webhook>();
  private readonly byTenant = new Map<string, Webhook[]>();
  constructor(private readonly time: VirtualTime) {}

  add(webhook: Webhook): void {
    const tenant = `${webhook.accountId}#${webhook.mode}`;
    this.byKey.set(`${tenant}#${webhook.id}`, webhook);
    this.byTenant.set(tenant, [...(this.byTenant.get(tenant) ?? []), webhook]);
  }

  private put(webhook: Webhook): void {
    const tenant = `${webhook.accountId}#${webhook.mode}`;
    this.byKey.set(`${tenant}#${webhook.id}`, webhook);
    this.byTenant.set(
      tenant,
      (this.byTenant.get(tenant) ?? []).map((w) => (w.id === webhook.id ? webhook : w)),
    );
  }

  private find(tenant: Tenant, id: string): Webhook | undefined {
    return this.byKey.get(`${tenant.accountId}#${tenant.mode}#${id}`);
  }

  async get(tenant: Tenant, id: string): Promise<Webhook | null> {
    await this.time.sleep(LATENCY.dynamoMs);
    return this.find(tenant, id) ?? null;
  }

  async getMany(refs: readonly WebhookRef[]): Promise<Webhook[]> {
    await this.time.sleep(LATENCY.dynamoMs);
    return refs.flatMap((ref) => this.find(ref, ref.id) ?? []);
  }

  async list(tenant: Tenant): Promise<Webhook[]> {
    await this.time.sleep(LATENCY.dynamoMs);
    return [...(this.byTenant.get(`${tenant.accountId}#${tenant.mode}`) ?? [])];
  }

  readonly health: WebhookHealthStore = {
    countFailure: async (tenant, id, at) => {
      await this.time.sleep(LATENCY.dynamoMs);
      const current = this.find(tenant, id);
      if (!current) return null;
      const streaking = typeof current.failingSince === 'number';
      const next: Webhook = streaking
        ? { ...current, failedDeliveries: (current.failedDeliveries ?? 0) + 1 }
        : { ...current, failingNotifiedAt: null, failingSince: at, failedDeliveries: 1 };
      this.put(next);
      return {
        since: next.failingSince ?? 0,
        failures: next.failedDeliveries ?? 0,
        failingNotified: typeof next.failingNotifiedAt === 'number',
      };
    },
    clearStreak: async (tenant, id) => {
      await this.time.sleep(LATENCY.dynamoMs);
      const current = this.find(tenant, id);
      if (!current || typeof current.failingSince !== 'number') return;
      this.put({ ...current, failingSince: null, failedDeliveries: null, failingNotifiedAt: null });
    },
    noteFailing: async (tenant, id, since, at) => {
      await this.time.sleep(LATENCY.dynamoMs);
      const current = this.find(tenant, id);
      if (!current || current.failingSince !== since || typeof current.failingNotifiedAt === 'number') return false;
      this.put({ ...current, failingNotifiedAt: at });
      return true;
    },
    disable: async (tenant, id, reason, at, since) => {
      await this.time.sleep(LATENCY.dynamoMs);
      const current = this.find(tenant, id);
      if (!current?.active || (since !== undefined && current.failingSince !== since)) return null;
      const iso = new Date(at).toISOString();
      const next: Webhook = { ...current, active: false, disabledReason: reason, disabledAt: iso, updatedAt: iso };
      this.put(next);
      return next;
    },
  };
}

/** The endpoints: bad-day answers (drawn at random, seeded) or hangs that only the sender's time-out ends. */
class SimSender implements WebhookSender {
  private readonly random = prng(29);
  constructor(
    private readonly time: VirtualTime,
    private readonly endpoints: ReadonlyMap<string, Endpoint>,
    private readonly timeoutMs: number,
  ) {}

  async send(request: { url: string }): Promise<AttemptOutcome> {
    const endpoint = this.endpoints.get(request.url);
    if (!endpoint) throw new Error(`no simulated endpoint at ${request.url}`);
    const at = this.time.now();
    const base = { at, timings: NO_TIMINGS, response: '' };
    const u = this.random();
    const latency = Math.round(badDayLatencyMs(this.random()));
    // An answer later than the time-out is a time-out (the sender aborts the request).
    if (endpoint.behaviour === 'hang' || u < BAD_DAY.hangShare || latency >= this.timeoutMs) {
      await this.time.sleep(this.timeoutMs);
      const error = `Timed out after ${this.timeoutMs / 1000} s`;
      return { ...base, statusCode: null, durationMs: this.timeoutMs, error, errorClass: 'timeout' };
    }
    await this.time.sleep(latency);
    if (u < BAD_DAY.hangShare + BAD_DAY.tooManyShare) {
      return {
        ...base,
        statusCode: 429,
        durationMs: latency,
        error: 'HTTP 429',
        errorClass: 'http_4xx',
        responseHeaders: { 'retry-after': String(BAD_DAY.retryAfterSeconds) },
      };
    }
    if (u < BAD_DAY.hangShare + BAD_DAY.tooManyShare + BAD_DAY.serverErrorShare) {
      return { ...base, statusCode: 500, durationMs: latency, error: 'HTTP 500', errorClass: 'http_5xx' };
    }
    return { ...base, statusCode: 200, durationMs: latency, error: null, errorClass: null };
  }
}

export interface World {
  readonly time: VirtualTime;
  readonly figures: Figures;
  readonly queues: {
    events: SimQueue;
    deliveries: SimQueue;
    bypass: SimQueue;
    slow: SimQueue;
    dlq: SimQueue;
    slowDlq: SimQueue;
  };
  readonly mappings: EventSourceMapping[];
  readonly functions: { dispatcher: SimFunction; delivery: SimFunction };
  readonly account: AccountConcurrency;
  readonly scheduler: SimScheduler;
  readonly deliveries: SimDeliveries;
  readonly endpoints: Map<string, Endpoint>;
  /** Adds a tenant with `count` endpoints (webhooks subscribed to email.delivered). */
  tenant(id: string, count: number, behaviour: Behaviour, cls: TenantClass): Promise<Endpoint[]>;
  /** Publishes one email.delivered event per endpoint of `tenant`'s (its fan-out makes one delivery per webhook). */
  publish(events: readonly SendflowEvent[]): Promise<void>;
  /**
   * First-attempt jobs already queued (a backlog): `perEndpoint` for each of `endpoints`, the oldest enqueued at
   * `at`, their tenants' last sent at `lastSentAt`.
   */
  preload(endpoints: readonly Endpoint[], perEndpoint: number, at: number, lastSentAt: number): void;
  /** Whether nothing is queued, in flight, scheduled or pending anywhere. */
  idle(): boolean;
  classOf(accountId: string): TenantClass;
}

export async function createWorld(time: VirtualTime, stage: StageSettings): Promise<World> {
  const figures = new Figures();
  const start = time.now();
  const endpoints = new Map<string, Endpoint>();
  const tenantClass = new Map<string, TenantClass>();
  const classOf = (accountId: string): TenantClass => tenantClass.get(accountId) ?? 'live';

  // Queues (the manifest's, each with its DLQ), at the stage's retention.
  const url = (name: string) => `https://sqs.sim.amazonaws.com/000000000000/${name}`;
  const queue = (name: string, spec: QueueSpec, dlq?: SimQueue) =>
    new SimQueue(
      {
        name,
        retentionSeconds: stage.retentionSeconds,
        visibilityTimeoutSeconds: visibilityTimeoutSeconds(spec),
        ...(dlq ? { maxReceiveCount: spec.maxReceiveCount, dlq } : {}),
      },
      time,
      stage.scale,
    );
  const dlq = queue('deliveries-dlq', stage.queues.deliveries);
  const slowDlq = queue('slow-dlq', stage.queues.slowDeliveries);
  const eventsDlq = queue('events-dlq', stage.queues.events);
  const q = {
    events: queue('events', stage.queues.events, eventsDlq),
    deliveries: queue('deliveries', stage.queues.deliveries, dlq),
    // The shared lane's bypass: the deliveries queue's settings and DLQ.
    bypass: queue('deliveries-bypass', stage.queues.deliveries, dlq),
    slow: queue('slow', stage.queues.slowDeliveries, slowDlq),
    dlq,
    slowDlq,
  };
  const byUrl = new Map([
    [url('events'), q.events],
    [url('deliveries'), q.deliveries],
    [url('deliveries-bypass'), q.bypass],
    [url('slow'), q.slow],
  ]);
  const sqs = new SimSqsClient(byUrl, time, LATENCY.sqsMs) as unknown as SQSClient;
  const scheduler = new SimScheduler(new Map([[q.deliveries.arn, q.deliveries]]), time, LATENCY.schedulerMs);

  // DynamoDB: the ports as in-memory maps, each call a round trip.
  const webhookStore = new SimWebhooks(time);
  const webhooks = webhookStore as unknown as WebhookRepository;
  const health = webhookStore.health;
  const deliveries = new SimDeliveries(time, (d) => figures.add(figures.finals, classOf(d.accountId)));
  const sender = new SimSender(time, endpoints, 10_000);
  const telemetry: Telemetry = {
    attempted: (report) => {
      const cls = classOf(report.accountId);
      figures.add(figures.attempts, cls);
      if (report.firstAttemptLagMs !== undefined) figures.lag(cls, time.now(), report.firstAttemptLagMs, start);
    },
    requested: () => {},
    emails: () => {},
    sendStarted: () => {},
    flush: () => {},
  };
  const shared = new SqsDeliveryQueue(sqs, url('deliveries'));
  const dlqArns = new Set([q.dlq.arn, q.slowDlq.arn]);
  const random = (() => {
    const r = prng(7);
    return (n: number) => Uint8Array.from({ length: n }, () => Math.floor(r() * 256));
  })();

  // A delivery container: the worker with its own gate, webhook cache and known streaks, as on AWS; its attempts'
  // handshakes share its one CPU.
  const deliveryContainer = (): Handler => {
    const known = new InProcessKnownStreaks();
    // The container's retry transport, paced as the plug paces it (one per cold start).
    const retries = new AwsRetryScheduler({
      scheduler: scheduler as unknown as SchedulerClient,
      queue: shared,
      groupName: SCHEDULE_GROUP,
      queueArn: q.deliveries.arn,
      roleArn: 'arn:aws:iam::000000000000:role/sim-scheduler',
      dlqArn: 'arn:aws:sqs:sim:000000000000:sim-scheduler-dlq',
      now: () => time.now(),
      schedulesPerSecond: SCHEDULES_PER_SECOND,
      sleep: (ms) => time.sleep(ms),
    });
    let cpuFreeAt = 0;
    // The lane of the batch this container runs (one at a time), for the attempts' figures.
    let lane = 'other';
    const deps = {
      webhooks,
      deliveries,
      sender: {
        send: async (request: { url: string; body: string; headers: Readonly<Record<string, string>> }) => {
          cpuFreeAt = Math.max(cpuFreeAt, time.now()) + TLS_HANDSHAKE_CPU_MS;
          await time.sleep(cpuFreeAt - time.now());
          const tenant = endpoints.get(request.url)?.webhook.accountId ?? '?';
          const key = `${lane} ${Math.floor((time.now() - start) / 60_000)}`;
          const byTenant = figures.laneAttempts.get(key) ?? new Map<string, number>();
          figures.laneAttempts.set(key, byTenant);
          figures.add(byTenant, tenant);
          return sender.send(request);
        },
      },
      retries,
      recoveries: new InMemoryRecoveryRepository(),
      recoveryQueue: new SqsRecoveryQueue(sqs, url('deliveries')),
      clock: time,
      random,
      policy: { delaysSeconds: DEFAULT_RETRY_DELAYS_SECONDS },
      claimMs: Math.max(10_000, stage.queues.deliveries.functionTimeoutSeconds * 1000) + 10_000,
      retentionSeconds: 30 * 86_400,
      telemetry,
      webhookReads: new CachedWebhookReads(webhooks, time, 1000),
      watch: (seen: Parameters<typeof watchEndpointSafely>[1]) =>
        watchEndpointSafely(
          {
            health,
            webhooks,
            deliveryQueue: shared,
            clock: time,
            random,
            autoDisable: autoDisablePolicy(DEFAULT_DISABLE_AFTER_SECONDS, DEFAULT_FAILING_AFTER_SECONDS),
            known,
          },
          seen,
          () => {},
        ),
      lanes: deliveryLanes(
        {
          queue: new SqsDeliveryQueue(sqs, url('slow')),
          steps: new SqsRecoveryQueue(sqs, url('slow')),
          arn: q.slow.arn,
          maxDelaySeconds: SQS_MAX_DELAY_SECONDS,
        },
        shared,
        retries,
        stage.lanePolicy,
        time,
      ),
      pacing: {
        pace: new EndpointPace(new InMemoryPaceCounter(), time, IN_PROCESS_PACE, (ms) => time.sleep(ms)),
        queue: shared,
      },
      isDeadLetter: (record: { eventSourceARN: string }) => dlqArns.has(record.eventSourceARN),
    };
    const handler = createDeliveryWorkerHandler(deps);
    return async (event) => {
      const started = time.now();
      const source = event.Records[0]?.eventSourceARN;
      lane =
        source === q.slow.arn ? 'slow' : source === q.deliveries.arn || source === q.bypass.arn ? 'shared' : 'other';
      const result = await handler(event);
      if (process.env.BENCH_SCALE_DEBUG && time.now() - started > 20_000) {
        const jobs = event.Records.map((r) => JSON.parse(r.body) as { attempt?: number; recovery?: unknown });
        console.log(
          `slow invocation: ${time.now() - started} ms, ${event.Records[0]?.eventSourceARN}, attempts ${jobs.map((j) => j.attempt).join(',')}`,
        );
      }
      return result;
    };
  };
  // A dispatcher container.
  const noHistory = { record: async () => true, noteStatus: async () => {} };
  // The dispatcher's fan-out, as the AWS plug wires it: first attempts skip a backlog of the deliveries queue.
  const fanOut = stage.bypass
    ? new BypassDeliveryQueue(
        { queue: shared, depth: new SqsQueueDepth(sqs, url('deliveries')) },
        {
          queue: new SqsDeliveryQueue(sqs, url('deliveries-bypass')),
          depth: new SqsQueueDepth(sqs, url('deliveries-bypass')),
        },
        time,
        // A depth is a count of the load: scaled down with the rates.
        { ...DELIVERIES_BYPASS, behindMessages: DELIVERIES_BYPASS.behindMessages / stage.scale },
      )
    : shared;
  const processDeps: ProcessEventDeps = {
    webhooks,
    deliveryQueue: fanOut,
    clock: time,
    emailHistory: latent(noHistory, time, LATENCY.dynamoMs) as unknown as ProcessEventDeps['emailHistory'],
    suppressions: { add: async () => true } as unknown as ProcessEventDeps['suppressions'],
  };
  const dispatcherContainer = (): Handler => createDispatcherHandler(processDeps);

  const fn = (name: string, timeoutSeconds: number, newContainer: () => Handler) =>
    new SimFunction({ name, memoryMb: 512, timeoutSeconds, ...LAMBDA_COSTS, newContainer });
  const functions = {
    dispatcher: fn('dispatcher', stage.queues.events.functionTimeoutSeconds, dispatcherContainer),
    delivery: fn('delivery', stage.queues.deliveries.functionTimeoutSeconds, deliveryContainer),
  };
  const account = new AccountConcurrency(Math.round(stage.unreservedConcurrency / stage.scale));
  const mapping = (source: SimQueue, f: SimFunction, spec: QueueSpec, maxConcurrency = spec.maxConcurrency) =>
    new EventSourceMapping(
      source,
      f,
      {
        batchSize: spec.batchSize,
        batchingWindowSeconds: spec.maxBatchingWindowSeconds ?? 0,
        maxConcurrency: Math.max(2, Math.round(maxConcurrency / stage.scale)),
        scale: stage.scale,
      },
      account,
      time,
      (records, _failed, ms) => {
        const lane = source === q.slow ? 'slow' : source === q.deliveries || source === q.bypass ? 'shared' : 'other';
        const byTenant = figures.laneRecords.get(lane) ?? new Map<string, number>();
        figures.laneRecords.set(lane, byTenant);
        for (const m of records) {
          figures.add(figures.laneSeconds, `${lane} ${classOf(m.group)}`, ms / 1000 / records.length);
          figures.add(byTenant, m.group);
        }
      },
    );
  const mappings = [
    mapping(q.events, functions.dispatcher, stage.queues.events),
    mapping(q.deliveries, functions.delivery, stage.queues.deliveries),
    ...(stage.bypass
      ? [mapping(q.bypass, functions.delivery, stage.queues.deliveries, stage.bypass.maxConcurrency)]
      : []),
    mapping(q.slow, functions.delivery, stage.queues.slowDeliveries),
    mapping(q.dlq, functions.delivery, stage.queues.deliveries, 2),
    mapping(q.slowDlq, functions.delivery, stage.queues.slowDeliveries, 2),
  ];
  const publisher = new SqsEventPublisher(sqs, url('events'));
  // Each second: which lanes had messages waiting (they were behind: their batches came full).
  const sample = () => {
    const minute = Math.floor((time.now() - start) / 60_000);
    if ((time.now() - start) % 60_000 === 0) figures.laneWaiting.set(`slow ${minute - 1}`, q.slow.readyByGroup());
    if (q.slow.ready > 0) figures.add(figures.laneBehind, `slow ${minute}`);
    if (q.deliveries.ready + q.bypass.ready > 0) figures.add(figures.laneBehind, `shared ${minute}`);
    time.after(1000, sample);
  };
  time.after(1000, sample);

  let webhookSeq = 0;
  return {
    time,
    figures,
    queues: q,
    mappings,
    functions,
    account,
    scheduler,
    deliveries,
    endpoints,
    classOf,
    async tenant(id, count, behaviour, cls) {
      tenantClass.set(id, cls);
      const made: Endpoint[] = [];
      for (let i = 0; i < count; i++) {
        const n = webhookSeq++;
        const webhook: Webhook = {
          id: `wh_${String(n).padStart(6, '0')}`,
          accountId: id,
          mode: 'live',
          url: `https://endpoint-${n}.example.com/hooks`,
          events: ['email.delivered'],
          format: 'standard',
          secret: `whsec_${Buffer.alloc(32, n % 251).toString('base64')}`,
          active: true,
          createdAt: new Date(start).toISOString(),
          updatedAt: new Date(start).toISOString(),
        };
        webhookStore.add(webhook);
        const endpoint = { webhook, behaviour, tenantClass: cls };
        endpoints.set(webhook.url, endpoint);
        made.push(endpoint);
      }
      return made;
    },
    publish: (events) => publisher.publish(events),
    preload(list, perEndpoint, at, lastSentAt) {
      // One group per tenant (MessageGroupId = the account), its endpoints' jobs interleaved as they were queued.
      const byTenant = new Map<string, Endpoint[]>();
      for (const e of list) byTenant.set(e.webhook.accountId, [...(byTenant.get(e.webhook.accountId) ?? []), e]);
      for (const [tenant, mine] of byTenant) {
        q.deliveries.preload(tenant, mine.length * perEndpoint, at, lastSentAt, (n) => {
          const endpoint = mine[n % mine.length] as Endpoint;
          const event = backlogEvent(tenant, endpoint, n, at);
          return JSON.stringify({
            deliveryId: deliveryIdFor(event.id, endpoint.webhook.id),
            webhookId: endpoint.webhook.id,
            attempt: 1,
            eventAt: at,
            seed: {
              accountId: tenant,
              mode: 'live',
              eventId: event.id,
              event: event.type,
              format: 'standard',
              payload: JSON.stringify({ type: event.type, created_at: event.timestamp, data: event.data }),
              createdAt: at,
            },
          });
        });
      }
    },
    idle() {
      const quiet = Object.values(q).every((x) => x.depth === 0);
      return quiet && scheduler.pending === 0 && deliveries.pending === 0 && account.inUse === 0;
    },
  };
}

function backlogEvent(tenant: string, endpoint: Endpoint, n: number, at: number): SendflowEvent {
  return {
    id: `evt_b${tenant.slice(-4)}${endpoint.webhook.id.slice(3)}${String(n).padStart(7, '0')}`,
    type: 'email.delivered',
    accountId: tenant,
    mode: 'live',
    timestamp: new Date(at).toISOString(),
    emailId: `em_${n}`,
    to: 'customer@example.com',
    data: { from: 'billing@acme.example', subject: 'Your receipt' },
  };
}

export type { SimMessage };
