// The runtime side of `npm run bench:attackers`: the local runtime alone in its own process (as `npm start`,
// data on disk), with two scale-plan tenants A (attacker) and B (victim), each with a test key (A also a live one,
// for its receiving domain); prints one JSON line {url, smtpPort, a, b, aLive} and runs until stdin closes.
// Commands on stdin, one a line, each answered by one JSON line on stdout:
//   settle → {settled: {ms, pending}}: waits (at most SETTLE_MAX_MS) until the runtime is idle: A's requests
//            answered, no queue message ready or in flight, the inbound spool empty; `pending` is what it waited
//            for when it started (an attack's aftermath the next phase would otherwise pay for);
//   loop   → {loop: {p50, p99, max}}: this process's event-loop delay (ms) since the last `loop`.
// BENCH_ROOT: the checkout whose code runs (default: this one), so the same bench measures an older release's
// code: docs/benchmarks.md, "Attackers (`bench:attackers`)".
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const root = resolve(process.env.BENCH_ROOT ?? join(import.meta.dirname, '..'));
const load = <T>(path: string): Promise<T> => import(pathToFileURL(join(root, path)).href) as Promise<T>;

type RuntimeModule = typeof import('../lambdas/runtime/local/runtime');
type ConfigModule = typeof import('../lambdas/runtime/config');
type AccountsModule = typeof import('../lambdas/app/accounts');
type PlansModule = typeof import('../lambdas/adapters/local/usage-plans');

const { startLocalRuntime } = await load<RuntimeModule>('lambdas/runtime/local/runtime.ts');
const { loadConfig, localTableDefaults } = await load<ConfigModule>('lambdas/runtime/config.ts');
const { createAccount, createAccountKey } = await load<AccountsModule>('lambdas/app/accounts.ts');
const { noUsagePlans } = await load<PlansModule>('lambdas/adapters/local/usage-plans.ts');

const dataDir = mkdtempSync(join(tmpdir(), 'sendflow-attackers-'));
const config = loadConfig(
  {
    PORT: '0',
    SF_SMTP_PORT: '0',
    SF_SEED: 'false',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    SF_DATA_DIR: dataDir,
    SF_SIMULATOR_STEP_SECONDS: '0',
    SF_IP_RATE_LIMIT: '100000',
    // A's receiving domain (the hostile-inbound scenario) is verified at once.
    SF_DOMAIN_VERIFY_SECONDS: '0',
    // A's `path` attachments come from the bench's loopback file server.
    SF_ALLOW_PRIVATE_ATTACHMENT_URLS: 'true',
  },
  localTableDefaults(),
);
const runtime = await startLocalRuntime(config);
const deps = { ...runtime.services, usagePlans: noUsagePlans };
const plan = (process.env.BENCH_PLAN ?? 'scale') as 'scale';
const accountA = await createAccount(deps, plan);
const accountB = await createAccount(deps, plan);
const keyOf = async (accountId: string, mode: 'test' | 'live') =>
  (await createAccountKey(deps, { accountId, mode })).secret;
const a = await keyOf(accountA.id, 'test');
const b = await keyOf(accountB.id, 'test');
// Receiving is live mode's: A's live key makes its receiving domain.
const aLive = await keyOf(accountA.id, 'live');
console.log(JSON.stringify({ url: runtime.url, smtpPort: runtime.smtpPort, a, b, aLive, root }));

const SETTLE_MAX_MS = 120_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What keeps the runtime busy now, by name (empty: idle). Parts an older release lacks count as idle. */
function busy(): Record<string, number> {
  const pending: Record<string, number> = {};
  const requests = runtime.accountSlots?.inFlight(accountA.id) ?? 0;
  if (requests > 0) pending["A's requests"] = requests;
  // A queue's depth: its messages ready, delayed (a retry's timer) or in flight.
  const queues = (runtime.queues ?? {}) as Record<string, { depth: number; settled(): Promise<void> } | undefined>;
  for (const [name, queue] of Object.entries(queues)) if (queue && queue.depth > 0) pending[name] = queue.depth;
  const spooled = runtime.inbound?.pending() ?? 0;
  if (spooled > 0) pending.inbound = spooled;
  return pending;
}

async function settle(): Promise<{ ms: number; pending: Record<string, number> }> {
  const started = performance.now();
  const pending = busy();
  const queues = Object.values((runtime.queues ?? {}) as Record<string, { settled(): Promise<void> }>);
  const deadline = started + SETTLE_MAX_MS;
  // Idle twice in a row, 200 ms apart: a batch that ends may publish the next step's message.
  for (let quiet = 0; quiet < 2 && performance.now() < deadline; await sleep(200)) {
    quiet = (await idleNow(queues)) ? quiet + 1 : 0;
  }
  return { ms: Math.round(performance.now() - started), pending };
}

/**
 * Waits for the queues to have nothing ready or in flight (settled() polls every 10 ms while they do); true when
 * nothing had to be waited for: no queue busy, A's requests answered, the spool empty.
 */
async function idleNow(queues: readonly { settled(): Promise<void> }[]): Promise<boolean> {
  const started = performance.now();
  await Promise.all(queues.map((queue) => queue.settled()));
  const waited = performance.now() - started > 5;
  const requests = runtime.accountSlots?.inFlight(accountA.id) ?? 0;
  return !waited && requests === 0 && (runtime.inbound?.pending() ?? 0) === 0;
}

const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
// The histogram's resolution (10 ms) is in every sample: what is left is the delay itself.
const ms = (ns: number) => Math.max(0, Math.round(ns / 1e6 - 10));
const commands = createInterface({ input: process.stdin });
commands.on('line', (line) => {
  if (line === 'settle') void settle().then((settled) => console.log(JSON.stringify({ settled })));
  if (line === 'loop') {
    console.log(
      JSON.stringify({ loop: { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) } }),
    );
    loop.reset();
  }
});

const stop = async () => {
  await runtime.stop();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
};
commands.on('close', () => void stop());
process.on('SIGTERM', () => void stop());
