// `npm run bench:soak [-- --rate 50 --webhooks 3 --minutes 5]`: does the local runtime hold a steady load for
// minutes? It runs `npm start` (bin/local.ts) as a child on a fresh data directory, sends test-mode emails at a
// fixed rate to the simulator's success address (each makes email.sent and email.delivered), to webhooks on a
// receiver in this process that answers 200, and every 15 s prints the data directory's size on disk, the
// runtime's RSS and V8 heaps, the deliveries received and the backlog. At the end it compacts the stopped
// store to find its live size and judges two goals: disk within 2× of the live data, RSS flat after warm-up.
// docs/benchmarks.md (Soak) has the method and the figures.
import { type ChildProcess, fork, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { printTable } from './report';

const SAMPLE_SECONDS = 5;
const REPORT_EVERY = 3; // samples: a line every 15 s
/** After the sending stops: how long the runtime gets to deliver what it owes. */
const DRAIN_SECONDS = 60;
/** Requests to the API in flight at most; a tick past it skips its emails and counts them. */
const MAX_IN_FLIGHT = 500;
/** Goals (issue 8): disk ≤ 2 × live; RSS "flat": its slope over the second half of the sending, at most this. */
const DISK_GOAL = 2;
const RSS_FLAT_MB_PER_MIN = 5;
const EVENTS_PER_EMAIL = 2; // success@: email.sent, email.delivered

const root = fileURLToPath(new URL('..', import.meta.url));
const MB = 1024 * 1024;

interface Options {
  readonly rate: number;
  readonly webhooks: number;
  readonly minutes: number;
}

interface Sample {
  readonly t: number;
  readonly accepted: number;
  readonly received: number;
  readonly backlog: number;
  readonly disk: number;
  readonly rss: number;
  readonly heap: number;
  readonly threadHeap: number;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      rate: { type: 'string', default: '50' },
      webhooks: { type: 'string', default: '3' },
      minutes: { type: 'string', default: '5' },
    },
  });
  const positive = (name: string, raw: string, whole: boolean) => {
    const value = Number(raw);
    if (!(value > 0) || (whole && !Number.isInteger(value))) throw new Error(`--${name} must be positive, not ${raw}`);
    return value;
  };
  return {
    rate: positive('rate', values.rate, false),
    webhooks: positive('webhooks', values.webhooks, true),
    minutes: positive('minutes', values.minutes, false),
  };
}

async function main(): Promise<void> {
  const { rate, webhooks, minutes } = options();
  const dir = mkdtempSync(join(tmpdir(), 'sf-soak-'));
  const data = join(dir, 'data');
  console.log(
    `bench:soak: ${rate} emails/s to ${webhooks} webhooks for ${minutes} min, Node ${process.version}, ` +
      `${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), load average ${loadavg()[0]?.toFixed(1)}`,
  );
  console.log(`runtime: npm start (bin/local.ts) as a child process, SF_DATA_DIR=${data}\n`);

  const receiver = await startReceiver();
  const runtime = await startRuntime(data, join(dir, 'local.json'));
  try {
    const api = apiClient(runtime.url, runtime.key);
    for (let i = 0; i < webhooks; i++) {
      await api('/webhooks', { url: `${receiver.url}/hooks/${i}`, events: ['email.sent', 'email.delivered'] });
    }
    const load = startLoad(api, rate);
    const owed = () => load.accepted * webhooks * EVENTS_PER_EMAIL - receiver.received();
    const samples: Sample[] = [];
    const takeSample = async (t: number) => {
      const memory = await runtime.memory();
      const sample = {
        t,
        accepted: load.accepted,
        received: receiver.received(),
        backlog: owed(),
        disk: size(data),
        ...memory,
      };
      samples.push(sample);
      return sample;
    };

    const started = Date.now();
    const seconds = () => Math.round((Date.now() - started) / 1000);
    const duration = minutes * 60;
    for (let n = 1; n * SAMPLE_SECONDS <= duration; n++) {
      await sleepUntil(started + n * SAMPLE_SECONDS * 1000);
      const sample = await takeSample(seconds());
      if (n % REPORT_EVERY === 0) console.log(describe(sample));
    }
    await load.stop();
    const sending = samples.at(-1) as Sample;

    const drainStart = Date.now();
    while (owed() > 0 && Date.now() - drainStart < DRAIN_SECONDS * 1000) await sleep(1000);
    const drained = await takeSample(seconds());
    console.log(`${describe(drained)}  (drain: ${owed() > 0 ? `still owed after ${DRAIN_SECONDS} s` : 'done'})`);

    await runtime.stop();
    const stopped = size(data);
    const live = await compactedSize(data);
    const demand = rate * webhooks * EVENTS_PER_EMAIL;
    report(samples, { sending, drained, stopped, live, duration, demand, load, receiver: receiver.stats() });
  } finally {
    await runtime.stop();
    receiver.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function describe(s: Sample): string {
  return (
    `${String(s.t).padStart(4)} s: ${s.accepted} emails accepted, ${s.received} deliveries (backlog ${s.backlog}), ` +
    `disk ${mb(s.disk)} MB, RSS ${mb(s.rss)} MB, heap ${mb(s.heap)} + ${mb(s.threadHeap)} MB (dynalite)`
  );
}

// ---------------------------------------------------------------------------------------------------------
// The runtime: `npm start` in a child, with soak-meter.mjs imported into it (and so into dynalite's thread).

interface Runtime {
  readonly url: string;
  readonly key: string;
  memory(): Promise<{ rss: number; heap: number; threadHeap: number }>;
  stop(): Promise<void>;
}

async function startRuntime(dataDir: string, stateFile: string): Promise<Runtime> {
  const env = {
    ...process.env,
    PORT: '0',
    SF_DATA_DIR: dataDir,
    SF_SEED: 'true',
    SF_LOCAL_STATE_FILE: stateFile,
    POWERTOOLS_LOG_LEVEL: 'WARN',
  };
  const child = fork(join(root, 'bin/local.ts'), [], {
    cwd: root,
    env,
    execArgv: ['--import', 'tsx', '--import', new URL('./soak-meter.mjs', import.meta.url).href],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const found: { url?: string; account?: string; key?: string } = {};
  const ready = new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the runtime exited (code ${code}) before it was ready`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      found.url ??= /listening on (\S+)/.exec(line)?.[1];
      found.account ??= /default account (acct_\S+)/.exec(line)?.[1];
      found.key ??= /^\s+(sf_test_\S+)/.exec(line)?.[1];
      if (found.url && found.account && found.key) resolve();
    });
  });
  await withTimeout(ready, 60_000, 'the runtime did not start within 60 s');
  // The seeded account is on the free plan (10 requests/s): the soak needs the scale plan's 500.
  const admin = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'bin/admin.ts', 'set-plan', '--account', found.account as string, '--plan', 'scale'],
    { cwd: root, env, encoding: 'utf8' },
  );
  if (admin.status !== 0) throw new Error(`admin set-plan failed: ${admin.stderr || admin.stdout}`);

  let stopping: Promise<void> | undefined;
  return {
    url: found.url as string,
    key: found.key as string,
    memory: () => memoryOf(child),
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}

function memoryOf(child: ChildProcess): Promise<{ rss: number; heap: number; threadHeap: number }> {
  const answer = new Promise<{ rss: number; heapUsed: number; threadHeap: number }>((resolve) => {
    const listener = (message: { type?: string; rss: number; heapUsed: number; threadHeap: number }) => {
      if (message.type !== 'sample') return;
      child.off('message', listener);
      resolve(message);
    };
    child.on('message', listener);
    child.send({ type: 'sample' });
  });
  return withTimeout(answer, 10_000, 'the runtime did not answer a memory sample within 10 s').then((m) => ({
    rss: m.rss,
    heap: m.heapUsed,
    threadHeap: m.threadHeap,
  }));
}

// ---------------------------------------------------------------------------------------------------------
// The load: `rate` emails a second, on a schedule kept by the clock (a slow tick catches up).

type Api = (path: string, body: unknown) => Promise<Response>;

function apiClient(url: string, key: string): Api {
  return async (path, body) => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
    return response;
  };
}

interface Load {
  accepted: number;
  failed: number;
  skipped: number;
  stop(): Promise<void>;
}

function startLoad(api: Api, rate: number): Load {
  const started = Date.now();
  const inFlight = new Set<Promise<void>>();
  let due = 0;
  const load: Load = {
    accepted: 0,
    failed: 0,
    skipped: 0,
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
    },
  };
  const sendOne = (n: number) => {
    const body = {
      from: 'soak@example.com',
      to: ['success@simulator.amazonses.com'],
      subject: `Soak ${n}`,
      html: `<p>Soak email ${n}: a paragraph of ordinary length, as a receipt or a notification would have.</p>`,
    };
    const sent = api('/emails', body).then(
      (response) => {
        load.accepted++;
        void response.arrayBuffer();
      },
      () => {
        load.failed++;
      },
    );
    const tracked = sent.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  };
  const timer = setInterval(() => {
    const target = Math.floor(((Date.now() - started) / 1000) * rate);
    for (; due < target; due++) {
      if (inFlight.size >= MAX_IN_FLIGHT) load.skipped++;
      else sendOne(due);
    }
  }, 20);
  return load;
}

// ---------------------------------------------------------------------------------------------------------
// The receiver: answers 200 at once; counts each (webhook, event) once.

interface Receiver {
  readonly server: Server;
  readonly url: string;
  received(): number;
  stats(): { requests: number; duplicates: number };
}

async function startReceiver(): Promise<Receiver> {
  const seen = new Set<string>();
  let requests = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
      seen.add(`${req.url} ${req.headers['webhook-id']}`);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => seen.size,
    stats: () => ({ requests, duplicates: requests - seen.size }),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Disk: the bytes of every file under the data directory, and its live size.

function size(path: string): number {
  let total = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    try {
      total += entry.isDirectory() ? size(child) : statSync(child).size;
    } catch {
      // LevelDB deleted it while we walked: it no longer counts.
    }
  }
  return total;
}

/**
 * The live data, by definition here: the data directory once LevelDB has compacted everything, that is what
 * the store's current items and index entries take with no replaced version, no log and no level-0 backlog
 * (snappy-compressed, as the running store keeps them). Opened with the same LevelDB dynalite uses, found
 * through dynalite so that it is the same package whatever npm hoisted.
 */
async function compactedSize(dataDir: string): Promise<number> {
  const requireFromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
  const { Level } = requireFromDynalite('level') as {
    Level: new (
      path: string,
      options: { keyEncoding: 'buffer' },
    ) => {
      open(): Promise<void>;
      compactRange(start: Buffer, end: Buffer): Promise<void>;
      close(): Promise<void>;
    };
  };
  const db = new Level(dataDir, { keyEncoding: 'buffer' });
  await db.open();
  await db.compactRange(Buffer.alloc(0), Buffer.alloc(64, 0xff));
  await db.close();
  return size(dataDir);
}

// ---------------------------------------------------------------------------------------------------------
// The report.

interface Outcome {
  readonly sending: Sample;
  readonly drained: Sample;
  readonly stopped: number;
  readonly live: number;
  readonly duration: number;
  /** Deliveries a second the load asks for. */
  readonly demand: number;
  readonly load: Load;
  readonly receiver: { requests: number; duplicates: number };
}

function report(samples: readonly Sample[], outcome: Outcome): void {
  const { sending, drained, stopped, live, duration, demand, load, receiver } = outcome;
  console.log('');
  printTable(
    ['t (s)', 'emails', 'deliveries', 'backlog', 'disk MB', 'RSS MB', 'heap MB', 'dynalite heap MB'],
    [...samples.filter((_, i) => (i + 1) % REPORT_EVERY === 0), drained].map((s) => [
      String(s.t),
      String(s.accepted),
      String(s.received),
      String(s.backlog),
      mb(s.disk),
      mb(s.rss),
      mb(s.heap),
      mb(s.threadHeap),
    ]),
    0,
  );
  const secondHalf = samples.filter((s) => s.t > duration / 2);
  const slope = rssSlope(secondHalf);
  const diskRatio = drained.disk / live;
  const peak = Math.max(...samples.map((s) => s.disk));
  console.log('');
  console.log(
    `emails: ${load.accepted} accepted, ${load.failed} refused or failed, ${load.skipped} skipped ` +
      `(${MAX_IN_FLIGHT} already in flight); webhook requests: ${receiver.requests} ` +
      `(${receiver.duplicates} repeats); backlog at the end of the sending ${sending.backlog}, after the drain ` +
      `${drained.backlog}`,
  );
  console.log(
    `disk: ${mb(drained.disk)} MB at the end (peak ${mb(peak)} MB), ${mb(stopped)} MB once stopped, ` +
      `${mb(live)} MB live (compacted)`,
  );
  console.log(
    `goal "disk within ${DISK_GOAL}× of the live data": ${diskRatio.toFixed(2)}× → ` +
      `${diskRatio <= DISK_GOAL ? 'met' : 'NOT met'}`,
  );
  console.log(
    `goal "RSS flat after warm-up" (slope over the second half ≤ ${RSS_FLAT_MB_PER_MIN} MB/min): ` +
      `${slope.toFixed(1)} MB/min, ${mb(secondHalf[0]?.rss ?? 0)} → ${mb(sending.rss)} MB → ` +
      `${slope <= RSS_FLAT_MB_PER_MIN ? 'met' : 'NOT met'}`,
  );
  // A runtime that falls behind holds its backlog (queued messages) in memory: RSS cannot be flat then.
  const grew = sending.backlog - (secondHalf[0]?.backlog ?? 0);
  if (grew > demand * 5) {
    console.log(`  (the backlog grew by ${grew} deliveries over the second half: the runtime did not keep up)`);
  }
}

/** Least-squares slope of RSS over time, in MB per minute. */
function rssSlope(samples: readonly Sample[]): number {
  if (samples.length < 2) return Number.NaN;
  const mean = (f: (s: Sample) => number) => samples.reduce((sum, s) => sum + f(s), 0) / samples.length;
  const t = mean((s) => s.t);
  const r = mean((s) => s.rss);
  const covariance = mean((s) => (s.t - t) * (s.rss - r));
  const variance = mean((s) => (s.t - t) ** 2);
  return (covariance / variance / MB) * 60;
}

const mb = (bytes: number) => (bytes / MB).toFixed(0);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sleepUntil = (at: number) => sleep(Math.max(0, at - Date.now()));

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
