// bench:cost — what a million webhook deliveries and a thousand emails cost on AWS, every service counted, and
// the busiest DynamoDB partition at 10,000 deliveries/s and 1,000 emails/s. It drives the real use cases and
// adapters on the local runtime over a workload matrix (bench/cost/workloads.ts), records every billable call
// (bench/cost/meter.ts), prices it by AWS's rules (bench/cost/billing.ts, bill.ts) at the prices of
// bench/cost/prices.ts, and prints one JSON object as its last line. docs/benchmarks.md ("Cost") explains it.

import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeBody } from '../lambdas/adapters/email-body-object';
import { PLANS } from '../lambdas/domain/plans';
import { queues, tableNames } from '../lambdas/manifest';
import { DEFAULT_WEBHOOK_CACHE_SECONDS } from '../lambdas/runtime/config';
import { CONTEXT_CAPACITY, DEFAULT_TARGET_UTILIZATION } from '../lib/table-capacity';
import { bill, fixedMonthly, type LineItems, logsIngested, sesCharge } from './cost/bill';
import { gbSeconds } from './cost/billing';
import { type Deployment, readDeployment } from './cost/deployment';
import { emailHtml } from './cost/email-html';
import { startHarness } from './cost/harness';
import { QUEUE_FUNCTIONS } from './cost/meter';
import { metricSeries } from './cost/metric-series';
import {
  busiest,
  type CachedReads,
  cachedReadKeys,
  combine,
  type HotKey,
  PARTITION_LIMITS,
  scaleKeys,
  withoutCachedReads,
} from './cost/partitions';
import { PRICES_READ_ON, REGION } from './cost/prices';
import {
  BAD_DAY_WORKLOAD,
  DELIVERY_WORKLOADS,
  type DeliveryWorkload,
  EMAIL_WORKLOADS,
  type EmailBatching,
  type EmailWorkload,
  label,
  PARTITION_EMAIL_WORKLOAD,
  runDeliveries,
  runEmails,
  type Sample,
} from './cost/workloads';
import { printTable } from './report';

/** Item 3's rates, and the share of them the largest tenant carries in the realistic mix. */
const DELIVERIES_PER_SECOND = 10_000;
const EMAILS_PER_SECOND = 1_000;
const REALISTIC_LARGEST_TENANT_SHARE = 0.1;
/** The most requests a second a plan allows one account (scale): the usage plan and the limiter hold it there. */
const MAX_REQUESTS_PER_SECOND = Math.max(...Object.values(PLANS).map((p) => p.requestsPerSecond));
/**
 * The delivery worker's webhook reads, kept SF_WEBHOOK_CACHE_SECONDS on AWS (1 s, as the bench's runtime keeps
 * them: the prices count the reads one container makes): in the partition model every container of the
 * deliveries and slow lanes reads each webhook at most once per second, whatever the rate.
 */
const WEBHOOK_CACHE: CachedReads = {
  fn: QUEUE_FUNCTIONS.deliveries,
  table: 'webhooks',
  containers: queues.deliveries.maxConcurrency + queues.slowDeliveries.maxConcurrency,
  ttlSeconds: DEFAULT_WEBHOOK_CACHE_SECONDS,
};

/**
 * The provisioned figures' deployment: the default stage with every table (and so every GSI) provisioned at the
 * default target utilization, as a stage at steady scale would run its hot tables. The bounds do not change what a
 * unit costs (only the idle minimum, a fixed cost left out here), so any valid ones do.
 */
const EVERY_TABLE_PROVISIONED = {
  [CONTEXT_CAPACITY]: {
    prod: {
      mode: 'provisioned',
      targetUtilization: DEFAULT_TARGET_UTILIZATION,
      tables: Object.fromEntries(
        tableNames.map((t) => [t, { minRead: 1, maxRead: 40_000, minWrite: 1, maxWrite: 40_000 }]),
      ),
    },
  },
};

const usd = (n: number, digits = 3) => n.toFixed(digits);
const round = (n: number, digits = 4) => Number(n.toFixed(digits));
const sum = (items: LineItems) => Object.values(items).reduce((a, b) => a + b, 0);
const scale = (items: LineItems, factor: number): LineItems =>
  Object.fromEntries(Object.entries(items).map(([k, v]) => [k, v * factor]));

/** Line items folded to services (the `dynamodb_wru deliveries byDueShard` detail stays in the per-sample print). */
function byService(items: LineItems): LineItems {
  const out: LineItems = {};
  for (const [k, v] of Object.entries(items)) {
    const service = k.split(' ')[0] as string;
    out[service] = (out[service] ?? 0) + v;
  }
  return out;
}

async function main(): Promise<void> {
  const started = Date.now();
  const before = BEFORE ? figuresAt(BEFORE) : null;
  const deployment = readDeployment();
  // BENCH_COST_ONLY=transformations (issue 32): the sandbox's time per attempt, priced; needs no runtime.
  // Imported only here: BENCH_BEFORE runs this bench on an older release's lambdas/, which may have no sandbox.
  if (process.env.BENCH_COST_ONLY === 'transformations') {
    return (await import('./cost/transformations')).reportTransformations(deployment);
  }
  const provisioned = readDeployment(EVERY_TABLE_PROVISIONED);
  const h = await startHarness(deployment);
  const { runtime, receiver } = h;
  const samples: Sample[] = [];
  try {
    for (const w of ONLY_FILTERS
      ? FILTER_SAMPLES
      : ONLY_PARTITIONS
        ? PARTITION_SAMPLES
        : ONLY_DELIVERIES
          ? DELIVERY_SAMPLES
          : [...DELIVERY_WORKLOADS, BAD_DAY_WORKLOAD, ...EMAIL_WORKLOADS, PARTITION_EMAIL_WORKLOAD]) {
      const sample = w.kind === 'deliveries' ? await runDeliveries(h, w) : await runEmails(h, w);
      console.log(`measured ${label(w)}: ${describe(sample)}`);
      samples.push(sample);
    }
  } finally {
    receiver.stop();
    await runtime.stop();
  }
  console.log(`\nbench:cost measured for ${((Date.now() - started) / 1000).toFixed(0)} s`);
  for (const kb of [2, 30, 200] as const) {
    const stored = encodeBody({ html: emailHtml(kb), headers: {} }, 0).length;
    console.log(
      `${kb} KB body: ${stored.toLocaleString('en')} bytes stored (gzip, ${((kb * 1024) / stored).toFixed(1)}x)`,
    );
  }
  if (ONLY_FILTERS) {
    reportFilters(samples, deployment);
    return;
  }
  if (ONLY_DELIVERIES) {
    reportDeliveries(samples, deployment, before);
    return;
  }
  if (ONLY_PARTITIONS) {
    const [deliverySample, emailSample] = samples as [Sample, Sample];
    const { maxW, maxR } = reportPartitions(deliverySample, emailSample);
    console.log(
      JSON.stringify({ max_partition_wcu_per_s: Math.round(maxW), max_partition_rcu_per_s: Math.round(maxR) }),
    );
    return;
  }
  report(samples, deployment, provisioned);
}

/**
 * BENCH_COST_ONLY=partitions: only the two samples item 3's simulation reads (about a minute): the partition
 * tables and a JSON line of the two maxima, no prices.
 */
const ONLY_PARTITIONS = process.env.BENCH_COST_ONLY === 'partitions';
const PARTITION_SAMPLES: readonly (DeliveryWorkload | EmailWorkload)[] = [
  { kind: 'deliveries', webhooks: 5, endpoint: 'fast', batching: 'full' },
  { kind: 'emails', sizeKb: 30, recipients: 10, webhooks: 0, batching: 'one' },
];

/**
 * BENCH_COST_ONLY=deliveries: the perfect day's two headline samples (M = 5, fast endpoints, full batches and five
 * a batch) and the bad day, in about 3 minutes: their table and a JSON line of their figures (`bad_day`,
 * `usd_per_million_deliveries`, `fixed_usd_per_month`). BENCH_BEFORE=<git ref> runs that first against the
 * ref's code (a temporary git worktree sharing node_modules, with this bench's files copied in), then against
 * this checkout's, and prints both: a fix's before and after measured on the same machine in one run.
 */
const BEFORE = process.env.BENCH_BEFORE || undefined;
const ONLY_DELIVERIES = process.env.BENCH_COST_ONLY === 'deliveries' || BEFORE !== undefined;
const DELIVERY_SAMPLES: readonly DeliveryWorkload[] = [
  { kind: 'deliveries', webhooks: 5, endpoint: 'fast', batching: 'full' },
  { kind: 'deliveries', webhooks: 5, endpoint: 'fast', batching: 'five' },
  BAD_DAY_WORKLOAD,
];

/**
 * BENCH_COST_ONLY=filters (issue 32): the perfect day's full-batch sample (M = 5, fast endpoints) without and with
 * a sixth webhook whose payload filter keeps every event back: the difference is what filtering costs (the events
 * consumer's counter writes, one per webhook per batch, and its time), per million events filtered.
 */
const ONLY_FILTERS = process.env.BENCH_COST_ONLY === 'filters';
const FILTER_SAMPLES: readonly DeliveryWorkload[] = [
  { kind: 'deliveries', webhooks: 5, endpoint: 'fast', batching: 'full' },
  { kind: 'deliveries', webhooks: 5, endpoint: 'fast', batching: 'full', filtered: true },
];

function reportFilters(samples: readonly Sample[], deployment: Deployment): void {
  const [plain, filtered] = samples as [Sample, Sample];
  // Events published: every delivery of the M = 5 webhooks is one event's; the filtered webhook gets none.
  const events = (s: Sample) => s.deliveries / (s.workload as DeliveryWorkload).webhooks;
  const perMillionEvents = (s: Sample) => sum(bill(s, deployment)) * (1e6 / events(s));
  // The filtered-event counters' writes (filtered#… items of the counters table), units as billed.
  const writes = (s: Sample) =>
    s.usage.dynamo.writes.filter((w) => w.key.includes('filtered#')).reduce((n, w) => n + w.units, 0);
  console.log(`\nUSD per million events (${REGION} list prices read ${PRICES_READ_ON})`);
  printTable(
    ['workload', 'events', 'deliveries', 'USD per million events'],
    samples.map((s) => [label(s.workload), String(events(s)), String(s.deliveries), usd(perMillionEvents(s))]),
  );
  const figures = {
    filtered_usd_per_million_events: round(perMillionEvents(filtered) - perMillionEvents(plain)),
    counter_write_units: writes(filtered),
    counter_write_units_per_event: round(writes(filtered) / events(filtered), 4),
    deliveries_to_filtered_webhook: filtered.deliveries - plain.deliveries,
  };
  console.log(JSON.stringify(figures));
}

/** The figures of the deliveries-only run (its JSON line). */
interface DeliveryFigures {
  usd_per_million_deliveries: { full_batches: number; five_per_batch: number };
  bad_day: BadDayFigures;
  bad_day_detail: Record<string, number>;
  fixed_usd_per_month: number;
}

/** This script's deliveries-only figures at `ref`'s code. */
function figuresAt(ref: string): DeliveryFigures {
  const root = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim();
  const dir = mkdtempSync(join(tmpdir(), 'bench-cost-'));
  try {
    execFileSync('git', ['worktree', 'add', '--detach', dir, ref], { cwd: root, stdio: 'ignore' });
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    // This bench, as it is here, measures the ref's lambdas/ and lib/.
    for (const path of ['bench/cost.ts', 'bench/cost', 'bench/report.ts']) {
      cpSync(join(root, path), join(dir, path), { recursive: true });
    }
    console.log(`measuring ${ref} first (${dir})`);
    const out = execFileSync('node', ['--import', 'tsx', 'bench/cost.ts'], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, BENCH_BEFORE: '', BENCH_COST_ONLY: 'deliveries' },
      maxBuffer: 64 * 1024 * 1024,
    });
    return JSON.parse(out.trim().split('\n').at(-1) as string) as DeliveryFigures;
  } finally {
    execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: root, stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface BadDayFigures {
  usd_per_million_deliveries: number;
  sqs_requests_per_delivery: number;
  lambda_invocations_per_delivery: number;
  lambda_gb_seconds_per_delivery: number;
  scheduler_calls_per_delivery: number;
}

/** Issue 29's targets on demand. */
const TARGETS = {
  badDayUsd: 3,
  badDaySqs: 0.6,
  badDayInvocations: 0.15,
  fullBatchesUsd: 2,
  fivePerBatchUsd: 2.5,
} as const;

/** The bad day's figures per first-attempt delivery, and what explains them (`detail`). */
function badDay(s: Sample, deployment: Deployment): { figures: BadDayFigures; detail: Record<string, number> } {
  const per = (n: number) => round(n / s.deliveries, 5);
  const sqs = [...s.usage.sqs.values()].reduce((n, q) => n + q.billed, 0);
  const gbs = s.usage.invocations.reduce((n, inv) => {
    const fn = deployment.functions.get(inv.fn);
    return n + gbSeconds(fn?.memoryMb ?? 512, inv.ms);
  }, 0);
  const deliveryInvocations = s.usage.invocations.filter((inv) => inv.fn === QUEUE_FUNCTIONS.deliveries);
  return {
    figures: {
      usd_per_million_deliveries: round(sum(bill(s, deployment)) * (1e6 / s.deliveries)),
      sqs_requests_per_delivery: per(sqs),
      lambda_invocations_per_delivery: per(s.usage.invocations.length),
      lambda_gb_seconds_per_delivery: per(gbs),
      scheduler_calls_per_delivery: per(s.usage.scheduler),
    },
    detail: {
      deliveries: s.deliveries,
      attempts_per_delivery: per(s.attempts),
      connections_per_attempt: round(s.connections / Math.max(1, s.attempts), 4),
      slow_lane_messages_per_delivery: per(s.usage.sqs.get('slowDeliveries')?.messages ?? 0),
      deliveries_queue_messages_per_delivery: per(s.usage.sqs.get('deliveries')?.messages ?? 0),
      delayed_messages_per_delivery: per(s.usage.delayedMessages),
      delivery_invocation_records_mean: round(
        deliveryInvocations.reduce((n, inv) => n + inv.records, 0) / Math.max(1, deliveryInvocations.length),
        2,
      ),
      delivery_invocation_ms_mean: round(
        deliveryInvocations.reduce((n, inv) => n + inv.ms, 0) / Math.max(1, deliveryInvocations.length),
        1,
      ),
    },
  };
}

/** BENCH_COST_ONLY=deliveries: the three delivery samples' table and figures, beside `before`'s if measured. */
function reportDeliveries(samples: readonly Sample[], deployment: Deployment, before: DeliveryFigures | null): void {
  const [full, five, bad] = samples as [Sample, Sample, Sample];
  const perMillion = (s: Sample) => sum(bill(s, deployment)) * (1e6 / s.deliveries);
  console.log(`\nUSD per million first-attempt deliveries (${REGION} list prices read ${PRICES_READ_ON})`);
  const services = [...new Set(samples.flatMap((s) => Object.keys(byService(bill(s, deployment)))))];
  printTable(
    ['workload', ...services, 'total'],
    samples.map((s) => {
      const folded = byService(scale(bill(s, deployment), 1e6 / s.deliveries));
      return [label(s.workload), ...services.map((k) => usd(folded[k] ?? 0)), usd(perMillion(s))];
    }),
  );
  const { figures, detail } = badDay(bad, deployment);
  const fixed = sum(fixedMonthly(deployment, metricSeries().length));
  const now: DeliveryFigures = {
    usd_per_million_deliveries: { full_batches: round(perMillion(full)), five_per_batch: round(perMillion(five)) },
    bad_day: figures,
    bad_day_detail: detail,
    fixed_usd_per_month: round(fixed, 2),
  };
  const rows = (f: DeliveryFigures) => ({
    'perfect day, full batches (USD/M)': f.usd_per_million_deliveries.full_batches,
    'perfect day, five per batch (USD/M)': f.usd_per_million_deliveries.five_per_batch,
    ...Object.fromEntries(Object.entries(f.bad_day).map(([k, v]) => [`bad day ${k}`, v])),
    ...Object.fromEntries(Object.entries(f.bad_day_detail).map(([k, v]) => [`  ${k}`, v])),
    'fixed USD per month': f.fixed_usd_per_month,
  });
  console.log();
  const mine = rows(now);
  const theirs = before ? rows(before) : null;
  printTable(
    ['figure', ...(theirs ? [`before (${BEFORE})`] : []), 'this checkout'],
    Object.entries(mine).map(([k, v]) => [
      k,
      ...(theirs ? [String(theirs[k as keyof typeof theirs] ?? '')] : []),
      String(v),
    ]),
  );
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  console.log(
    `\nTargets: bad day <= $${TARGETS.badDayUsd} (${met(figures.usd_per_million_deliveries <= TARGETS.badDayUsd)}), ` +
      `<= ${TARGETS.badDaySqs} SQS requests (${met(figures.sqs_requests_per_delivery <= TARGETS.badDaySqs)}), ` +
      `<= ${TARGETS.badDayInvocations} invocations (${met(figures.lambda_invocations_per_delivery <= TARGETS.badDayInvocations)}) per delivery; ` +
      `perfect day <= $${TARGETS.fullBatchesUsd} / $${TARGETS.fivePerBatchUsd} ` +
      `(${met(now.usd_per_million_deliveries.full_batches <= TARGETS.fullBatchesUsd && now.usd_per_million_deliveries.five_per_batch <= TARGETS.fivePerBatchUsd)}).`,
  );
  console.log(JSON.stringify(before ? { ...now, before } : now));
}

/**
 * The emails' SQS batching (sends and events queues) the JSON's `usd_per_thousand_emails` reports: the matrix's
 * harder point, five per batch (item 2: "SQS batch full / five jobs"). Every batching, one email a batch
 * included, is in `usd_per_thousand_emails_by_batching`.
 */
const JSON_EMAIL_BATCHING: EmailBatching = 'five';

function describe(s: Sample): string {
  const parts = [`${s.seconds.toFixed(1)} s`];
  if (s.emails) parts.push(`${s.emails} emails`, `${s.events} events`);
  parts.push(
    `${s.deliveries} deliveries`,
    `${s.usage.invocations.length} invocations`,
    `${s.usage.logs.length} log lines`,
  );
  return parts.join(', ');
}

function report(samples: readonly Sample[], deployment: Deployment, provisioned: Deployment): void {
  const metrics = new Set(samples.flatMap((s) => [...s.usage.metrics]));
  const series = metricSeries();
  const find = <W extends DeliveryWorkload | EmailWorkload>(match: (w: W) => boolean) =>
    samples.find((s) => match(s.workload as W)) as Sample;

  // Per million first-attempt deliveries.
  console.log(
    `\nUSD per million first-attempt deliveries (${REGION} list prices read ${PRICES_READ_ON}; durations measured on this machine)`,
  );
  const perDelivery = new Map<DeliveryWorkload, LineItems>();
  for (const s of samples.filter((x) => x.workload.kind === 'deliveries')) {
    perDelivery.set(s.workload as DeliveryWorkload, scale(bill(s, deployment), 1e6 / s.deliveries));
  }
  const services = [...new Set([...perDelivery.values()].flatMap((items) => Object.keys(byService(items))))];
  printTable(
    ['workload', ...services, 'total'],
    [...perDelivery].map(([w, items]) => {
      const folded = byService(items);
      return [label(w), ...services.map((k) => usd(folded[k] ?? 0)), usd(sum(items))];
    }),
  );

  // Per thousand emails (their own cost; SES's charge beside it).
  console.log("\nUSD per thousand emails: Sendflow's own AWS cost (no webhooks), and SES's charge beside it");
  const perEmail = new Map<EmailWorkload, LineItems>();
  for (const s of samples.filter((x) => x.workload.kind === 'emails')) {
    perEmail.set(s.workload as EmailWorkload, scale(bill(s, deployment), 1e3 / s.emails));
  }
  const emailServices = [...new Set([...perEmail.values()].flatMap((items) => Object.keys(byService(items))))];
  printTable(
    ['workload', ...emailServices, 'total', 'SES', 'own/SES'],
    [...perEmail].map(([w, items]) => {
      const folded = byService(items);
      const s = find<EmailWorkload>((x) => x === w);
      const ses = sesCharge(s) * (1e3 / s.emails);
      return [
        label(w),
        ...emailServices.map((k) => usd(folded[k] ?? 0, 4)),
        usd(sum(items), 4),
        usd(ses),
        `${((100 * sum(items)) / ses).toFixed(1)}%`,
      ];
    }),
  );

  // The full matrix, composed: an email's own cost plus its deliveries (events × webhooks) at a delivery workload's cost.
  console.log(
    '\nThe matrix, composed: USD per thousand emails with their webhook deliveries (email own cost + events x M deliveries)',
  );
  const rows: string[][] = [];
  for (const [ew, emailItems] of perEmail) {
    if (ew.webhooks || ew.batching !== JSON_EMAIL_BATCHING) continue;
    const es = find<EmailWorkload>((x) => x === ew);
    const eventsPerEmail = es.events / es.emails;
    for (const [dw, deliveryItems] of perDelivery) {
      const deliveries = eventsPerEmail * dw.webhooks;
      rows.push([
        label(ew),
        label(dw),
        eventsPerEmail.toFixed(1),
        usd(sum(emailItems) + (deliveries * 1e3 * sum(deliveryItems)) / 1e6),
      ]);
    }
  }
  printTable(['email', 'deliveries', 'events/email', 'USD per 1,000'], rows, 2);
  const composite = find<EmailWorkload>((w) => w === PARTITION_EMAIL_WORKLOAD);
  console.log(
    `Check: ${label(PARTITION_EMAIL_WORKLOAD)} (all email events) measured in one run: ${usd(
      sum(bill(composite, deployment)) * (1e3 / composite.emails),
    )} USD per 1,000 emails (${composite.deliveries / composite.emails} deliveries per email)`,
  );

  const utilization = reportProvisioned(samples, deployment, provisioned);

  const fixed = fixedMonthly(deployment, series.length);
  console.log(`\nFixed monthly costs (not in the figures above): ${usd(sum(fixed), 2)} USD`);
  printTable(
    ['item', 'USD/month'],
    Object.entries(fixed).map(([k, v]) => [k, usd(v, 2)]),
  );
  console.log(
    `custom metrics: ${series.length} series the routes, statuses and error classes can produce (priced above, an ` +
      `upper bound: a series costs only the hours it gets data); ${metrics.size} of them had data in this run:`,
  );
  for (const m of [...metrics].sort()) console.log(`  ${m}`);
  const { alarms } = deployment;
  console.log(
    `alarms: ${alarms.count} (${alarms.metrics} metrics at standard resolution, ${alarms.highResolutionMetrics} high, ` +
      `${alarms.composite} composite); ${deployment.dashboards} dashboard(s); ${deployment.kmsKeys} KMS key(s); ` +
      `${deployment.eventSourceMappings.length} SQS event source mappings polling when idle`,
  );

  const badSample = find<DeliveryWorkload>((w) => w.endpoint === 'bad-day');
  const { figures: badDayFigures, detail: badDayDetail } = badDay(badSample, deployment);
  console.log(`\nThe bad day (${label(badSample.workload)}): ${JSON.stringify(badDayFigures)}`);
  console.log(`  ${JSON.stringify(badDayDetail)}`);

  // Item 3: the busiest partitions.
  const deliverySample = find<DeliveryWorkload>(
    (w) => w.webhooks === 5 && w.endpoint === 'fast' && w.batching === 'full',
  );
  const emailSample = find<EmailWorkload>(
    (w) => w.sizeKb === 30 && w.recipients === 10 && w.webhooks === 0 && w.batching === 'one',
  );
  const { realistic, maxW, maxR } = reportPartitions(deliverySample, emailSample);

  // The last line: one JSON object.
  const full = perDelivery.get(deliverySample.workload as DeliveryWorkload) as LineItems;
  const five = perDelivery.get(
    find<DeliveryWorkload>((w) => w.webhooks === 5 && w.endpoint === 'fast' && w.batching === 'five')
      .workload as DeliveryWorkload,
  ) as LineItems;
  const emailKey = (sizeKb: number, recipients: number, batching = JSON_EMAIL_BATCHING) =>
    find<EmailWorkload>(
      (w) => w.sizeKb === sizeKb && w.recipients === recipients && w.webhooks === 0 && w.batching === batching,
    );
  const keys = {
    '2kb_1rcpt': [2, 1],
    '30kb_1rcpt': [30, 1],
    '30kb_10rcpt': [30, 10],
    '200kb_50rcpt': [200, 50],
  } as const;
  const perThousand = (s: Sample, d = deployment) => sum(bill(s, d)) * (1e3 / s.emails);
  const perMillion = (s: Sample, d: Deployment) => sum(bill(s, d)) * (1e6 / s.deliveries);
  const fiveSample = find<DeliveryWorkload>((w) => w.webhooks === 5 && w.endpoint === 'fast' && w.batching === 'five');
  const result = {
    usd_per_million_deliveries: { full_batches: round(sum(full)), five_per_batch: round(sum(five)) },
    usd_per_thousand_emails: Object.fromEntries(
      Object.entries(keys).map(([k, [size, r]]) => [k, round(perThousand(emailKey(size, r)))]),
    ),
    email_batching: JSON_EMAIL_BATCHING,
    usd_per_thousand_emails_by_batching: Object.fromEntries(
      (['one', 'five', 'full'] as const).map((batching) => [
        batching,
        Object.fromEntries(
          Object.entries(keys).map(([k, [size, r]]) => [k, round(perThousand(emailKey(size, r, batching)))]),
        ),
      ]),
    ),
    ses_usd_per_thousand_emails: Object.fromEntries(
      Object.entries(keys).map(([k, [size, r]]) => {
        const s = emailKey(size, r);
        return [k, round(sesCharge(s) * (1e3 / s.emails))];
      }),
    ),
    bad_day: badDayFigures,
    fixed_usd_per_month: round(sum(fixed), 2),
    max_partition_wcu_per_s: Math.round(maxW),
    max_partition_rcu_per_s: Math.round(maxR),
    line_items: {
      bad_day: roundAll(byService(scale(bill(badSample, deployment), 1e6 / badSample.deliveries))),
      bad_day_detail: badDayDetail,
      per_million_deliveries_full_batches: roundAll(byService(full)),
      per_million_deliveries_five_per_batch: roundAll(byService(five)),
      ...Object.fromEntries(
        Object.entries(keys).map(([k, [size, r]]) => {
          const s = emailKey(size, r);
          return [`per_thousand_emails_${k}`, roundAll(byService(scale(bill(s, deployment), 1e3 / s.emails)))];
        }),
      ),
      fixed_per_month: roundAll(fixed),
      partitions: {
        worst_case: { wcu_per_s: Math.round(maxW), rcu_per_s: Math.round(maxR) },
        realistic_mix: {
          wcu_per_s: Math.round(Math.max(...realistic.map((k) => k.wcu))),
          rcu_per_s: Math.round(Math.max(...realistic.map((k) => k.rcu))),
        },
      },
      logs_bytes_per_delivery: Math.round(logsIngested(deliverySample.usage, deployment) / deliverySample.deliveries),
      emf_metrics: metrics.size,
      metric_series: series.length,
    },
    // The same samples with every table and GSI in provisioned mode at the auto scaling target (reportProvisioned).
    provisioned: {
      usd_per_million_deliveries: {
        full_batches: round(perMillion(deliverySample, provisioned)),
        five_per_batch: round(perMillion(fiveSample, provisioned)),
      },
      usd_per_thousand_emails: Object.fromEntries(
        Object.entries(keys).map(([k, [size, r]]) => [k, round(perThousand(emailKey(size, r), provisioned))]),
      ),
      utilization,
    },
  };
  console.log(JSON.stringify(result));
}

/**
 * Every sample priced again with the tables and GSIs in provisioned mode (capacity units at the hourly rate over
 * the target utilization) beside its on-demand price; returns the utilization (one for every table here).
 */
function reportProvisioned(samples: readonly Sample[], deployment: Deployment, provisioned: Deployment): number {
  const utilizations = new Set([...(provisioned.provisioned?.values() ?? [])].flatMap((u) => [u.read, u.write]));
  if (utilizations.size !== 1) throw new Error(`expected one target utilization, got ${[...utilizations].join(', ')}`);
  const [utilization] = [...utilizations] as [number];
  const dynamo = (items: LineItems) =>
    sum(Object.fromEntries(Object.entries(items).filter(([k]) => /^dynamodb_(wru|rru|wcu|rcu) /.test(k))));
  console.log(
    `\nDynamoDB capacity on demand vs provisioned (every table and GSI, auto scaling at ${utilization * 100}% ` +
      'utilization, steady load; the idle minimum left out): USD per million deliveries, per thousand emails',
  );
  printTable(
    ['workload', 'DDB on demand', 'DDB provisioned', 'total on demand', 'total provisioned'],
    samples.map((s) => {
      const per = s.workload.kind === 'deliveries' ? 1e6 / s.deliveries : 1e3 / s.emails;
      const [a, b] = [bill(s, deployment), bill(s, provisioned)];
      return [label(s.workload), usd(dynamo(a) * per), usd(dynamo(b) * per), usd(sum(a) * per), usd(sum(b) * per)];
    }),
  );
  return utilization;
}

/** Item 3: the busiest partition keys of the two samples scaled to the target rates, printed; the worst case's maxima. */
function reportPartitions(deliverySample: Sample, emailSample: Sample) {
  const { keys: deliveryKeys, readsByFunction } = deliverySample.usage.dynamo;
  const partitions = (share: number) =>
    combine([
      ...scaleKeys(
        withoutCachedReads(deliveryKeys, readsByFunction, WEBHOOK_CACHE),
        deliverySample.deliveries,
        DELIVERIES_PER_SECOND,
        share,
      ),
      ...cachedReadKeys(readsByFunction, WEBHOOK_CACHE),
      // The sample sends one email a request; a tenant past its plan's requests sends them in batches.
      ...scaleKeys(emailSample.usage.dynamo.keys, emailSample.emails, EMAILS_PER_SECOND, share, {
        rate: Math.min(EMAILS_PER_SECOND * share, MAX_REQUESTS_PER_SECOND),
        inSample: emailSample.apiRequests,
      }),
    ]);
  const worst = partitions(1);
  const realistic = partitions(REALISTIC_LARGEST_TENANT_SHARE);
  for (const [name, keys] of [
    ['one tenant sends it all (worst case)', worst],
    [`largest tenant ${REALISTIC_LARGEST_TENANT_SHARE * 100}% of the traffic (realistic mix)`, realistic],
  ] as const) {
    console.log(
      `\nBusiest partition key per table and index at ${DELIVERIES_PER_SECOND.toLocaleString('en')} deliveries/s (M=5) + ` +
        `${EMAILS_PER_SECOND.toLocaleString('en')} emails/s (30 KB, 10 recipients): ${name}`,
    );
    const { byWcu, byRcu } = busiest(keys);
    const row = (k: HotKey) => [k.where, k.scope, k.key.slice(0, 40), k.wcu.toFixed(0), k.rcu.toFixed(0)];
    printTable(['table/index', 'scope', 'key (busiest by WCU)', 'WCU/s', 'RCU/s'], byWcu.map(row), 3);
    const topR = byRcu[0];
    if (topR) console.log(`busiest by RCU: ${topR.where} ${topR.key.slice(0, 40)} ${topR.rcu.toFixed(0)} RCU/s`);
  }
  const maxW = Math.max(...worst.map((k) => k.wcu));
  const maxR = Math.max(...worst.map((k) => k.rcu));
  console.log(
    `\nTarget: every key under half of DynamoDB's per-partition limits (${PARTITION_LIMITS.wcu / 2} WCU/s, ` +
      `${PARTITION_LIMITS.rcu / 2} RCU/s). Worst case: ${maxW.toFixed(0)} WCU/s, ${maxR.toFixed(0)} RCU/s: ` +
      `${maxW <= PARTITION_LIMITS.wcu / 2 && maxR <= PARTITION_LIMITS.rcu / 2 ? 'met' : 'NOT met'}.`,
  );

  return { realistic, maxW, maxR };
}

function roundAll(items: LineItems): LineItems {
  return Object.fromEntries(Object.entries(items).map(([k, v]) => [k, round(v, 5)]));
}

await main();
