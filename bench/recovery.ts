// `npm run bench:recovery`: how a recovery job treats an endpoint coming back from an outage. The local runtime
// (data on disk, as `npm start`) with one webhook whose endpoint answers 503 until BENCH_DELIVERIES deliveries
// have failed (5 attempts each); then it answers 200 after BENCH_ANSWER_MS, and one job recovers them all.
// Prints how long the job took, the deliveries recovered a second, the most requests the endpoint held at once
// and the most it received in any one second (the pace promises at most 5 and 10), and the POSTs per delivery.
// Env: BENCH_DELIVERIES (default 200), BENCH_ANSWER_MS (default 20).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noUsagePlans } from '../lambdas/adapters/local/usage-plans';
import { createAccount, createAccountKey } from '../lambdas/app/accounts';
import { RECOVERY_PACE } from '../lambdas/domain/webhooks/recovery';
import { startLocalRuntime } from '../lambdas/runtime/local/runtime';
import { benchConfig, positiveInt, printTable } from './report';

const DELIVERIES = positiveInt('BENCH_DELIVERIES', 200);
const ANSWER_MS = positiveInt('BENCH_ANSWER_MS', 20);

/** The endpoint: down (503) or up (200 after ANSWER_MS); it notes each request's arrival and webhook-id. */
async function endpoint() {
  const state = { up: false, inFlight: 0, maxInFlight: 0, arrivals: [] as { at: number; id: string }[] };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (!state.up) return void res.writeHead(503).end();
      state.arrivals.push({ at: performance.now(), id: String(req.headers['webhook-id']) });
      state.inFlight += 1;
      state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
      setTimeout(() => {
        state.inFlight -= 1;
        res.writeHead(200).end('ok');
      }, ANSWER_MS);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { state, url, close: () => server.close() };
}

/** The most arrivals within any one-second window. */
function busiestSecond(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < sorted.length; i += 1) {
    while ((sorted[i] as number) - (sorted[j] as number) >= 1000) j += 1;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sendflow-recovery-'));
  const config = benchConfig({
    SF_DATA_DIR: dataDir,
    SF_SIMULATOR_STEP_SECONDS: '0',
    SF_IP_RATE_LIMIT: '100000',
    SF_RETRY_DELAYS: '0.05,0.05,0.05,0.05',
  });
  const runtime = await startLocalRuntime(config);
  const hook = await endpoint();
  try {
    const deps = { ...runtime.services, usagePlans: noUsagePlans };
    const account = await createAccount(deps, 'scale');
    const { secret } = await createAccountKey(deps, { accountId: account.id, mode: 'test' });
    const headers = { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${runtime.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, unknown>;
    };
    const { id: webhookId } = await post('/webhooks', { url: hook.url, events: ['email.sent'] });
    const since = new Date(Date.now() - 60_000).toISOString();
    for (let i = 0; i < DELIVERIES; i += 100) {
      const count = Math.min(100, DELIVERIES - i);
      await post(
        '/emails/batch',
        Array.from({ length: count }, (_, j) => ({
          from: 'a@acme.test',
          to: `u${i + j}@example.com`,
          subject: 's',
          text: 't',
        })),
      );
    }
    await runtime.queues.sends.settled();
    await runtime.queues.events.idle();
    await runtime.queues.deliveries.idle();

    hook.state.up = true;
    const started = performance.now();
    const job = await post(`/webhooks/${webhookId}/recoveries`, { since, status: 'failed' });
    let progress: Record<string, unknown> = job;
    while (progress.status === 'running') {
      await new Promise((r) => setTimeout(r, 50));
      const res = await fetch(`${runtime.url}/webhooks/${webhookId}/recoveries/${job.id}`, { headers });
      progress = (await res.json()) as Record<string, unknown>;
    }
    const seconds = (performance.now() - started) / 1000;
    const ids = new Set(hook.state.arrivals.map((a) => a.id));

    console.log(`\nRecovery of ${DELIVERIES} failed deliveries (endpoint answers in ${ANSWER_MS} ms):`);
    printTable(
      ['measure', 'value'],
      [
        ['job status', String(progress.status)],
        ['recovered (succeeded / total)', `${progress.succeeded} / ${progress.total}`],
        ['time to complete (s)', seconds.toFixed(2)],
        ['deliveries recovered per second', (Number(progress.succeeded) / seconds).toFixed(1)],
        [`most requests at once (pace: ≤ ${RECOVERY_PACE.inFlight})`, String(hook.state.maxInFlight)],
        [
          `most requests in one second (pace: ≤ ${RECOVERY_PACE.pageSize})`,
          String(busiestSecond(hook.state.arrivals.map((a) => a.at))),
        ],
        ['POSTs per delivery', (hook.state.arrivals.length / Math.max(1, ids.size)).toFixed(2)],
      ],
    );
  } finally {
    hook.close();
    await runtime.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
