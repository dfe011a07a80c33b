// `npm run bench:isolation`: does one tenant's hanging endpoint delay another tenant's deliveries? The local
// runtime (data on disk, as `npm start`) with two tenants: B's endpoint answers at once; A's never answers
// (each attempt waits for the 10 s time-out). B sends emails one by one and we time each one from POST to the
// arrival of its email.sent delivery: first alone, then while A has BENCH_FLOOD deliveries hanging. Prints p50
// and p99 of both and the p99 rise (the goal: at most 250 ms). Env: BENCH_EMAILS (default 60, B's emails per
// phase), BENCH_FLOOD (default 200), BENCH_GAP_MS (default 50, between B's emails).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LocalRuntime, startLocalRuntime } from '../lambdas/runtime/local/runtime';
import { benchConfig, percentile, positiveInt, printTable } from './report';
import { endpoint, tenant } from './tenants';

const EMAILS = positiveInt('BENCH_EMAILS', 60);
const FLOOD = positiveInt('BENCH_FLOOD', 200);
const GAP_MS = positiveInt('BENCH_GAP_MS', 50);
const GOAL_MS = 250;

const email = (to: string) => ({ from: 'a@acme.test', to, subject: 'Receipt', text: 'Thanks' });

/** B's emails one by one: POST start → its delivery's arrival, in ms. */
async function measure(runtime: LocalRuntime, headers: Record<string, string>, arrivals: Map<string, number>) {
  const latencies: number[] = [];
  for (let i = 0; i < EMAILS; i += 1) {
    const started = performance.now();
    const res = await fetch(`${runtime.url}/emails`, {
      method: 'POST',
      headers,
      body: JSON.stringify(email(`b${i}@example.com`)),
    });
    const { id } = (await res.json()) as { id: string };
    while (!arrivals.has(id)) await new Promise((r) => setTimeout(r, 1));
    latencies.push((arrivals.get(id) as number) - started);
    await new Promise((r) => setTimeout(r, GAP_MS));
  }
  return latencies;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sendflow-isolation-'));
  const config = benchConfig({
    SF_DATA_DIR: dataDir,
    SF_SIMULATOR_STEP_SECONDS: '0',
    SF_IP_RATE_LIMIT: '100000',
  });
  const runtime = await startLocalRuntime(config);
  const healthy = await endpoint('ok');
  const hanging = await endpoint('hang');
  try {
    const b = (await tenant(runtime, healthy.url)).headers;
    const a = (await tenant(runtime, hanging.url)).headers;
    await measure(runtime, b, healthy.arrivals); // warm-up
    const alone = await measure(runtime, b, healthy.arrivals);

    for (let i = 0; i < FLOOD; i += 100) {
      const batch = Array.from({ length: Math.min(100, FLOOD - i) }, (_, j) => email(`a${i + j}@example.com`));
      const res = await fetch(`${runtime.url}/emails/batch`, {
        method: 'POST',
        headers: a,
        body: JSON.stringify(batch),
      });
      if (res.status !== 200) throw new Error(`flood: ${res.status} ${await res.text()}`);
    }
    // Measure once A's emails are sent and fanned out: what remains is A's 200 deliveries, hanging or queued.
    await runtime.queues.sends.settled();
    await runtime.queues.events.idle();
    while (hanging.held.length < 4) await new Promise((r) => setTimeout(r, 5));
    const flooded = await measure(runtime, b, healthy.arrivals);

    const row = (name: string, values: number[]) => [
      name,
      percentile(values, 50).toFixed(1),
      percentile(values, 99).toFixed(1),
      Math.max(...values).toFixed(1),
    ];
    console.log(`\nTenant B's first delivery, POST → arrival, ${EMAILS} emails per phase (ms); A floods ${FLOOD}:`);
    printTable(['phase', 'p50', 'p99', 'max'], [row('alone', alone), row(`A has ${FLOOD} hanging`, flooded)]);
    const rise = percentile(flooded, 99) - percentile(alone, 99);
    console.log(
      `\np99 rise under the flood: ${rise.toFixed(1)} ms (goal ≤ ${GOAL_MS} ms): ${rise <= GOAL_MS ? 'met' : 'NOT met'}`,
    );
    console.log(`A's requests held by its endpoint when B finished: ${hanging.held.length}`);
  } finally {
    healthy.close();
    hanging.close();
    await runtime.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
