// `npm run bench:delivery`: N events fanned out to M webhooks through the local runtime's pipeline (events
// queue → dispatcher → deliveries queue → delivery worker → a loopback receiver in a child process), and, in
// the same run, the ceiling: a bare loop of the same signed POSTs through the same sender, one at a time, and
// the same POSTs with as many in flight as the delivery worker runs. Prints deliveries/s, accept→hit latency, and the AWS requests each delivery costs (DynamoDB
// calls and request units, SQS requests, Scheduler invocations), priced per million deliveries.
// docs/benchmarks.md has the method and the figures. Env: BENCH_EVENTS (default 1000), BENCH_WEBHOOKS
// (default 5), BENCH_DATA_DIR (default: a temporary directory on disk), BENCH_LATENCY_ROUNDS (default 20 rounds of one batch of 10 events), BENCH_COST_EVENTS (default
// 200: the burst in which request units are measured), BENCH_TRACING (default `off`: untraced events, as before;
// `carried`: every event carries a trace context and tracing is off, so it passes through to the traceparent;
// `on`: the same with spans exported over OTLP/HTTP to a sink on loopback in this process: docs/webhooks.md#traces).

import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { retryTransport } from '../lambdas/adapters/aws/retry-scheduler';
import { type CallCounts, type CallSnapshot, countCalls } from '../lambdas/adapters/dynamodb/call-counter';
import { deliveryPartitionsOf } from '../lambdas/adapters/dynamodb/deliveries';
import { HttpWebhookSender } from '../lambdas/adapters/http/webhook-sender';
import type { InProcessQueue } from '../lambdas/adapters/in-process/queue';
import { noUsagePlans } from '../lambdas/adapters/local/usage-plans';
import { createAccount, createAccountKey } from '../lambdas/app/accounts';
import { createWebhook } from '../lambdas/app/webhooks/manage-webhooks';
import type { Webhook } from '../lambdas/app/webhooks/ports';
import type { SendflowEvent } from '../lambdas/domain/events';
import { timeOrderedId } from '../lambdas/domain/ids';
import { compactTrace } from '../lambdas/domain/trace-context';
import { attemptHeaders, renderPayload } from '../lambdas/domain/webhooks/render';
import { standardWebhookSignature } from '../lambdas/domain/webhooks/signature';
import type { Config } from '../lambdas/runtime/config';
import { localDynamoClient } from '../lambdas/runtime/local/dynamo';
import {
  LOCAL_BATCH_SIZE,
  LOCAL_QUEUE_CONCURRENCY,
  type LocalRuntime,
  startLocalRuntime,
} from '../lambdas/runtime/local/runtime';
import type { DeferredTracing } from '../lambdas/runtime/tracing';
import { PRICES as UNIT_PRICES } from './cost/prices';
import { benchConfig, positiveInt, printTable } from './report';

const EVENTS = positiveInt('BENCH_EVENTS', 1000);
/** BENCH_DATA_DIR, or a fresh temporary directory removed at the end; `:memory:` measures without disk. */
const DATA_DIR = process.env.BENCH_DATA_DIR || mkdtempSync(join(tmpdir(), 'sendflow-bench-'));
const WEBHOOKS = positiveInt('BENCH_WEBHOOKS', 5);
const LATENCY_ROUNDS = positiveInt('BENCH_LATENCY_ROUNDS', 20);
/** Events of the cost phase: request units are measured there (per-delivery counts do not depend on N). */
const COST_EVENTS = positiveInt('BENCH_COST_EVENTS', 200);
const TRACING_MODES = ['off', 'carried', 'on'] as const;
const TRACING = (process.env.BENCH_TRACING || 'off') as (typeof TRACING_MODES)[number];
if (!TRACING_MODES.includes(TRACING)) throw new Error(`BENCH_TRACING must be one of ${TRACING_MODES.join(', ')}`);
/** Events per publish call: one SendMessageBatch, as SQS takes them. */
const PUBLISH_BATCH = 10;
const WARMUP_EVENTS = 100;
/** The local deliveries queue hands out this many batches at once, each of the manifest's size. */
const WORKER_BATCHES = LOCAL_QUEUE_CONCURRENCY.deliveries;
const WORKER_CONCURRENCY = WORKER_BATCHES * LOCAL_BATCH_SIZE;
/** A phase that has not finished in this time has lost deliveries: stop and say so. */
const PHASE_TIMEOUT_MS = 180_000;
const SQS_BILLING_CHUNK = 64 * 1024;

/** USD per million units, from the one price list (bench/cost/prices.ts, where bench:cost prices every service). */
const PRICES = {
  dynamoWriteUnit: UNIT_PRICES.dynamodb.writeRequestUnit * 1e6,
  dynamoReadUnit: UNIT_PRICES.dynamodb.readRequestUnit * 1e6,
  sqsRequest: UNIT_PRICES.sqs.request * 1e6,
  schedulerInvocation: UNIT_PRICES.scheduler.invocation * 1e6,
} as const;

/** Operations that take ReturnConsumedCapacity. */
const CAPACITY_OPERATIONS = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
  'TransactGetItems',
  'TransactWriteItems',
]);
const READ_OPERATIONS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);

/** Wall-clock ms with sub-ms resolution, comparable across the two processes of this machine. */
const now = () => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------------------------------------------------
// The receiver (child process): answers 200, checks every signature, records when each request arrived.

type ToReceiver =
  | { type: 'arm'; secrets: readonly string[]; expected: number }
  | { type: 'expect'; expected: number }
  | { type: 'collect' };
type FromReceiver =
  | { type: 'listening'; port: number }
  | { type: 'armed' }
  | { type: 'done' }
  | { type: 'hits'; hits: Hit[]; invalid: number };
/** [webhook index, webhook-id header (the event id), arrival time]. */
type Hit = [number, string, number];

function receiver(): void {
  const send = (message: FromReceiver) => process.send?.(message);
  let secrets: readonly string[] = [];
  let expected = Number.POSITIVE_INFINITY;
  let hits: Hit[] = [];
  let invalid = 0;
  const check = () => {
    if (hits.length >= expected) {
      expected = Number.POSITIVE_INFINITY;
      send({ type: 'done' });
    }
  };
  const server = createServer((req, res) => {
    const at = now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const hook = Number(req.url?.split('/').at(-1));
      const id = String(req.headers['webhook-id'] ?? '');
      const body = Buffer.concat(chunks).toString('utf8');
      const secret = secrets[hook];
      const signature = standardWebhookSignature(secret ?? '', id, Number(req.headers['webhook-timestamp']), body);
      if (!secret || req.headers['webhook-signature'] !== signature) invalid++;
      hits.push([hook, id, at]);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      check();
    });
  });
  server.keepAliveTimeout = 10_000;
  process.on('message', (message: ToReceiver) => {
    if (message.type === 'arm') {
      secrets = message.secrets;
      hits = [];
      invalid = 0;
      expected = message.expected;
      send({ type: 'armed' });
    } else if (message.type === 'expect') {
      expected = message.expected;
      check();
    } else {
      send({ type: 'hits', hits, invalid });
    }
  });
  process.on('disconnect', () => process.exit(0));
  server.listen(0, '127.0.0.1', () => send({ type: 'listening', port: (server.address() as AddressInfo).port }));
}

class Receiver {
  private waiters: { type: FromReceiver['type']; resolve: (m: FromReceiver) => void }[] = [];

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {
    child.on('message', (message: FromReceiver) => {
      const i = this.waiters.findIndex((w) => w.type === message.type);
      if (i >= 0) this.waiters.splice(i, 1)[0]?.resolve(message);
    });
  }

  /** The same file in receiver mode; the child inherits `--import tsx` from this process. */
  static async start(): Promise<Receiver> {
    const child = fork(fileURLToPath(import.meta.url), ['--receiver'], { stdio: 'inherit' });
    const port = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`receiver exited with ${code}`)));
      child.once('message', (m: FromReceiver) => (m.type === 'listening' ? resolve(m.port) : reject(m)));
    });
    return new Receiver(child, port);
  }

  url(hook: number): string {
    return `http://127.0.0.1:${this.port}/hooks/${hook}`;
  }

  async arm(secrets: readonly string[], expected: number): Promise<void> {
    await this.request({ type: 'arm', secrets, expected }, 'armed');
  }

  /** Resolves once `expected` requests arrived since the last arm. */
  until(expected: number, what: string, progress: () => string): Promise<void> {
    const done = this.next('done').then(() => undefined);
    this.child.send({ type: 'expect', expected } satisfies ToReceiver);
    return withTimeout(done, PHASE_TIMEOUT_MS, () => `${what}: not all deliveries arrived (${progress()})`);
  }

  async collect(): Promise<{ hits: Hit[]; invalid: number }> {
    const message = await this.request({ type: 'collect' }, 'hits');
    if (message.type !== 'hits') throw new Error('unexpected answer from the receiver');
    return message;
  }

  stop(): void {
    this.child.disconnect();
  }

  private request(message: ToReceiver, answer: FromReceiver['type']): Promise<FromReceiver> {
    const reply = this.next(answer);
    this.child.send(message);
    return reply;
  }

  private next(type: FromReceiver['type']): Promise<FromReceiver> {
    return new Promise((resolve) => this.waiters.push({ type, resolve }));
  }
}

// ---------------------------------------------------------------------------------------------------------
// Request units. Table units come from DynamoDB's own accounting: a middleware asks every call for
// ReturnConsumedCapacity TOTAL, and dynalite answers with the table's units by AWS's rules (reads in 4 KB,
// halved when eventually consistent, a Query over the summed size of the items it read; writes in 1 KB of the
// larger of the old and new item). dynalite leaves index writes out, so those are counted at the emulator's
// index maintenance, in its own thread, by dynalite-index-meter.mjs, and priced by the GSI rules.

/** The module startLocalRuntime loads into dynalite's thread; the channel it listens on. */
const INDEX_METER = new URL('./dynalite-index-meter.mjs', import.meta.url).href;
const INDEX_METER_CHANNEL = 'sendflow-bench-index-meter';

interface Units {
  /** `table` → read or write request units on the table itself. */
  readonly reads: Map<string, number>;
  readonly writes: Map<string, number>;
  /**
   * Off by default: measuring costs about 0.5 ms of CPU per delivery (dynalite sizes every item again, with
   * big.js for numbers), so throughput phases run without it and a cost phase runs with it.
   */
  enable(on: boolean): Promise<void>;
  reset(): Promise<void>;
  /** From the thread: `table index kind` (put, delete, update) → GSI write units; table → item sizes (bytes). */
  indexes(): Promise<{ indexWrites: Map<string, number>; itemBytes: Map<string, number[]> }>;
}

interface MeterReply {
  readonly id: number;
  readonly indexWrites: [string, number][];
  readonly itemBytes: [string, number[]][];
}

function measureUnits(client: DynamoDBClient): Units {
  const reads = new Map<string, number>();
  const writes = new Map<string, number>();
  let enabled = false;
  const add = (map: Map<string, number>, key: string, n: number) => map.set(key, (map.get(key) ?? 0) + n);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = String(context.commandName ?? '').replace(/Command$/, '');
      if (!enabled || !CAPACITY_OPERATIONS.has(operation)) return next(args);
      const result = await next({ ...args, input: { ...(args.input as object), ReturnConsumedCapacity: 'TOTAL' } });
      const consumed = (result.output as { ConsumedCapacity?: Consumed | Consumed[] }).ConsumedCapacity;
      for (const c of [consumed ?? []].flat()) {
        add(READ_OPERATIONS.has(operation) ? reads : writes, c.TableName ?? '?', c.CapacityUnits ?? 0);
      }
      return result;
    },
    { step: 'initialize', name: 'benchConsumedCapacity' },
  );

  const channel = new BroadcastChannel(INDEX_METER_CHANNEL);
  channel.unref();
  let seq = 0;
  const ask = (type: 'enable' | 'disable' | 'reset' | 'snapshot') =>
    withTimeout(
      new Promise<MeterReply>((resolve) => {
        const id = ++seq;
        channel.onmessage = (event) => {
          const reply = (event as unknown as { data: MeterReply }).data;
          if (reply.id === id) resolve(reply);
        };
        channel.postMessage({ type, id });
      }),
      5_000,
      () => `the index meter in dynalite's thread did not answer ${type}`,
    );
  return {
    reads,
    writes,
    async enable(on) {
      enabled = on;
      await ask(on ? 'enable' : 'disable');
    },
    async reset() {
      reads.clear();
      writes.clear();
      await ask('reset');
    },
    async indexes() {
      const reply = await ask('snapshot');
      return { indexWrites: new Map(reply.indexWrites), itemBytes: new Map(reply.itemBytes) };
    },
  };
}

interface Consumed {
  TableName?: string;
  CapacityUnits?: number;
}

// ---------------------------------------------------------------------------------------------------------
// SQS requests: the in-process queues count SendMessageBatch / ReceiveMessage / DeleteMessageBatch in SQS
// terms; the bench adds the payload size of each send, because SQS bills every 64 KB chunk as a request.

interface QueueMeter {
  readonly queue: InProcessQueue;
  /** Bytes of each SendMessageBatch (10 bodies at most), and the largest single body. */
  sendBytes: number[];
  largestBody: number;
  reset(): void;
}

function meterQueue(queue: InProcessQueue): QueueMeter {
  const meter: QueueMeter = {
    queue,
    sendBytes: [],
    largestBody: 0,
    reset() {
      this.sendBytes = [];
      this.largestBody = 0;
      Object.assign(queue.stats, { sendRequests: 0, receiveRequests: 0, deleteRequests: 0, messagesSent: 0 });
    },
  };
  const send = queue.send.bind(queue);
  queue.send = (bodies, delaySeconds) => {
    for (let i = 0; i < bodies.length; i += 10) {
      const sizes = bodies.slice(i, i + 10).map((body) => Buffer.byteLength(body, 'utf8'));
      meter.sendBytes.push(sizes.reduce((a, b) => a + b, 0));
      meter.largestBody = Math.max(meter.largestBody, ...sizes);
    }
    send(bodies, delaySeconds);
  };
  return meter;
}

// ---------------------------------------------------------------------------------------------------------
// The bench.

interface Bench {
  readonly config: Config;
  readonly runtime: LocalRuntime;
  /** A client of the bench's own on the same dynalite: its calls are not counted (index writes are: reset after). */
  readonly seeder: DynamoDBDocumentClient;
  readonly receiver: Receiver;
  /** The ceiling's sender: an HttpWebhookSender configured as the runtime's own, kept warm across ceiling runs. */
  readonly sender: HttpWebhookSender;
  readonly calls: CallCounts;
  readonly units: Units;
  readonly queues: { events: QueueMeter; deliveries: QueueMeter };
  readonly retries: { sqs: number; scheduler: number };
  readonly webhooks: readonly Webhook[];
  readonly tenant: { accountId: string; mode: 'test' };
}

interface PhaseResult {
  readonly name: string;
  readonly deliveries: number;
  readonly seconds: number;
  readonly latencies: number[];
  readonly cpuMs: number;
  readonly invalid: number;
  readonly duplicates: number;
  readonly failed: number;
}

interface Costs {
  readonly deliveries: number;
  readonly calls: CallSnapshot;
  readonly reads: Map<string, number>;
  readonly writes: Map<string, number>;
  readonly indexWrites: Map<string, number>;
  readonly itemBytes: Map<string, number[]>;
  readonly sqs: Record<'events' | 'deliveries', { send: number; receive: number; delete: number; billed: number }>;
  readonly largestBody: number;
  readonly retries: { sqs: number; scheduler: number };
}

async function main(): Promise<void> {
  const deliveries = EVENTS * WEBHOOKS;
  console.log(
    `bench:delivery: ${EVENTS} events × ${WEBHOOKS} webhooks = ${deliveries} deliveries, Node ${process.version}, ` +
      `${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'})`,
  );
  console.log(
    `pipeline: local runtime in this process (dynalite and the queue journals in ${DATA_DIR}, in-process queues: events ×2 batches, ` +
      `deliveries ×${WORKER_BATCHES} batches of ${LOCAL_BATCH_SIZE}); receiver: a child process on ` +
      `127.0.0.1 that answers 200 and verifies every signature\n`,
  );
  const sink = TRACING === 'on' ? await startSpanSink() : undefined;
  console.log(
    `tracing: ${TRACING}${sink ? ` (spans exported over OTLP/HTTP to a sink on ${sink.url}, which counts and drops them)` : ''}\n`,
  );
  const bench = await startBench(sink?.url);
  try {
    process.stdout.write(
      `warm-up: ${WARMUP_EVENTS} events through the pipeline, ${WARMUP_EVENTS * WEBHOOKS} bare POSTs… `,
    );
    await runPipeline(bench, 'warm-up', WARMUP_EVENTS);
    await runCeiling(bench, WARMUP_EVENTS, 'warm-up', 1);
    await runCeiling(bench, WARMUP_EVENTS, 'warm-up', WORKER_CONCURRENCY);
    console.log('done');

    const loop = await medianCeiling(bench, 'ceiling: POST loop', 1);
    const wide = await medianCeiling(bench, `ceiling: ${WORKER_CONCURRENCY} in flight`, WORKER_CONCURRENCY);

    // The burst is the noisiest figure on a shared machine: three of them too, the median kept.
    process.stdout.write(`pipeline: 3 × ${EVENTS} events published at once, in batches of ${PUBLISH_BATCH}… `);
    const bursts: (PhaseResult & { costs: Costs })[] = [];
    for (let i = 0; i < 3; i++) bursts.push(await runPipeline(bench, 'pipeline, burst (median of 3)', EVENTS));
    bursts.sort((a, b) => rate(a) - rate(b));
    const { costs: burstCosts, ...pipeline } = bursts[1] as PhaseResult & { costs: Costs };
    console.log(`done (${bursts.map((b) => rate(b).toFixed(0)).join(', ')} deliveries/s)`);

    process.stdout.write(`latency: ${LATENCY_ROUNDS} rounds of ${PUBLISH_BATCH} events, each round after the last… `);
    const latency = await runLatencyRounds(bench);
    console.log('done');

    process.stdout.write(`costs: ${COST_EVENTS} events at once again, request units measured… `);
    const { costs, ...metered } = await runPipeline(bench, 'pipeline, burst, metered', COST_EVENTS, true);
    console.log('done');

    const stored = await countStored(bench);
    const published = WARMUP_EVENTS + 3 * EVENTS + LATENCY_ROUNDS * PUBLISH_BATCH + COST_EVENTS;
    report([loop, wide, pipeline, latency, metered], { burst: burstCosts, metered: costs }, stored, published);
    if (sink) {
      await bench.runtime.services.tracing.flush();
      const counts = (bench.runtime.services.tracing as Partial<DeferredTracing>).counts;
      console.log(
        `\nspans: ${counts?.exported ?? 0} exported, ${counts?.failed ?? 0} failed; the sink took ${sink.requests()} ` +
          `export requests, ${(sink.bytes() / 1e6).toFixed(1)} MB`,
      );
    }
  } finally {
    sink?.close();
    bench.receiver.stop();
    bench.seeder.destroy();
    await bench.sender.close();
    await bench.runtime.stop();
    if (!process.env.BENCH_DATA_DIR) rmSync(DATA_DIR, { recursive: true, force: true });
  }
}

async function startBench(otlpEndpoint?: string): Promise<Bench> {
  const config = benchConfig({
    ...(otlpEndpoint ? { OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint, OTEL_SERVICE_NAME: 'bench-delivery' } : {}),
    SF_HOST: '127.0.0.1',
    // On disk, as `npm start` runs: the store and the queue journals write files.
    SF_DATA_DIR: DATA_DIR,
    SF_SIMULATOR_STEP_SECONDS: '0',
    SF_ALLOW_PRIVATE_WEBHOOKS: 'true',
    // The reconciler is a fixed once-a-minute cost on AWS, not a per-delivery one: keep its timer out of the run.
    SF_RECONCILE_INTERVAL_SECONDS: '3600',
  });
  const receiver = await Receiver.start();
  let meters: { calls: CallCounts; units: Units } | undefined;
  const runtime = await startLocalRuntime(config, {
    dynamoPreload: INDEX_METER,
    instrument: (client) => {
      meters = { calls: countCalls(client), units: measureUnits(client) };
    },
  });
  try {
    if (!meters) throw new Error('the runtime did not call instrument()');
    const { services } = runtime;
    const retries = { sqs: 0, scheduler: 0 };
    const schedule = services.retries.schedule.bind(services.retries);
    services.retries.schedule = (job, delaySeconds) => {
      // The AWS retry transport's own rule: SQS DelaySeconds up to 15 minutes, Scheduler beyond.
      retries[retryTransport(delaySeconds)] += 1;
      return schedule(job, delaySeconds);
    };
    const account = await createAccount({ ...services, usagePlans: noUsagePlans }, 'scale');
    await createAccountKey({ ...services, usagePlans: noUsagePlans }, { accountId: account.id, mode: 'test' });
    const tenant = { accountId: account.id, mode: 'test' } as const;
    const webhooks: Webhook[] = [];
    for (let i = 0; i < WEBHOOKS; i++) {
      const input = { url: receiver.url(i), events: ['email.delivered'], format: 'standard' } as const;
      webhooks.push(await createWebhook(services, tenant, input));
    }
    const queues = { events: meterQueue(runtime.queues.events), deliveries: meterQueue(runtime.queues.deliveries) };
    const seeder = DynamoDBDocumentClient.from(localDynamoClient(runtime.dynamoEndpoint));
    const { attemptTimeoutMs, allowPrivateUrls } = config.webhooks;
    const sender = new HttpWebhookSender({ timeoutMs: attemptTimeoutMs, allowPrivate: allowPrivateUrls });
    return { config, runtime, seeder, receiver, sender, ...meters, queues, retries, webhooks, tenant };
  } catch (error) {
    receiver.stop();
    await runtime.stop();
    throw error;
  }
}

/** What the simulator publishes for a delivered email (simulated-provider.ts), with fresh ids. */
function makeEvents(bench: Bench, count: number): SendflowEvent[] {
  return Array.from({ length: count }, (_, i) => {
    const at = Date.now();
    return {
      id: timeOrderedId('evt', at, randomBytes),
      type: 'email.delivered',
      accountId: bench.tenant.accountId,
      mode: bench.tenant.mode,
      timestamp: new Date(at).toISOString(),
      emailId: timeOrderedId('email', at, randomBytes),
      to: `delivered+${i}@resend.dev`,
      data: { from: 'Acme <onboarding@acme.dev>', subject: `Your receipt #${100_000 + i}` },
      // As the API request that caused it would leave it (BENCH_TRACING carried or on): its span's context.
      ...(TRACING === 'off' ? {} : { trace: benchTrace() }),
    };
  });
}

/** A fresh sampled trace context, in the compact form events carry. */
function benchTrace(): string {
  const bytes = randomBytes(24);
  return compactTrace({
    traceId: bytes.subarray(0, 16).toString('hex'),
    spanId: bytes.subarray(16).toString('hex'),
    flags: 1,
  });
}

/** An OTLP/HTTP endpoint on loopback that answers 200 to every export and only counts requests and bytes. */
async function startSpanSink(): Promise<{ url: string; requests(): number; bytes(): number; close(): void }> {
  let requests = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      requests += 1;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    bytes: () => bytes,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/**
 * The email each event belongs to, stored as the API stores a sent email (text only, one recipient), so that
 * the events consumer's history write (UpdateItem emails, conditional on the email existing) does its real work.
 */
async function seedEmails(bench: Bench, events: readonly SendflowEvent[]): Promise<void> {
  const items = events.map((event) => ({
    id: event.emailId,
    accountId: event.accountId,
    mode: event.mode,
    from: event.data.from,
    to: [event.to],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: event.data.subject,
    text: `Thanks for your order. Your receipt is attached; reply to this email if anything looks wrong. ${event.to}`,
    headers: {},
    tags: [{ name: 'category', value: 'receipt' }],
    createdAt: event.timestamp,
    events: [],
  }));
  for (let i = 0; i < items.length; i += 25) {
    const table = bench.config.tables.emails;
    const RequestItems = { [table]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) };
    const { UnprocessedItems } = await bench.seeder.send(new BatchWriteCommand({ RequestItems }));
    if (Object.keys(UnprocessedItems ?? {}).length) throw new Error('dynalite left emails unprocessed');
  }
}

/** Publishes every event at once (10 per call) and waits for every delivery to arrive and be recorded. */
async function runPipeline(
  bench: Bench,
  name: string,
  count: number,
  measureUnits = false,
): Promise<PhaseResult & { costs: Costs }> {
  const events = makeEvents(bench, count);
  await seedEmails(bench, events);
  const expected = count * WEBHOOKS;
  await bench.receiver.arm(secretsOf(bench), Number.POSITIVE_INFINITY);
  await resetMeters(bench);
  await bench.units.enable(measureUnits);
  const cpu = process.cpuUsage();
  const arrived = bench.receiver.until(expected, name, () => progress(bench));
  const accepted = new Map<string, number>();
  for (let i = 0; i < events.length; i += PUBLISH_BATCH) {
    const batch = events.slice(i, i + PUBLISH_BATCH);
    await bench.runtime.services.events.publish(batch);
    const at = now();
    for (const event of batch) accepted.set(event.id, at);
  }
  await arrived;
  await idle(bench);
  const used = process.cpuUsage(cpu);
  await bench.units.enable(false);
  const { hits, invalid } = await bench.receiver.collect();
  const costs = await snapshotCosts(bench, hits.length);
  const first = [...accepted.values()].reduce((min, at) => Math.min(min, at), Number.POSITIVE_INFINITY);
  const last = hits.reduce((max, h) => Math.max(max, h[2]), 0);
  return {
    costs,
    name,
    deliveries: hits.length,
    seconds: (last - first) / 1000,
    latencies: hits.map(([, id, at]) => at - (accepted.get(id) ?? Number.NaN)),
    cpuMs: (used.user + used.system) / 1000,
    invalid,
    duplicates: duplicates(hits),
    failed: 0,
  };
}

/** One batch of 10 events at a time, the next once the last one's deliveries all arrived: no backlog. */
async function runLatencyRounds(bench: Bench): Promise<PhaseResult> {
  const rounds = Array.from({ length: LATENCY_ROUNDS }, () => makeEvents(bench, PUBLISH_BATCH));
  await seedEmails(bench, rounds.flat());
  await bench.receiver.arm(secretsOf(bench), Number.POSITIVE_INFINITY);
  const accepted = new Map<string, number>();
  const cpu = process.cpuUsage();
  const started = now();
  for (const [i, batch] of rounds.entries()) {
    const round = i + 1;
    const arrived = bench.receiver.until(round * PUBLISH_BATCH * WEBHOOKS, 'latency', () => progress(bench));
    await bench.runtime.services.events.publish(batch);
    const at = now();
    for (const event of batch) accepted.set(event.id, at);
    await arrived;
    await idle(bench);
  }
  const used = process.cpuUsage(cpu);
  const { hits, invalid } = await bench.receiver.collect();
  return {
    name: 'pipeline, paced',
    deliveries: hits.length,
    seconds: (hits.reduce((max, h) => Math.max(max, h[2]), 0) - started) / 1000,
    latencies: hits.map(([, id, at]) => at - (accepted.get(id) ?? Number.NaN)),
    cpuMs: (used.user + used.system) / 1000,
    invalid,
    duplicates: duplicates(hits),
    failed: 0,
  };
}

/**
 * A ceiling takes a second or two: three runs, the median kept, so that one busy second of a shared machine
 * does not make the ratio.
 */
async function medianCeiling(bench: Bench, name: string, inFlight: number): Promise<PhaseResult> {
  process.stdout.write(`${name}: 3 × ${EVENTS * WEBHOOKS} signed POSTs, ${inFlight} in flight… `);
  const runs: PhaseResult[] = [];
  for (let i = 0; i < 3; i++) runs.push(await runCeiling(bench, EVENTS, `${name} (median of 3)`, inFlight));
  runs.sort((a, b) => rate(a) - rate(b));
  console.log(`done (${runs.map((c) => rate(c).toFixed(0)).join(', ')} deliveries/s)`);
  return runs[1] as PhaseResult;
}

/**
 * The ceiling: the same bodies (rendered as the dispatcher renders them), signed per attempt as the worker signs
 * them, sent by an HttpWebhookSender configured as the runtime's, `inFlight` at a time, with no storage and no
 * queues. Latency here is POST start → arrival.
 */
async function runCeiling(bench: Bench, events: number, name: string, inFlight: number): Promise<PhaseResult> {
  const jobs = makeEvents(bench, events).flatMap((event) => {
    const body = renderPayload(event, 'standard');
    return bench.webhooks.map((webhook, hook) => ({ webhook, hook, event, body }));
  });
  await bench.receiver.arm(secretsOf(bench), Number.POSITIVE_INFINITY);
  const arrived = bench.receiver.until(jobs.length, name, () => 'bare POST loop');
  const startedAt = new Map<string, number>();
  let failed = 0;
  let next = 0;
  const cpu = process.cpuUsage();
  const started = now();
  const worker = async () => {
    for (let job = jobs[next++]; job; job = jobs[next++]) {
      const { webhook, hook, event, body } = job;
      startedAt.set(`${hook} ${event.id}`, now());
      const headers = attemptHeaders(webhook.format, [webhook.secret], event.id, body, Date.now());
      const outcome = await bench.sender.send({ url: webhook.url, body, headers });
      if (outcome.statusCode !== 200) failed++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  await arrived;
  const used = process.cpuUsage(cpu);
  const { hits, invalid } = await bench.receiver.collect();
  return {
    name,
    deliveries: hits.length,
    seconds: (hits.reduce((max, h) => Math.max(max, h[2]), 0) - started) / 1000,
    latencies: hits.map(([hook, id, at]) => at - (startedAt.get(`${hook} ${id}`) ?? Number.NaN)),
    cpuMs: (used.user + used.system) / 1000,
    invalid,
    duplicates: duplicates(hits),
    failed,
  };
}

function rate(phase: PhaseResult): number {
  return phase.deliveries / phase.seconds;
}

function secretsOf(bench: Bench): string[] {
  return bench.webhooks.map((webhook) => webhook.secret);
}

function duplicates(hits: readonly Hit[]): number {
  return hits.length - new Set(hits.map(([hook, id]) => `${hook} ${id}`)).size;
}

/** Both queues empty (nothing ready, delayed or in flight): every attempt has been recorded. */
async function idle(bench: Bench): Promise<void> {
  await withTimeout(
    Promise.all([bench.runtime.queues.events.idle(), bench.runtime.queues.deliveries.idle()]),
    PHASE_TIMEOUT_MS,
    () => `queues did not drain (${progress(bench)})`,
  );
}

function progress(bench: Bench): string {
  const { events, deliveries } = bench.runtime.queues;
  return `events queue depth ${events.depth}, deliveries queue depth ${deliveries.depth}, dead letters ${
    events.deadLetters.length + deliveries.deadLetters.length
  }`;
}

async function resetMeters(bench: Bench): Promise<void> {
  bench.calls.reset();
  await bench.units.reset();
  bench.queues.events.reset();
  bench.queues.deliveries.reset();
  bench.retries.sqs = 0;
  bench.retries.scheduler = 0;
}

async function snapshotCosts(bench: Bench, deliveries: number): Promise<Costs> {
  const sqs = (meter: QueueMeter) => {
    const { sendRequests, receiveRequests, deleteRequests } = meter.queue.stats;
    // Sends: each 64 KB chunk of a request is a request. Receives carry at most a batch of these bodies and
    // deletes carry receipt handles: both stay under 64 KB while 10 bodies do (checked in the report).
    const sendBilled = meter.sendBytes.reduce(
      (sum, bytes) => sum + Math.max(1, Math.ceil(bytes / SQS_BILLING_CHUNK)),
      0,
    );
    return {
      send: sendRequests,
      receive: receiveRequests,
      delete: deleteRequests,
      billed: sendBilled + receiveRequests + deleteRequests,
    };
  };
  return {
    deliveries,
    calls: bench.calls.snapshot({ byTable: true }),
    reads: new Map(bench.units.reads),
    writes: new Map(bench.units.writes),
    ...(await bench.units.indexes()),
    sqs: { events: sqs(bench.queues.events), deliveries: sqs(bench.queues.deliveries) },
    largestBody: Math.max(bench.queues.events.largestBody, bench.queues.deliveries.largestBody),
    retries: { ...bench.retries },
  };
}

/** Deliveries stored per status for every webhook, read after the run through a client of our own (not counted). */
async function countStored(bench: Bench): Promise<Record<string, number>> {
  const client = localDynamoClient(bench.runtime.dynamoEndpoint);
  const table = bench.config.tables.deliveries;
  const counts: Record<string, number> = {};
  try {
    // Every row of each webhook's partitions (its shards), counted by status (succeeded rows are in no index).
    for (const partition of bench.webhooks.flatMap((webhook) => deliveryPartitionsOf(webhook.id))) {
      let cursor: Record<string, never> | undefined;
      do {
        const page = await client.send(
          new QueryCommand({
            TableName: table,
            KeyConditionExpression: 'webhookId = :w',
            ExpressionAttributeValues: { ':w': { S: partition } },
            ProjectionExpression: '#s',
            ExpressionAttributeNames: { '#s': 'status' },
            ExclusiveStartKey: cursor,
          }),
        );
        for (const item of page.Items ?? []) {
          const status = item.status?.S ?? 'unknown';
          counts[status] = (counts[status] ?? 0) + 1;
        }
        cursor = page.LastEvaluatedKey as Record<string, never> | undefined;
      } while (cursor);
    }
    return counts;
  } finally {
    client.destroy();
  }
}

// ---------------------------------------------------------------------------------------------------------
// The report.

function report(
  phases: readonly PhaseResult[],
  runs: { burst: Costs; metered: Costs },
  stored: Record<string, number>,
  publishedEvents: number,
): void {
  const [loop, wide, pipeline] = phases as [PhaseResult, PhaseResult, PhaseResult];
  const costs = runs.metered;
  console.log(
    '\nThroughput and latency. Pipeline latency: publish() resolved → request arrived at the receiver; ceiling\n' +
      'latency: POST started → arrived. CPU ms/delivery: CPU time of this process (runtime, dynalite, sender) per\n' +
      'delivery; the receiver runs in its own process and is not included.',
  );
  printTable(
    ['phase', 'deliveries', 's', 'deliveries/s', 'p50 ms', 'p99 ms', 'max ms', 'CPU ms/delivery', 'bad sig', 'dup'],
    phases.map((p) => [
      p.name,
      String(p.deliveries),
      p.seconds.toFixed(2),
      rate(p).toFixed(0),
      percentile(p.latencies, 0.5).toFixed(1),
      percentile(p.latencies, 0.99).toFixed(1),
      percentile(p.latencies, 1).toFixed(1),
      (p.cpuMs / p.deliveries).toFixed(3),
      String(p.invalid),
      String(p.duplicates),
    ]),
  );
  const ratio = rate(pipeline) / rate(loop);
  const wideRatio = rate(pipeline) / rate(wide);
  const failed = loop.failed + wide.failed;
  console.log(
    `\npipeline / POST loop: ${(ratio * 100).toFixed(1)}% (${rate(pipeline).toFixed(0)} / ${rate(loop).toFixed(0)} ` +
      `deliveries/s); pipeline / ${WORKER_CONCURRENCY} POSTs in flight: ${(wideRatio * 100).toFixed(1)}% ` +
      `(${rate(pipeline).toFixed(0)} / ${rate(wide).toFixed(0)})` +
      (failed ? `; ${failed} ceiling POSTs did not get 200` : ''),
  );
  const cpuPer = (p: PhaseResult) => p.cpuMs / p.deliveries;
  const busy = (p: PhaseResult) => p.cpuMs / 1000 / p.seconds;
  console.log(
    `CPU per delivery: pipeline ${cpuPer(pipeline).toFixed(3)} ms, POST loop ${cpuPer(loop).toFixed(3)} ms, ` +
      `${WORKER_CONCURRENCY} in flight ${cpuPer(wide).toFixed(3)} ms; this process was busy ` +
      `${(busy(pipeline) * 100).toFixed(0)}% of the pipeline's wall time, ${(busy(loop) * 100).toFixed(0)}% of the ` +
      `loop's and ${(busy(wide) * 100).toFixed(0)}% of the ${WORKER_CONCURRENCY}-in-flight run's`,
  );
  const total = publishedEvents * WEBHOOKS;
  console.log(
    `stored deliveries after the run: ${stored.succeeded ?? 0} succeeded, ${stored.pending ?? 0} pending, ` +
      `${stored.failed ?? 0} failed (expected ${total} succeeded: warm-up + 3 bursts + paced + metered)`,
  );

  const n = costs.deliveries;
  const per = (x: number) => (x / n).toFixed(3);
  const shortTable = (name: string) => name.replace(/^sendflow-/, '');
  console.log(
    `\nDynamoDB calls per delivery (SDK middleware), in the burst (${runs.burst.deliveries} deliveries) and in the ` +
      `metered burst (${n})`,
  );
  const keys = [...new Set([...Object.keys(runs.burst.calls), ...Object.keys(costs.calls)])].sort();
  printTable(
    ['call', 'burst', 'metered'],
    keys.map((key) => [
      key.replace(/ sendflow-/, ' '),
      ((runs.burst.calls[key] ?? 0) / runs.burst.deliveries).toFixed(3),
      per(costs.calls[key] ?? 0),
    ]),
  );
  console.log(`\nDynamoDB request units per delivery, metered burst (${n} deliveries)`);
  const sum = (map: Map<string, number>) => [...map.values()].reduce((a, b) => a + b, 0);
  const unitRows: string[][] = [
    ...[...costs.reads].map(([table, u]) => [`read units, table ${shortTable(table)}`, per(u)]),
    ...[...costs.writes].map(([table, u]) => [`write units, table ${shortTable(table)}`, per(u)]),
    ...[...costs.indexWrites]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, u]) => [`write units, index ${shortTable(key)}`, per(u)]),
  ];
  printTable(['request units', 'per delivery'], unitRows);
  for (const [table, sizes] of costs.itemBytes) {
    const sorted = [...sizes].sort((a, b) => a - b);
    console.log(
      `items written to ${shortTable(table)}: ${sizes.length}, ${sorted[0]}–${sorted.at(-1)} bytes ` +
        `(median ${percentile(sorted, 0.5)}); a write unit covers 1 KB`,
    );
  }

  const reads = sum(costs.reads) / n;
  const writes = (sum(costs.writes) + sum(costs.indexWrites)) / n;
  const emailsTable = [...costs.writes.keys()].find((table) => shortTable(table) === 'emails');
  const historyUnits = (emailsTable ? (costs.writes.get(emailsTable) ?? 0) : 0) / n;
  const readCalls = callsOf(costs.calls, (op) => READ_OPERATIONS.has(op)) / n;
  const writeCalls = callsOf(costs.calls, (op) => !READ_OPERATIONS.has(op)) / n;
  const historyCalls = callsOf(costs.calls, (op, table) => !READ_OPERATIONS.has(op) && table === emailsTable) / n;

  console.log(
    `\nSQS per delivery, metered burst (in-process queue counts in SQS terms: SendMessageBatch, ReceiveMessage, ` +
      'DeleteMessageBatch)',
  );
  const queueRows = (['events', 'deliveries'] as const).map((name) => {
    const q = costs.sqs[name];
    return [name, per(q.send), per(q.receive), per(q.delete), per(q.billed)];
  });
  printTable(['queue', 'send', 'receive', 'delete', 'billed requests'], queueRows);
  const sqsBilled = (costs.sqs.events.billed + costs.sqs.deliveries.billed) / n;
  console.log(
    `largest message body: ${costs.largestBody} bytes (10 of them: ${costs.largestBody * 10} bytes, ` +
      `${costs.largestBody * 10 <= SQS_BILLING_CHUNK ? 'one' : 'MORE THAN ONE'} 64 KB chunk per receive)`,
  );
  const scheduler = costs.retries.scheduler / n;
  console.log(
    `retries: ${costs.retries.sqs} through SQS delays (counted above), ${costs.retries.scheduler} through Scheduler`,
  );

  const cost = {
    writes: writes * PRICES.dynamoWriteUnit,
    reads: reads * PRICES.dynamoReadUnit,
    sqs: sqsBilled * PRICES.sqsRequest,
    scheduler: scheduler * PRICES.schedulerInvocation,
  };
  console.log(
    `\nCost per million deliveries, us-east-1 on-demand list prices (USD per million: DynamoDB write unit ` +
      `${PRICES.dynamoWriteUnit}, read unit ${PRICES.dynamoReadUnit}; SQS request ${PRICES.sqsRequest}; Scheduler ` +
      `invocation ${PRICES.schedulerInvocation}); free tiers and Lambda left out`,
  );
  printTable(
    ['item', 'units per delivery', 'USD per million deliveries'],
    [
      ['DynamoDB write units', writes.toFixed(3), cost.writes.toFixed(3)],
      ['DynamoDB read units', reads.toFixed(3), cost.reads.toFixed(3)],
      ['SQS requests', sqsBilled.toFixed(3), cost.sqs.toFixed(3)],
      ['Scheduler invocations', scheduler.toFixed(3), cost.scheduler.toFixed(3)],
      ['total', '', (cost.writes + cost.reads + cost.sqs + cost.scheduler).toFixed(3)],
    ],
  );

  console.log('\nTargets');
  const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
  console.log(
    `- pipeline ≥ 25% of the ceiling (the bare POST loop): ${verdict(ratio >= 0.25)} (${(ratio * 100).toFixed(1)}%); ` +
      `against ${WORKER_CONCURRENCY} POSTs in flight: ${(wideRatio * 100).toFixed(1)}%`,
  );
  console.log(
    `- ≤ 1 DynamoDB read per delivery: calls ${verdict(readCalls <= 1)} (${readCalls.toFixed(3)}); ` +
      `read units ${verdict(reads <= 1)} (${reads.toFixed(3)})`,
  );
  const pathCalls = writeCalls - historyCalls;
  const pathUnits = writes - historyUnits;
  console.log(
    `- ≤ 2 DynamoDB writes per delivery, all calls: calls ${verdict(writeCalls <= 2)} (${writeCalls.toFixed(3)}); ` +
      `write units ${verdict(writes <= 2)} (${writes.toFixed(3)})`,
  );
  console.log(
    `  without the events consumer's email-history write (1 per event, so 1/${WEBHOOKS} per delivery): calls ` +
      `${verdict(pathCalls <= 2)} (${pathCalls.toFixed(3)}); write units ${verdict(pathUnits <= 2)} ` +
      `(${pathUnits.toFixed(3)}, of which ${(sum(costs.indexWrites) / n).toFixed(3)} on indexes)`,
  );
  console.log(`- ≤ 2 SQS requests per delivery: ${verdict(sqsBilled <= 2)} (${sqsBilled.toFixed(3)})`);
  if (phases.some((p) => p.invalid || p.duplicates))
    console.log('\nSOME SIGNATURES DID NOT VERIFY OR DELIVERIES CAME TWICE');
}

/** Calls whose `operation table` key passes `match`. */
function callsOf(calls: CallSnapshot, match: (operation: string, table: string | undefined) => boolean): number {
  return Object.entries(calls)
    .filter(([key]) => {
      const [operation, table] = key.split(' ');
      return match(operation as string, table);
    })
    .reduce((sum, [, n]) => sum + n, 0);
}

/** Nearest-rank percentile. */
function percentile(values: readonly number[], p: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] as number;
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message())), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

if (process.argv.includes('--receiver')) {
  receiver();
} else {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(`bench:delivery: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
