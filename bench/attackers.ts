// `npm run bench:attackers`: what one tenant's floods do to another's API latency. The local runtime runs alone in
// a child process (bench/attackers-runtime.ts, data on disk, as `npm start`) with two scale-plan tenants; this
// process is the clients. Tenant B calls its API in a closed loop (GET /v1/usage, POST /v1/emails, GET
// /v1/emails/:id, a 30 ms pause between calls), first alone, then while tenant A runs each scenario in turn.
// Prints B's p50/p99/max per phase and A's answers by status; the goal is B's p99 ≤ 250 ms under every one.
//
// Scenarios are a list (SCENARIOS below): each starts its attack and returns a stop function: A's listen flood, 10 MB
// attachments, filtered lists, 20 held SMTP connections, and 16k-part messages to A's own receiving domain.
// Env: BENCH_WINDOW_MS (each phase's measuring window, default 8000), BENCH_ONLY (comma-separated scenario names),
// BENCH_ROOT (the checkout whose runtime runs: an older release's code, for before/after figures),
// BENCH_POLLS (default 1000), BENCH_ATTACHMENT_MB (default 10), BENCH_ATTACHMENT_SENDERS (default 20),
// BENCH_RUNTIME_NODE_ARGS (extra node flags for the runtime's process, e.g. --cpu-prof).

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Agent, fetch as undiciFetch } from 'undici';
import { makeReceivingDomain, sendHostileMessage } from './hostile-mail';
import { percentile, positiveInt, printTable } from './report';

const WINDOW_MS = positiveInt('BENCH_WINDOW_MS', 8_000);
const POLLS = positiveInt('BENCH_POLLS', 1_000);
const ATTACHMENT_MB = positiveInt('BENCH_ATTACHMENT_MB', 10);
const ATTACHMENT_SENDERS = positiveInt('BENCH_ATTACHMENT_SENDERS', 20);
const LIST_CALLERS = 20;
const GOAL_MS = 250;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Client {
  call(path: string, init?: { method?: string; body?: unknown; signal?: AbortSignal }): Promise<Response>;
}

/** A tenant's client: its own connection pool, so A's thousand sockets never queue B's requests here. */
function client(url: string, key: string): Client {
  const dispatcher = new Agent({ connections: null, keepAliveTimeout: 30_000 });
  return {
    call: (path, init = {}) =>
      undiciFetch(`${url}${path}`, {
        method: init.method ?? 'GET',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        dispatcher,
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
        ...(init.signal ? { signal: init.signal } : {}),
      }) as unknown as Promise<Response>,
  };
}

/** What a scenario's attack is given. */
interface Arena {
  readonly a: Client;
  /** A's live-mode client (receiving is live mode's); absent for an older runtime that prints none. */
  readonly aLive?: Client;
  readonly url: string;
  readonly smtpPort: number;
  /** A's answers by status (429s included): shows what the runtime refused. */
  readonly statuses: Map<string, number>;
}

interface Scenario {
  readonly name: string;
  /** Starts the attack (returns once it is in effect) and returns the function that stops it; absent: not built here. */
  readonly start?: (arena: Arena) => Promise<() => Promise<void>>;
  /** Why it has no attack yet. */
  readonly pending?: string;
}

const count = (arena: Arena, status: number | string) =>
  arena.statuses.set(String(status), (arena.statuses.get(String(status)) ?? 0) + 1);

/** Runs `round` in `workers` loops until stopped; each loop's answers are counted by status. */
function loops(arena: Arena, workers: number, round: (signal: AbortSignal, i: number) => Promise<void>) {
  const stop = new AbortController();
  const running = Array.from({ length: workers }, async (_, i) => {
    while (!stop.signal.aborted) await round(stop.signal, i).catch(() => count(arena, 'error'));
  });
  return async () => {
    stop.abort();
    await Promise.allSettled(running);
  };
}

/** A `Retry-After` honoured, as a client would (at most a minute: a quota's runs to midnight); else 1 s. */
async function backOff(res: Response, signal: AbortSignal): Promise<void> {
  const seconds = Number(res.headers.get('retry-after')) || 1;
  await new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.min(seconds, 60) * 1000);
    signal.addEventListener('abort', () => resolve(clearTimeout(timer)), { once: true });
  });
}

const listenFlood: Scenario = {
  name: `A: ${POLLS} listen polls`,
  async start(arena) {
    const sessions: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await arena.a.call('/listen-sessions', { method: 'POST', body: {} });
      if (res.status === 201) sessions.push(((await res.json()) as { id: string }).id);
    }
    if (!sessions.length) throw new Error('A could not open a listen session');
    const stop = loops(arena, POLLS, async (signal, i) => {
      const res = await arena.a.call(`/listen-sessions/${sessions[i % sessions.length]}/events?wait=20`, { signal });
      count(arena, res.status);
      await res.arrayBuffer();
      if (res.status !== 200) await backOff(res, signal);
    });
    await sleep(3_000); // the polls open (A's rate limit spreads them over 2 s), then wait
    return stop;
  },
};

const attachments: Scenario = {
  name: `A: ${ATTACHMENT_MB} MB attachments ×${ATTACHMENT_SENDERS}`,
  async start(arena) {
    const file = Buffer.alloc(ATTACHMENT_MB * 1024 * 1024, 'x');
    const files = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/pdf', 'Content-Length': file.length }).end(file);
    });
    files.listen(0, '127.0.0.1');
    await once(files, 'listening');
    const base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
    let n = 0;
    const stop = loops(arena, ATTACHMENT_SENDERS, async (signal) => {
      const res = await arena.a.call('/emails', {
        method: 'POST',
        signal,
        body: {
          from: 'a@acme.test',
          to: 'success@simulator.amazonses.com',
          subject: 'Report',
          text: 'Attached.',
          attachments: [{ filename: 'report.pdf', path: `${base}/report-${n++}.pdf` }],
        },
      });
      count(arena, res.status);
      await res.arrayBuffer();
      if (res.status === 429) await backOff(res, signal);
    });
    await sleep(1_000);
    return async () => {
      await stop();
      files.closeAllConnections();
      files.close();
    };
  },
};

const filteredLists: Scenario = {
  name: `A: ${LIST_CALLERS} filtered email lists`,
  async start(arena) {
    // A's 1,000 emails (10 batches of 100), then lists filtered as the attacker did: a status that is read
    // from the newest emails (queued), and a recipient.
    for (let i = 0; i < 10; i++) {
      const res = await arena.a.call('/emails/batch', {
        method: 'POST',
        body: Array.from({ length: 100 }, (_, j) => ({
          from: 'a@acme.test',
          to: `a${i}-${j}@example.com`,
          subject: 'Receipt',
          text: 'Thanks',
        })),
      });
      if (res.status !== 200) throw new Error(`A's batch: ${res.status} ${await res.text()}`);
    }
    await sleep(2_000); // sent and delivered (the simulator at once)
    const queries = ['/emails?status=queued&limit=100', '/emails?to=nobody@example.com&limit=100'];
    const stop = loops(arena, LIST_CALLERS, async (signal, i) => {
      const res = await arena.a.call(queries[i % queries.length] as string, { signal });
      count(arena, res.status);
      await res.arrayBuffer();
      if (res.status === 429) await backOff(res, signal);
    });
    await sleep(500);
    return stop;
  },
};

/** A holds 20 SMTP connections open (EHLO, then a NOOP every 5 s), as the report did; the runtime caps them. */
const heldSmtp: Scenario = {
  name: 'A: 20 held SMTP connections',
  async start(arena) {
    const sockets = Array.from({ length: 20 }, () => {
      const socket = connect(arena.smtpPort, '127.0.0.1');
      socket.on('error', () => count(arena, 'smtp error'));
      socket.on('data', (chunk: Buffer) => {
        const code = chunk.toString('latin1').slice(0, 3);
        if (code === '421') count(arena, 'smtp 421');
      });
      socket.write('EHLO attacker.example\r\n');
      return socket;
    });
    const noop = setInterval(() => {
      for (const socket of sockets) if (!socket.destroyed) socket.write('NOOP\r\n');
    }, 5_000);
    await sleep(1_000);
    return async () => {
      clearInterval(noop);
      for (const socket of sockets) socket.destroy();
    };
  },
};

/** A mails its own receiving domain a message of 16,000 parts, again and again: the parse must not freeze B. */
const hostileInbound: Scenario = {
  name: 'A: hostile inbound (16k parts, repeated)',
  async start(arena) {
    const domain = `a-${Date.now()}.attacker.example`;
    const live = arena.aLive;
    if (!live) throw new Error('the runtime gave A no live key');
    await makeReceivingDomain(
      (path, init) => live.call(path, { method: init.method, ...(init.body ? { body: JSON.parse(init.body) } : {}) }),
      domain,
    );
    let stopped = false;
    const sending = (async () => {
      while (!stopped) count(arena, (await sendHostileMessage(arena.smtpPort, 16_000, domain)).slice(0, 8));
    })();
    await sleep(500);
    return async () => {
      stopped = true;
      await sending;
    };
  },
};

const SCENARIOS: readonly Scenario[] = [listenFlood, attachments, filteredLists, heldSmtp, hostileInbound];

/** B's closed loop over one window: every call's round trip, in ms. */
async function measure(b: Client): Promise<{ latencies: number[]; failures: number }> {
  const latencies: number[] = [];
  let failures = 0;
  let last: string | undefined;
  const end = performance.now() + WINDOW_MS;
  for (let n = 0; performance.now() < end; n++) {
    const started = performance.now();
    const step = n % 3;
    const res =
      step === 0
        ? await b.call('/usage')
        : step === 1
          ? await b.call('/emails', {
              method: 'POST',
              body: { from: 'b@acme.test', to: `b${n}@example.com`, subject: 'Receipt', text: 'Thanks' },
            })
          : await b.call(last ? `/emails/${last}` : '/usage');
    const body = (await res.json()) as { id?: string };
    latencies.push(performance.now() - started);
    if (res.status !== 200) failures++;
    if (step === 1 && body.id) last = body.id;
    await sleep(30);
  }
  return { latencies, failures };
}

async function startRuntime(): Promise<{
  child: ChildProcess;
  url: string;
  smtpPort: number;
  a: string;
  b: string;
  aLive?: string;
}> {
  // BENCH_RUNTIME_NODE_ARGS: e.g. --cpu-prof, to see where the runtime spends an attack.
  const nodeArgs = process.env.BENCH_RUNTIME_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(
    process.execPath,
    [...nodeArgs, '--import', 'tsx', join(import.meta.dirname, 'attackers-runtime.ts')],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: process.env,
    },
  );
  // The first JSON line says where it listens; anything else it prints goes to stderr (never left unread).
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  return new Promise((resolve, reject) => {
    let ready = false;
    lines.on('line', (line) => {
      if (ready || !line.startsWith('{')) return void console.error(line);
      ready = true;
      const started = JSON.parse(line) as {
        url: string;
        smtpPort: number;
        a: string;
        b: string;
        aLive?: string;
        root: string;
      };
      console.error(`runtime: ${started.root} at ${started.url}`);
      resolve({ child, ...started });
    });
    child.once('exit', () => reject(new Error('the runtime exited before it was ready')));
  });
}

async function main(): Promise<void> {
  const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim().toLowerCase());
  const runtime = await startRuntime();
  const a = client(runtime.url, runtime.a);
  const b = client(runtime.url, runtime.b);
  const aLive = runtime.aLive ? client(runtime.url, runtime.aLive) : undefined;
  const rows: string[][] = [];
  let met = true;
  try {
    await measure(b); // warm-up
    const record = (phase: string, m: { latencies: number[]; failures: number }, answers = '') => {
      const p99 = percentile(m.latencies, 99);
      met &&= p99 <= GOAL_MS;
      rows.push([
        phase,
        String(m.latencies.length),
        percentile(m.latencies, 50).toFixed(0),
        p99.toFixed(0),
        Math.max(...m.latencies).toFixed(0),
        String(m.failures),
        answers,
      ]);
      console.error(`${phase}: done`);
    };
    record('B alone', await measure(b));
    for (const scenario of SCENARIOS) {
      if (only && !only.some((name) => scenario.name.toLowerCase().includes(name))) continue;
      if (!scenario.start) {
        rows.push([scenario.name, '-', '-', '-', '-', '-', `not on this branch: ${scenario.pending}`]);
        continue;
      }
      const arena: Arena = {
        a,
        ...(aLive ? { aLive } : {}),
        url: runtime.url,
        smtpPort: runtime.smtpPort,
        statuses: new Map(),
      };
      const stop = await scenario.start(arena);
      arena.statuses.clear(); // count A's answers within B's window only
      const measured = await measure(b);
      const answers = [...arena.statuses].map(([status, n]) => `${status}×${n}`).join(' ');
      await stop();
      record(scenario.name, measured, answers);
      await sleep(1_000); // what the attack left in flight settles
    }
    console.log(
      `\nTenant B's API round trips (GET /v1/usage, POST /v1/emails, GET /v1/emails/:id in turn), ${WINDOW_MS} ms per phase, ms:`,
    );
    printTable(['phase', 'calls', 'p50', 'p99', 'max', 'B non-200', "A's answers in the window"], rows);
    console.log(`\nGoal: B's p99 ≤ ${GOAL_MS} ms under every scenario: ${met ? 'met' : 'NOT met'}`);
  } finally {
    runtime.child.stdin?.end();
    await once(runtime.child, 'exit');
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
