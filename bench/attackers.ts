// `npm run bench:attackers`: what one tenant's floods do to another's API latency. Three processes: the local
// runtime alone in one (bench/attackers-runtime.ts, data on disk, as `npm start`) with two scale-plan tenants; tenant
// A's attacks in another (bench/attackers-attack.ts); this one holds only tenant B's client, so B's round trips
// never include the attacker's own work (building 16k-part messages, a thousand poll sockets, 10 MB transfers).
// B calls its API in a closed loop (GET /v1/usage, POST /v1/emails, GET /v1/emails/:id, a 30 ms pause between
// calls), first alone, then while A runs each scenario in turn; between phases the runtime is let settle (A's
// requests answered, its queues and the inbound spool empty: what one attack left is not paid for by the next).
// Prints B's p50/p99/max per phase, A's answers by status, this process's event-loop delay (that it measured
// cleanly) and the runtime's, and the settle before each phase; the goal is B's p99 ≤ 250 ms under every one.
//
// Env: BENCH_WINDOW_MS (each phase's measuring window, default 8000), BENCH_ONLY (comma-separated words of
// scenario names), BENCH_ROOT (the checkout whose runtime runs: an older release's code, for before/after figures),
// BENCH_POLLS (default 1000), BENCH_ATTACHMENT_MB (default 10), BENCH_ATTACHMENT_SENDERS (default 20),
// BENCH_RUNTIME_NODE_ARGS (extra node flags for the runtime's process, e.g. --cpu-prof).

import { type ChildProcess, fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { type Client, client } from './attackers-client';
import { percentile, positiveInt, printTable } from './report';

const WINDOW_MS = positiveInt('BENCH_WINDOW_MS', 8_000);
const GOAL_MS = 250;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Measured {
  latencies: number[];
  failures: number;
  /** This process's event-loop delay over the window, ms: B's round trips are clean when it stays small. */
  loop: { p99: number; max: number };
}

/** B's closed loop over one window: every call's round trip, in ms, and this loop's delay meanwhile. */
async function measure(b: Client): Promise<Measured> {
  const latencies: number[] = [];
  let failures = 0;
  let last: string | undefined;
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
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
  delay.disable();
  // The histogram's resolution (10 ms) is added to every sample: what is left is the delay itself.
  const ms = (ns: number) => Math.max(0, ns / 1e6 - 10);
  return { latencies, failures, loop: { p99: ms(delay.percentile(99)), max: ms(delay.max) } };
}

interface Runtime {
  child: ChildProcess;
  url: string;
  smtpPort: number;
  a: string;
  b: string;
  aLive?: string;
  /** Sends a command line (bench/attackers-runtime.ts) and resolves with its one JSON answer. */
  command<T>(line: 'settle' | 'loop'): Promise<T>;
}

async function startRuntime(): Promise<Runtime> {
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
  // The first JSON line says where it listens, the next ones answer commands in turn; anything else it prints
  // goes to stderr (never left unread).
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const answers: ((line: string) => void)[] = [];
  return new Promise((resolve, reject) => {
    let ready = false;
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return void console.error(line);
      if (ready) return void answers.shift()?.(line);
      ready = true;
      const started = JSON.parse(line) as Omit<Runtime, 'child' | 'command'> & { root: string };
      console.error(`runtime: ${started.root} at ${started.url}`);
      resolve({
        child,
        ...started,
        command: <T>(command: string) =>
          new Promise<T>((answered) => {
            answers.push((line) => answered(Object.values(JSON.parse(line) as Record<string, T>)[0] as T));
            child.stdin?.write(`${command}\n`);
          }),
      });
    });
    child.once('exit', () => reject(new Error('the runtime exited before it was ready')));
  });
}

interface Attacker {
  scenarios: string[];
  /** Sends a command (bench/attackers-attack.ts) and resolves with its answer's value. */
  command<T>(message: object): Promise<T>;
  stop(): Promise<void>;
}

/** Tenant A's process: the scenarios run there, never on this event loop. */
async function startAttacker(runtime: Runtime): Promise<Attacker> {
  const child = fork(join(import.meta.dirname, 'attackers-attack.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting: ((message: Record<string, unknown>) => void)[] = [];
  child.on('message', (message: Record<string, unknown>) => waiting.shift()?.(message));
  const command = <T>(message: object) =>
    new Promise<T>((resolve, reject) => {
      waiting.push((answer) =>
        'failed' in answer
          ? reject(new Error(`attacker: ${String(answer.failed)}`))
          : resolve(Object.values(answer)[0] as T),
      );
      child.send(message);
    });
  const scenarios = await command<string[]>({
    init: {
      url: runtime.url,
      smtpPort: runtime.smtpPort,
      a: runtime.a,
      ...(runtime.aLive ? { aLive: runtime.aLive } : {}),
    },
  });
  return {
    scenarios,
    command,
    async stop() {
      child.disconnect();
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

/** Waits until the runtime is idle: how long that took, and what it was busy with. */
async function settle(runtime: Runtime): Promise<{ ms: number; pending: Record<string, number> }> {
  const settled = await runtime.command<{ ms: number; pending: Record<string, number> }>('settle');
  console.error(`${new Date().toISOString()} settled in ${settled.ms} ms (${listed(settled.pending)})`);
  return settled;
}

/** `{sends: 812, events: 3}` as `sends 812, events 3`; `-` for nothing. */
const listed = (counts: Record<string, number>) =>
  Object.entries(counts)
    .map(([name, n]) => `${name} ${n}`)
    .join(', ') || '-';

async function main(): Promise<void> {
  const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim().toLowerCase());
  const runtime = await startRuntime();
  const attacker = await startAttacker(runtime);
  const b = client(runtime.url, runtime.b);
  const rows: string[][] = [];
  let met = true;
  try {
    await measure(b); // warm-up
    /**
     * One row: the attack's set-up, the runtime let settle, the attack started, B's window measured (A's answers
     * counted within it), the attack stopped.
     */
    const phase = async (name: string, attack?: string) => {
      // What the previous phase left is worked off first, and again after this attack's set-up.
      const settles = [await settle(runtime)];
      if (attack) {
        await attacker.command({ prepare: attack });
        settles.push(await settle(runtime));
      }
      if (attack) await attacker.command({ start: attack });
      await runtime.command('loop'); // from the window's start
      if (attack) await attacker.command({ window: true });
      const m = await measure(b);
      const runtimeLoop = await runtime.command<{ p99: number; max: number }>('loop');
      const answers = attack ? await attacker.command<[string, number][]>({ stop: true }) : [];
      const p99 = percentile(m.latencies, 99);
      met &&= p99 <= GOAL_MS;
      rows.push([
        name,
        String(m.latencies.length),
        percentile(m.latencies, 50).toFixed(0),
        p99.toFixed(0),
        Math.max(...m.latencies).toFixed(0),
        String(m.failures),
        `${m.loop.p99.toFixed(0)} / ${m.loop.max.toFixed(0)}`,
        `${runtimeLoop.p99} / ${runtimeLoop.max}`,
        settles.map((settled) => `${(settled.ms / 1000).toFixed(1)} s (${listed(settled.pending)})`).join(' + '),
        answers.map(([status, n]) => `${status}×${n}`).join(' '),
      ]);
      console.error(`${new Date().toISOString()} ${name}: done`);
    };
    await phase('B alone');
    for (const scenario of attacker.scenarios) {
      if (only && !only.some((word) => scenario.toLowerCase().includes(word))) continue;
      await phase(scenario, scenario);
    }
    await phase('B alone, after');
    console.log(
      `\nTenant B's API round trips (GET /v1/usage, POST /v1/emails, GET /v1/emails/:id in turn), ${WINDOW_MS} ms per phase, ms;` +
        "\nloop: event-loop delay p99 / max (ms) of this (B's) process and of the runtime's over the window;" +
        '\nsettled: the wait before the window until the runtime was idle (what was pending when it began):',
    );
    printTable(
      [
        'phase',
        'calls',
        'p50',
        'p99',
        'max',
        'B non-200',
        'B loop',
        'runtime loop',
        'settled',
        "A's answers in the window",
      ],
      rows,
    );
    console.log(`\nGoal: B's p99 ≤ ${GOAL_MS} ms under every scenario: ${met ? 'met' : 'NOT met'}`);
  } finally {
    await attacker.stop();
    runtime.child.stdin?.end();
    await once(runtime.child, 'exit');
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error, (error as Error).cause ?? '');
    process.exit(1);
  },
);
