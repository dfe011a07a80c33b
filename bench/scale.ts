// bench:scale: whether one stage's defaults carry the load they are priced for (issue 29, item 4). The real
// dispatcher and delivery worker (and every use case, adapter and lane rule they run) on models of SQS, Lambda and
// EventBridge Scheduler and a virtual clock (bench/scale/*.ts): a steady 10,000 first-attempt deliveries a second
// from many tenants at the bad day's latency; the same offered by one tenant alone; and a backlog of 1,000,000
// pending deliveries over 1,000 endpoints, 10% of them hanging, while healthy tenants' traffic goes on. Prints each
// scenario's figures, then one JSON line. docs/benchmarks.md ("Scale") explains the model and what it leaves out.
//
// Scaled down by BENCH_SCALE_FACTOR (k, default 10): rates, the backlog (per endpoint) and every concurrency limit
// (the event sources', the account's, Lambda's scaling steps, fair queues' 30-in-flight threshold) divided by k;
// tenants and endpoints not (fair queues judge a tenant by its share of the queue), nor batch sizes, windows,
// latencies, time-outs and retention; throughputs, counts and Scheduler rates are multiplied back by k. k = 1 runs
// the full scale (about 10 times as long).
// Env: BENCH_SCALE_ONLY=steady|one-tenant|backlog, BENCH_SCALE_SECONDS (the steady scenarios' measured window,
// default 60), BENCH_SCALE_WARMUP (seconds before it, default 180: Lambda adds 300 batches a minute),
// BENCH_SCALE_DEFAULTS=previous (the settings before issue 29, with this code).

import type { SendflowEvent } from '../lambdas/domain/events';
import { AWS_LANE_POLICY } from '../lambdas/domain/webhooks/endpoint-health';
import { queues } from '../lambdas/manifest';
import { DEFAULT_LAMBDA_CONCURRENCY } from '../lib/concurrency';
import { QUEUE_RETENTION } from '../lib/constructs/queues';
import { DEFAULT_MAX_CONCURRENCY } from '../lib/consumers';
import { percentile, positiveInt, printTable } from './report';
import { VirtualTime } from './scale/virtual-time';
import { createWorld, type Endpoint, type StageSettings, type TenantClass, type World } from './scale/world';

const START = Date.UTC(2026, 10, 30, 0, 0, 0);
const ONLY = process.env.BENCH_SCALE_ONLY;
const K = positiveInt('BENCH_SCALE_FACTOR', 10);
const MEASURE_SECONDS = positiveInt('BENCH_SCALE_SECONDS', 60);
const WARMUP_SECONDS = positiveInt('BENCH_SCALE_WARMUP', 180);
const TARGET_RATE = 10_000;

/** The backlog scenario at full scale (divided by K): issue 29's figures, and the healthy traffic around it. */
const BACKLOG = {
  pending: 1_000_000,
  endpoints: 1_000,
  endpointsPerTenant: 10,
  hangingShare: 0.1,
  /** Healthy tenants' own traffic meanwhile: 1,000 deliveries a second for half an hour, then 100. */
  liveTenants: 20,
  liveRate: 1_000,
  liveRateLater: 100,
  liveBusyMs: 30 * 60_000,
  /** Give up after this long (a drain that has not ended is reported as such). */
  capMs: 48 * 3_600_000,
} as const;

/**
 * BENCH_SCALE_DEFAULTS=previous: the defaults before issue 29 (batches of 10, no window; events 10, deliveries 50,
 * slow lane 5 at once; SQS's default retention of 4 days), with this code: what the old settings carry.
 */
const PREVIOUS = process.env.BENCH_SCALE_DEFAULTS === 'previous';
const previousQueues = {
  events: { functionTimeoutSeconds: 30, batchSize: 10, maxReceiveCount: 5, maxConcurrency: 10 },
  deliveries: { functionTimeoutSeconds: 30, batchSize: 10, maxReceiveCount: 5, maxConcurrency: 50 },
  slowDeliveries: { functionTimeoutSeconds: 30, batchSize: 10, maxReceiveCount: 5, maxConcurrency: 5 },
};

const STAGE: StageSettings = {
  queues: PREVIOUS ? previousQueues : queues,
  retentionSeconds: PREVIOUS ? 4 * 86_400 : QUEUE_RETENTION.toSeconds(),
  unreservedConcurrency:
    DEFAULT_LAMBDA_CONCURRENCY.accountQuota - DEFAULT_LAMBDA_CONCURRENCY.api - DEFAULT_LAMBDA_CONCURRENCY.authorizer,
  lanePolicy: AWS_LANE_POLICY,
  scale: K,
  ...(PREVIOUS ? {} : { bypass: { maxConcurrency: DEFAULT_MAX_CONCURRENCY.deliveriesBypass } }),
};

const seconds = (ms: number) => Number((ms / 1000).toFixed(2));
let eventSeq = 0;

function event(endpoint: Endpoint, at: number): SendflowEvent {
  const n = eventSeq++;
  return {
    id: `evt_${at.toString(36)}${String(n).padStart(9, '0')}`,
    type: 'email.delivered',
    accountId: endpoint.webhook.accountId,
    mode: 'live',
    timestamp: new Date(at).toISOString(),
    emailId: `em_${n}`,
    to: 'customer@example.com',
    data: { from: 'billing@acme.example', subject: 'Your receipt' },
  };
}

/**
 * Publishes `perSecond()` deliveries a second from `from` until `until()` says stop, every 10 ms: events of the
 * tenants in turn, each fanned out to every webhook of its tenant.
 */
function traffic(
  world: World,
  tenants: readonly Endpoint[][],
  perSecond: () => number,
  from: number,
  until: () => boolean,
): void {
  const webhooksPerEvent = tenants.reduce((n, t) => n + t.length, 0) / tenants.length;
  let owed = 0;
  let turn = 0;
  const tick = () => {
    if (until()) return;
    const now = world.time.now();
    owed += perSecond() / webhooksPerEvent / 100;
    const events: SendflowEvent[] = [];
    while (owed >= 1) {
      const tenant = tenants[turn++ % tenants.length] as Endpoint[];
      events.push(event(tenant[0] as Endpoint, now));
      owed -= 1;
    }
    if (events.length) void world.publish(events);
    world.time.after(10, tick);
  };
  world.time.at(from, tick);
}

interface SteadyFigures {
  readonly deliveriesPerSecond: number;
  readonly firstAttemptP99Seconds: number;
  readonly firstAttemptP50Seconds: number;
}

/** `tenantCount` tenants of `webhooks` endpoints each at the bad day's answers offer `rate` deliveries a second. */
async function steady(name: string, tenantCount: number, webhooks: number, rate: number): Promise<SteadyFigures> {
  const time = new VirtualTime(START);
  const world = await createWorld(time, STAGE);
  const tenants: Endpoint[][] = [];
  for (let t = 0; t < tenantCount; t++) tenants.push(await world.tenant(`acct_s${t}`, webhooks, 'bad-day', 'live'));
  const opens = START + WARMUP_SECONDS * 1000;
  const end = opens + MEASURE_SECONDS * 1000;
  traffic(
    world,
    tenants,
    () => rate / K,
    START,
    () => time.now() >= end,
  );
  const wall = Date.now();
  let before = 0;
  time.at(opens, () => {
    before = world.figures.lags.get('live')?.length ?? 0;
  });
  await time.runUntil(end);
  const lags = (world.figures.lags.get('live') ?? []).slice(before);
  const figures = {
    deliveriesPerSecond: Math.round((lags.length * K) / MEASURE_SECONDS),
    firstAttemptP99Seconds: seconds(percentile(lags, 99)),
    firstAttemptP50Seconds: seconds(percentile(lags, 50)),
  };
  report(name, world, figures, Date.now() - wall);
  return figures;
}

interface BacklogFigures {
  pending: number;
  drain_hours: number | null;
  expired: number;
  lost: number | null;
  scheduler_calls_per_second_max: number;
  healthy_first_attempt_p99_seconds: number;
}

/**
 * 1,000,000 first attempts already queued over 1,000 endpoints (10 a tenant), as after an hour-long outage of the
 * delivery function; the endpoints of 10% of the tenants hang (never answer: every attempt runs to the 10 s
 * time-out), the others answer as on the bad day. Meanwhile other, healthy tenants go on sending. Runs until every
 * pending delivery is final (succeeded, or failed after its retries), or the cap.
 */
async function backlog(): Promise<BacklogFigures> {
  const time = new VirtualTime(START);
  const world = await createWorld(time, STAGE);
  const endpoints = BACKLOG.endpoints;
  const tenantCount = endpoints / BACKLOG.endpointsPerTenant;
  const hangingTenants = Math.max(1, Math.round(tenantCount * BACKLOG.hangingShare));
  const backlogEndpoints: Endpoint[] = [];
  for (let t = 0; t < tenantCount; t++) {
    const hangs = t < hangingTenants;
    backlogEndpoints.push(
      ...(await world.tenant(
        `acct_b${t}`,
        BACKLOG.endpointsPerTenant,
        hangs ? 'hang' : 'bad-day',
        hangs ? 'hanging' : 'backlog',
      )),
    );
  }
  const live: Endpoint[][] = [];
  for (let t = 0; t < BACKLOG.liveTenants; t++) live.push(await world.tenant(`acct_l${t}`, 10, 'bad-day', 'live'));
  const pending = BACKLOG.pending / K;
  // Queued during an hour's outage that ends now: retention counts from the hour's start, and their tenants were
  // sending until now (fair queues' 5 quiet minutes start here).
  world.preload(backlogEndpoints, pending / endpoints, START - 3_600_000, START);
  const finals = () => (world.figures.finals.get('backlog') ?? 0) + (world.figures.finals.get('hanging') ?? 0);
  let drainedAt: number | null = null;
  const drained = () => {
    if (drainedAt === null && finals() >= pending) drainedAt = time.now();
    return drainedAt !== null;
  };
  traffic(
    world,
    live,
    () => (time.now() - START < BACKLOG.liveBusyMs ? BACKLOG.liveRate : BACKLOG.liveRateLater) / K,
    START,
    () => drained() || time.now() >= START + BACKLOG.capMs - 3_600_000,
  );
  const wall = Date.now();
  await time.runUntil(START + BACKLOG.capMs, drained);
  const expired = Object.values(world.queues).reduce((n, q) => n + q.counts.expired + q.overdue(), 0);
  const lags = world.figures.lags.get('live') ?? [];
  const worstMinute = Math.max(
    0,
    ...[...(world.figures.lagsByMinute.get('live') ?? new Map()).values()].map((l: number[]) => percentile(l, 99)),
  );
  if (process.env.BENCH_SCALE_DEBUG) {
    const byMinute = [...(world.figures.lagsByMinute.get('live') ?? new Map<number, number[]>()).entries()];
    console.log(
      byMinute
        .slice(0, 15)
        .map(([m, l]) => `${m}: ${seconds(percentile(l, 99))}s (${l.length})`)
        .join(', '),
    );
  }
  const lane = (name: string, cls: TenantClass) => world.figures.laneSeconds.get(`${name} ${cls}`) ?? 0;
  const share = (name: string) => {
    const all = (['live', 'backlog', 'hanging'] as const).reduce((n, c) => n + lane(name, c), 0);
    return all ? Number((lane(name, 'hanging') / all).toFixed(3)) : 0;
  };
  // Each lane's slots by tenant: the busiest hanging tenant's share, against an equal share of the tenants there.
  const fairness = (name: string) => {
    // Tenants' messages only (a retry fired by Scheduler carries no MessageGroupId: SQS counts it as its own tenant).
    const byTenant = new Map(
      [...(world.figures.laneRecords.get(name) ?? new Map<string, number>())].filter(([group]) =>
        group.startsWith('acct_'),
      ),
    );
    const total = [...byTenant.values()].reduce((a, b) => a + b, 0);
    const hanging = [...byTenant].filter(([t]) => world.classOf(t) === 'hanging').map(([, n]) => n);
    const top = Math.max(0, ...hanging) / Math.max(1, total);
    return {
      busiest_hanging_tenant_share: Number(top.toFixed(4)),
      equal_share: Number((1 / Math.max(1, byTenant.size)).toFixed(4)),
      hanging_tenants_share: Number((hanging.reduce((a, b) => a + b, 0) / Math.max(1, total)).toFixed(3)),
    };
  };
  // Each lane's attempts by tenant in the minutes it was behind (messages waiting 50 s of the minute or more),
  // against each tenant's fair share: max-min over the tenants' demand (a tenant's attempts in the minute and its
  // jobs still waiting at its end), the minute's attempts the capacity. A tenant over its fair share took slots
  // another tenant's waiting jobs were owed; the busiest hanging tenant's attempts over its fair share, worst and
  // median minute, and the same against an equal share of the tenants attempted in the minute.
  // Each lane's attempts by tenant in the windows it was behind (every minute of it with messages waiting 50 s or
  // more), against each tenant's fair share: max-min over the tenants' demand (a tenant's attempts in the window and
  // its jobs still waiting at its end), the window's attempts the capacity. A tenant over its fair share took slots
  // another tenant's waiting jobs were owed; the busiest hanging tenant's attempts over its fair share, worst and
  // median window, and the same against an equal share of the tenants attempted in the window. A window of one
  // minute shows how the lane turns between hungry tenants; of five, what each gets over a few turns.
  const windowed = (name: string, minutes: number) => {
    const overFair: number[] = [];
    const overEqual: number[] = [];
    // The same for the healthy backlog tenants (who get what a hanging tenant gets if the lane favours neither),
    // and the tenants with jobs waiting that got no attempt in the window (starved: what lowers everyone's share).
    const healthyOverFair: number[] = [];
    const starved: number[] = [];
    const behind = [...world.figures.laneBehind]
      .map(([key, seconds]) => ({ lane: key.split(' ')[0], minute: Number(key.split(' ')[1]), seconds }))
      .filter((m) => m.lane === name);
    const isBehind = (minute: number) => behind.some((m) => m.minute === minute && m.seconds >= 50);
    const first = Math.min(...behind.map((m) => m.minute));
    const last = Math.max(...behind.map((m) => m.minute));
    for (let start = first; start + minutes - 1 <= last; start += 1) {
      const range = Array.from({ length: minutes }, (_, i) => start + i);
      if (!range.every(isBehind)) continue;
      const attempts = new Map<string, number>();
      for (const minute of range) {
        for (const [t, n] of world.figures.laneAttempts.get(`${name} ${minute}`) ?? []) {
          if (t.startsWith('acct_')) attempts.set(t, (attempts.get(t) ?? 0) + n);
        }
      }
      const waiting = world.figures.laneWaiting.get(`${name} ${start + minutes - 1}`) ?? new Map<string, number>();
      const capacity = [...attempts.values()].reduce((a, b) => a + b, 0);
      if (capacity === 0) continue;
      const demand = new Map(attempts);
      for (const [t, n] of waiting) if (t.startsWith('acct_')) demand.set(t, (demand.get(t) ?? 0) + n);
      const level = waterLevel([...demand.values()], capacity);
      let worst = 0;
      let busiest = 0;
      let healthiest = 0;
      for (const [t, n] of attempts) {
        const ratio = n / Math.min(demand.get(t) ?? n, level);
        if (world.classOf(t) === 'backlog') healthiest = Math.max(healthiest, ratio);
        if (world.classOf(t) !== 'hanging') continue;
        worst = Math.max(worst, ratio);
        busiest = Math.max(busiest, n);
      }
      const hungry = [...demand.keys()].filter((t) => !attempts.has(t)).length;
      overFair.push(worst);
      healthyOverFair.push(healthiest);
      starved.push(hungry);
      overEqual.push((busiest / capacity) * attempts.size);
      if (process.env.BENCH_SCALE_DEBUG && minutes === 1) {
        console.log(
          `${name} lane, minute ${start}: ${attempts.size} tenants, ${capacity} attempts, busiest hanging ${busiest}, ` +
            `fair share ${level.toFixed(0)}, ${[...waiting.values()].reduce((a, b) => a + b, 0)} waiting, ` +
            `ratio ${worst.toFixed(2)}, starved ${hungry}`,
        );
      }
    }
    const at = (list: number[], q: number) =>
      Number((list.sort((a, b) => a - b)[Math.floor(q * (list.length - 1))] ?? 0).toFixed(2));
    return {
      [minutes === 1 ? 'minutes_behind' : 'windows_behind']: overFair.length,
      busiest_hanging_tenant_vs_fair_share_worst: at(overFair, 1),
      busiest_hanging_tenant_vs_fair_share_median: at(overFair, 0.5),
      busiest_hanging_tenant_vs_equal_share_worst: at(overEqual, 1),
      busiest_healthy_backlog_tenant_vs_fair_share_worst: at(healthyOverFair, 1),
      busiest_healthy_backlog_tenant_vs_fair_share_median: at(healthyOverFair, 0.5),
      starved_tenants_median: at(starved, 0.5),
      starved_tenants_worst: at(starved, 1),
    };
  };
  const figures: BacklogFigures = {
    pending: pending * K,
    drain_hours: drainedAt === null ? null : Number(((drainedAt - START) / 3_600_000).toFixed(2)),
    expired: expired * K,
    // A delivery that is neither final nor anywhere (a row, a queue, a schedule) when the run ends was lost.
    lost:
      drainedAt !== null
        ? 0
        : Math.max(
            0,
            pending -
              finals() -
              world.deliveries.pending -
              Object.values(world.queues).reduce((n, q) => n + q.depth, 0) -
              world.scheduler.pending,
          ) * K,
    scheduler_calls_per_second_max: world.scheduler.maxCallsPerSecond * K,
    healthy_first_attempt_p99_seconds: seconds(percentile(lags, 99)),
  };
  report(
    `backlog: ${pending * K} pending over ${endpoints} endpoints of ${tenantCount} tenants (${hangingTenants} tenants' hang), ` +
      `${BACKLOG.liveTenants} healthy tenants' traffic alongside`,
    world,
    {
      ...figures,
      healthy_first_attempt_p50_seconds: seconds(percentile(lags, 50)),
      healthy_first_attempt_p99_seconds_worst_minute: seconds(worstMinute),
      hanging_tenants: hangingTenants,
      hanging_share_of_shared_lane_time: share('shared'),
      hanging_share_of_slow_lane_time: share('slow'),
      shared_lane_slots: fairness('shared'),
      slow_lane_slots: fairness('slow'),
      shared_lane_attempts_while_behind: windowed('shared', 1),
      slow_lane_attempts_while_behind: windowed('slow', 1),
      slow_lane_attempts_while_behind_5_minutes: windowed('slow', 5),
      scheduler_calls_per_second_max_over_10_s: world.scheduler.maxCallsPerSecondOver10s * K,
      scheduler_fired_per_second_max: world.scheduler.maxFiredPerSecond * K,
    },
    Date.now() - wall,
  );
  return figures;
}

/** Max-min fairness: the level c at which the demands, each capped at c, fill `capacity` (Infinity if they all fit). */
function waterLevel(demands: readonly number[], capacity: number): number {
  const sorted = [...demands].sort((a, b) => a - b);
  let left = capacity;
  for (let i = 0; i < sorted.length; i++) {
    const share = left / (sorted.length - i);
    if ((sorted[i] as number) >= share) return share;
    left -= sorted[i] as number;
  }
  return Number.POSITIVE_INFINITY;
}

function report(name: string, world: World, figures: object, wallMs: number): void {
  const { delivery, dispatcher } = world.functions;
  console.log(`\n${name}\n  ${JSON.stringify(figures)}`);
  printTable(
    ['queue (scaled)', 'sent', 'received', 'requests', 'depth now', 'expired', 'oldest received (s)'],
    Object.entries(world.queues).map(([q, sim]) => [
      q,
      String(sim.counts.sentMessages),
      String(sim.counts.receivedMessages),
      String(
        sim.counts.sendRequests + sim.counts.receiveRequests + sim.counts.deleteRequests + sim.counts.attributeRequests,
      ),
      String(sim.depth),
      String(sim.counts.expired),
      seconds(sim.counts.maxAgeAtReceiveMs).toString(),
    ]),
  );
  printTable(
    ['function (scaled)', 'invocations', 'records/invocation', 'GB-s', 'cold starts', 'time-outs'],
    [delivery, dispatcher].map((f) => [
      f.settings.name,
      String(f.invocations),
      (f.records / Math.max(1, f.invocations)).toFixed(1),
      f.gbSeconds.toFixed(0),
      String(f.coldStarts),
      String(f.timeouts),
    ]),
  );
  console.log(
    `  peak concurrency (scaled by 1/${K}): ${world.mappings.map((m) => `${m.queue.settings.name} ${m.peakConcurrency}/${m.settings.maxConcurrency}`).join(', ')}; ` +
      `account ${world.account.peak}/${world.account.limit}, ${world.account.throttles} throttles; ` +
      `${world.scheduler.calls} CreateSchedule; simulated ${((world.time.now() - START) / 1000).toFixed(0)} s in ` +
      `${(wallMs / 1000).toFixed(0)} s`,
  );
}

async function main(): Promise<void> {
  const result: Record<string, unknown> = {};
  console.log(
    `bench:scale at 1/${K} scale (BENCH_SCALE_FACTOR): figures below are multiplied back` +
      (PREVIOUS ? '; the previous defaults (BENCH_SCALE_DEFAULTS=previous)' : ''),
  );
  if (!ONLY || ONLY === 'steady') {
    const f = await steady('steady: 200 tenants x 5 webhooks, 10,000 deliveries/s offered', 200, 5, TARGET_RATE);
    result.deliveries_per_second = f.deliveriesPerSecond;
    result.first_attempt_p99_seconds = f.firstAttemptP99Seconds;
  }
  if (!ONLY || ONLY === 'one-tenant') {
    const f = await steady('one tenant: 10 webhooks, 10,000 deliveries/s offered', 1, 10, TARGET_RATE);
    result.one_tenant_deliveries_per_second = f.deliveriesPerSecond;
  }
  if (!ONLY || ONLY === 'backlog') result.backlog = await backlog();
  console.log(JSON.stringify(result));
}

await main();
