// `npm run bench:api`: authenticated GET /v1/api-keys against the local runtime, driven by autocannon in a
// second process. Prints req/s, p50/p99 latency, status codes and DynamoDB calls per request, with the
// authorizer result cache on (TTL 60 s, as deployed) and off (TTL 0, the local default). docs/benchmarks.md
// has the method and the figures. Env: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 10),
// BENCH_ACCOUNTS (default 4; 1 shows the plan's limiter answering 429 at peaks).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type CallCounts, type CallSnapshot, countCalls } from '../lambdas/adapters/dynamodb/call-counter';
import { noUsagePlans, outOfProcessAuthorizerCache } from '../lambdas/adapters/local/usage-plans';
import { createAccount, createAccountKey } from '../lambdas/app/accounts';
import { PLANS } from '../lambdas/domain/plans';
import { type TableName, tableEnvVar } from '../lambdas/manifest';
import { type Config, localTableDefaults } from '../lambdas/runtime/config';
import { localDynamoClient } from '../lambdas/runtime/local/dynamo';
import { startLocalRuntime } from '../lambdas/runtime/local/runtime';
import { createRepositories } from '../lambdas/runtime/repositories';
import { benchConfig, positiveInt, printTable } from './report';

const DURATION = positiveInt('BENCH_DURATION', 10);
const CONNECTIONS = positiveInt('BENCH_CONNECTIONS', 10);
/** The largest plan: 500 requests per one-second window per account. */
const PLAN = 'scale';
/**
 * Each connection takes the accounts' keys in turn, so one account sees a quarter of the load: a single key
 * peaked past 500 in a window on this machine, and a 429 is not a read. 429s are still counted apart.
 */
const ACCOUNTS = positiveInt('BENCH_ACCOUNTS', 4);
const WARMUP_REQUESTS = 400;
const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

const CONFIGS = [
  { name: 'cache on', ttl: 60, note: 'authorizer result cache TTL 60 s, as API Gateway does on AWS' },
  { name: 'cache off', ttl: 0, note: 'TTL 0, the local default: the authorizer runs on every request' },
] as const;

/** Closed-loop phases: many connections for throughput, one connection for latency without queueing. */
const PHASES = [
  { name: 'throughput', connections: CONNECTIONS, duration: DURATION },
  { name: 'latency', connections: 1, duration: Math.max(1, Math.round(DURATION / 2)) },
] as const;

interface PhaseResult {
  readonly config: string;
  readonly phase: string;
  readonly connections: number;
  readonly seconds: number;
  readonly reqPerSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  readonly statuses: Readonly<Record<string, number>>;
  readonly errors: number;
  /** HTTP requests the runtime received: the denominator of the per-request call counts. */
  readonly received: number;
  readonly calls: CallSnapshot;
  /** CPU time of this process (runtime + embedded dynalite) per received request, ms. */
  readonly cpuMsPerRequest: number;
}

interface Target {
  readonly url: string;
  /** One `Bearer …` header value per account. */
  readonly authorizations: readonly string[];
}

/** The fields of autocannon's --json result that the report reads. */
interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  latency: { p50: number; p99: number; mean: number };
  requests: { total: number };
  statusCodeStats: Record<string, { count: number }>;
}

async function main(): Promise<void> {
  console.log(
    `bench:api: GET /v1/api-keys, plan ${PLAN} (${PLANS[PLAN].requestsPerSecond} req/s per account), ` +
      `Node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'})`,
  );
  console.log(
    `phases: throughput = ${CONNECTIONS} connections for ${PHASES[0].duration} s; latency = 1 connection for ` +
      `${PHASES[1].duration} s; the load goes round ${ACCOUNTS} accounts, one full-access key each`,
  );
  for (const config of CONFIGS) console.log(`${config.name}: ${config.note}`);
  console.log();
  const benches: Bench[] = [];
  try {
    for (const config of CONFIGS) benches.push(await startBench(config));
    for (const bench of benches) await warmUp(bench.target);
    // Phase by phase, cache on and off back to back: a change in the shared machine's load hits both alike.
    const results: PhaseResult[] = [];
    for (const phase of PHASES) for (const bench of benches) results.push(await runPhase(bench, phase));
    report(results);
  } finally {
    for (const bench of benches) await bench.stop();
  }
}

interface Bench {
  readonly name: string;
  readonly target: Target;
  readonly counts: CallCounts;
  readonly received: ReturnType<typeof countRequests>;
  stop(): Promise<void>;
}

/** A runtime of its own per configuration: in-memory store, any free port, no seed, silent logs. */
async function startBench(bench: (typeof CONFIGS)[number]): Promise<Bench> {
  const config = benchConfig({
    SF_HOST: '127.0.0.1',
    SF_DATA_DIR: ':memory:',
    SF_AUTH_CACHE_TTL: String(bench.ttl),
  });
  let counts: CallCounts | undefined;
  const runtime = await startLocalRuntime(config, {
    instrument: (client) => {
      counts = countCalls(client);
    },
  });
  const received = countRequests(runtime.port);
  const stop = async () => {
    received.stop();
    await runtime.stop();
  };
  try {
    if (!counts) throw new Error('the runtime did not call instrument()');
    const secrets = await createScaleAccountKeys(runtime.dynamoEndpoint, config, ACCOUNTS);
    const target = { url: `${runtime.url}/api-keys`, authorizations: secrets.map((secret) => `Bearer ${secret}`) };
    return { name: bench.name, target, counts, received, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function runPhase(bench: Bench, phase: (typeof PHASES)[number]): Promise<PhaseResult> {
  process.stdout.write(`${bench.name}: ${phase.name} (${phase.connections} conn, ${phase.duration} s)… `);
  await nextRateWindow();
  bench.counts.reset();
  bench.received.reset();
  const cpuBefore = process.cpuUsage();
  const load = await autocannon(bench.target, phase.connections, phase.duration);
  await settle(bench.counts, bench.received);
  const cpu = process.cpuUsage(cpuBefore);
  console.log('done');
  return summarize(bench.name, phase, load, {
    received: bench.received.count(),
    calls: bench.counts.snapshot({ byTable: true }),
    cpuMs: (cpu.user + cpu.system) / 1000,
  });
}

/** Accounts on the largest plan, a full-access key each, through a client of our own (not counted). */
async function createScaleAccountKeys(endpoint: string, config: Config, count: number): Promise<string[]> {
  const client = localDynamoClient(endpoint);
  try {
    const deps = {
      ...createRepositories(client, config.tables),
      usagePlans: noUsagePlans,
      authorizerCache: outOfProcessAuthorizerCache,
      clock: { now: () => Date.now() },
      random: randomBytes,
    };
    const secrets: string[] = [];
    for (let i = 0; i < count; i++) {
      const account = await createAccount(deps, PLAN);
      const { secret } = await createAccountKey(deps, { accountId: account.id, mode: 'test', name: 'bench' });
      secrets.push(secret);
    }
    return secrets;
  } finally {
    client.destroy();
  }
}

/** JIT, connection pools and (when on) the authorizer cache get warm; any non-200 stops the benchmark. */
async function warmUp(target: Target): Promise<void> {
  const worker = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const authorization = target.authorizations[i % target.authorizations.length] as string;
      const response = await fetch(target.url, { headers: { authorization } });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`warm-up request answered ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: 10 }, () => worker(WARMUP_REQUESTS / 10)));
}

/** Counts the HTTP requests the runtime's server receives (dynalite's server in this process is not counted). */
function countRequests(port: number) {
  let n = 0;
  const onStart = (message: unknown) => {
    if ((message as { socket?: Socket }).socket?.localPort === port) n++;
  };
  subscribe('http.server.request.start', onStart);
  return {
    count: () => n,
    reset: () => {
      n = 0;
    },
    stop: () => unsubscribe('http.server.request.start', onStart),
  };
}

/** Waits for a fresh one-second rate-limit window, so a phase never shares one with what ran before it. */
async function nextRateWindow(): Promise<void> {
  await sleep(1000 - (Date.now() % 1000) + 20);
}

/** Requests still in flight when autocannon closed its sockets finish their DynamoDB calls; wait for that. */
async function settle(counts: CallCounts, received: { count(): number }): Promise<void> {
  let last = '';
  for (let i = 0; i < 40; i++) {
    const now = `${counts.total()}/${received.count()}`;
    if (now === last) return;
    last = now;
    await sleep(100);
  }
}

/**
 * Runs autocannon in its own process, closed loop. Its CLI takes one set of headers; a HAR file gives it one
 * request per key, which every connection sends in turn.
 */
async function autocannon(target: Target, connections: number, duration: number): Promise<AutocannonResult> {
  const dir = mkdtempSync(join(tmpdir(), 'sendflow-bench-'));
  try {
    const har = join(dir, 'requests.har');
    const entries = target.authorizations.map((authorization) => ({
      request: { method: 'GET', url: target.url, headers: [{ name: 'Authorization', value: authorization }] },
    }));
    writeFileSync(har, JSON.stringify({ log: { entries } }));
    const args = ['--json', '-c', String(connections), '-d', String(duration), '--har', har, target.url];
    return await runJson(AUTOCANNON, args);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runJson(script: string, args: readonly string[]): Promise<AutocannonResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stdout.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !line.startsWith('{')) {
        reject(new Error(`autocannon exited with ${code}: ${stderr.trim() || stdout.trim()}`));
        return;
      }
      resolve(JSON.parse(line) as AutocannonResult);
    });
  });
}

function summarize(
  config: string,
  phase: (typeof PHASES)[number],
  load: AutocannonResult,
  server: { received: number; calls: CallSnapshot; cpuMs: number },
): PhaseResult {
  return {
    config,
    phase: phase.name,
    connections: phase.connections,
    seconds: load.duration,
    reqPerSec: load.requests.total / load.duration,
    p50: load.latency.p50,
    p99: load.latency.p99,
    mean: load.latency.mean,
    statuses: Object.fromEntries(Object.entries(load.statusCodeStats).map(([code, { count }]) => [code, count])),
    errors: load.errors + load.timeouts,
    received: server.received,
    calls: server.calls,
    cpuMsPerRequest: server.received ? server.cpuMs / server.received : 0,
  };
}

function report(results: readonly PhaseResult[]): void {
  const names = localTableDefaults();
  const table = (name: TableName) => names[tableEnvVar(name)];
  const columns = [
    { label: 'GetItem apiKeys', key: `GetItem ${table('apiKeys')}` },
    { label: 'GetItem accounts', key: `GetItem ${table('accounts')}` },
    { label: 'UpdateItem rateLimits', key: `UpdateItem ${table('rateLimits')}` },
    { label: 'Query apiKeys', key: `Query ${table('apiKeys')}` },
  ];
  // The API request log's write (GET /v1/logs), once answered: counted apart from the read's own calls.
  const logWrite = { label: 'PutItem apiRequests', key: `PutItem ${table('apiRequests')}` };
  const known = new Set([...columns, logWrite].map((c) => c.key));

  console.log(
    '\nHTTP, measured by autocannon in a second process (latency resolution 1 ms). CPU ms/req: CPU time of this\n' +
      'process (gateway, handlers, SDK client and the embedded dynalite, all threads) per request received.',
  );
  printTable(
    ['config', 'phase', 'conn', 'req/s', 'p50 ms', 'p99 ms', 'mean ms', 'CPU ms/req', 'responses by status', 'errors'],
    results.map((r) => [
      r.config,
      r.phase,
      String(r.connections),
      r.reqPerSec.toFixed(0),
      String(r.p50),
      String(r.p99),
      r.mean.toFixed(2),
      r.cpuMsPerRequest.toFixed(2),
      Object.entries(r.statuses)
        .map(([code, n]) => `${code}: ${n}`)
        .join(', '),
      String(r.errors),
    ]),
    2,
  );

  console.log('\nDynamoDB calls per request (SDK middleware on the runtime client ÷ requests the runtime received)');
  printTable(
    ['config', 'phase', 'requests', ...columns.map((c) => c.label), logWrite.label, 'other', 'total'],
    results.map((r) => {
      const per = (n: number) => (r.received ? n / r.received : 0).toFixed(3);
      const other = Object.entries(r.calls)
        .filter(([key]) => !known.has(key))
        .reduce((sum, [, n]) => sum + n, 0);
      const total = Object.values(r.calls).reduce((sum, n) => sum + n, 0);
      return [
        r.config,
        r.phase,
        String(r.received),
        ...columns.map((c) => per(r.calls[c.key] ?? 0)),
        per(r.calls[logWrite.key] ?? 0),
        per(other),
        per(total),
      ];
    }),
    2,
  );
  for (const r of results) {
    const others = Object.entries(r.calls).filter(([key]) => !known.has(key));
    const list = others.map(([key, n]) => `${key} × ${n}`).join(', ');
    if (!others.length) continue;
    // A few calls over a phase are the runtime's timers; one per request would be a new call on the request path.
    const perRequest = others.reduce((sum, [, n]) => sum + n, 0) / Math.max(1, r.received);
    const why = perRequest < 0.01 ? 'a runtime timer, the webhook reconciler' : 'scales with requests: look here';
    console.log(`other, ${r.config} ${r.phase}: ${list} (${why})`);
  }
  console.log(
    '\nThe authorizer makes GetItem apiKeys (key by hash) + GetItem accounts; with the cache on it runs once per key\n' +
      'per TTL, as API Gateway caches its result on AWS. The request path makes UpdateItem rateLimits (the plan\n' +
      'window, every request, 429s included) + Query apiKeys (the listing; a 429 stops before it), then PutItem\n' +
      "apiRequests once answered (the account's API request log, 1 WRU). 'other' is work the requests did not cause.",
  );

  const cached = results.find((r) => r.config === 'cache on' && r.phase === 'throughput');
  if (cached && cached.received > 0) {
    // The named columns: calls the requests made. 'other' is listed above and judged there.
    const total = columns.reduce((sum, c) => sum + (cached.calls[c.key] ?? 0), 0) / cached.received;
    const throttled = cached.statuses['429'] ?? 0;
    console.log(
      `\nTarget ≤ 2 DynamoDB calls per authenticated read, authorizer cached: ${total <= 2 ? 'met' : 'NOT met'} ` +
        `(${total.toFixed(3)} per request)` +
        (throttled ? `; ${throttled} requests got 429 (UpdateItem only), which lowers the average` : '') +
        `; plus the request log's write: ${((cached.calls[logWrite.key] ?? 0) / cached.received).toFixed(3)} PutItem per request.`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(`bench:api: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
