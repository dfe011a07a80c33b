// `npm run bench:stall`: can one tenant stall the local runtime (one Node process) for another? The runtime with
// its data on disk, as `npm start`. Tenant B reads its usage every 50 ms (API latency) and sends an email every
// 100 ms (POST → arrival of its email.sent delivery at B's endpoint), first alone, then while tenant A runs each
// attack in turn: signature checks of many signatures over a 256 KB body, 20 status-filtered email lists at once
// over 1,000 emails (an indexed status, then one read from the newest emails), recovery jobs against an endpoint that never answers, and a burst of 2,500 sends. Prints B's
// p50/p99/max per phase; the goal is p99 ≤ 250 ms for both under every attack. Env: BENCH_WINDOW_MS (default
// 6000, each phase's measuring window).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalRuntime } from '../lambdas/runtime/local/runtime';
import { benchConfig, percentile, positiveInt, printTable } from './report';
import { endpoint, type Tenant, tenant } from './tenants';

const WINDOW_MS = positiveInt('BENCH_WINDOW_MS', 6_000);
const GOAL_MS = 250;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const email = (to: string, text = 'Thanks') => ({ from: 'a@acme.test', to, subject: 'Receipt', text });

/** B's two probes over one window: API round trips, and POST → first delivery. */
async function measure(b: Tenant, arrivals: Map<string, number>) {
  const api: number[] = [];
  const delivery: number[] = [];
  const end = performance.now() + WINDOW_MS;
  const apiLoop = (async () => {
    while (performance.now() < end) {
      const started = performance.now();
      await (await b.call('/usage')).arrayBuffer();
      api.push(performance.now() - started);
      await sleep(50);
    }
  })();
  const pending: Promise<void>[] = [];
  let n = 0;
  while (performance.now() < end) {
    const started = performance.now();
    const res = await b.call('/emails', { method: 'POST', body: email(`b${Date.now()}-${n++}@example.com`) });
    const { id } = (await res.json()) as { id: string };
    pending.push(
      (async () => {
        const deadline = performance.now() + 30_000;
        while (!arrivals.has(id) && performance.now() < deadline) await sleep(2);
        delivery.push((arrivals.get(id) ?? Number.POSITIVE_INFINITY) - started);
      })(),
    );
    await sleep(100);
  }
  await Promise.all([apiLoop, ...pending]);
  return { api, delivery };
}

/** Runs `attack` until stopped; each loop is one round of the attacker's requests. */
function keepAttacking(attack: () => Promise<unknown>): () => Promise<void> {
  let running = true;
  const loop = (async () => {
    while (running) await attack().catch(() => undefined);
  })();
  return async () => {
    running = false;
    await loop;
  };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sendflow-stall-'));
  const runtime = await startLocalRuntime(
    benchConfig({ SF_DATA_DIR: dataDir, SF_SIMULATOR_STEP_SECONDS: '0', SF_IP_RATE_LIMIT: '100000' }),
  );
  const healthy = await endpoint('ok');
  const failing = await endpoint('fail');
  const hanging = await endpoint('hang');
  const rows: string[][] = [];
  let met = true;
  try {
    const b = await tenant(runtime, healthy.url);
    const a = await tenant(runtime, failing.url);
    const aHanging = await tenant(runtime, hanging.url);
    await measure(b, healthy.arrivals); // warm-up
    const record = (phase: string, m: { api: number[]; delivery: number[] }) => {
      const cells = [m.api, m.delivery].flatMap((v) => [percentile(v, 50), percentile(v, 99), Math.max(...v)]);
      met &&= percentile(m.api, 99) <= GOAL_MS && percentile(m.delivery, 99) <= GOAL_MS;
      rows.push([phase, ...cells.map((x) => x.toFixed(0))]);
      console.error(`${phase}: done`);
    };
    record('alone', await measure(b, healthy.arrivals));

    // 1. Signature checks: as many signatures as the header holds, over a 256 KB body, 3 at a time.
    const body = 'x'.repeat(256 * 1024);
    const signatures = Array.from({ length: 1_638 }, () => 'v1,AAAA')
      .join(' ')
      .slice(0, 8_192);
    const check = () =>
      a.call(`/webhooks/${a.webhookId}/signature-check`, {
        method: 'POST',
        body: {
          body,
          headers: {
            'webhook-id': 'msg_1',
            'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
            'webhook-signature': signatures,
          },
        },
      });
    let stop = keepAttacking(() => Promise.all([check(), check(), check()]));
    record('A: signature checks ×3', await measure(b, healthy.arrivals));
    await stop();

    // 2. 1,000 emails of A (5 batches of 100 at a time), then 20 status-filtered lists at once, over and over.
    for (let i = 0; i < 10; i++) {
      await a.call('/emails/batch', {
        method: 'POST',
        body: Array.from({ length: 100 }, (_, j) => email(`a${i}-${j}@example.com`)),
      });
    }
    await runtime.queues.sends.settled();
    await runtime.queues.events.idle();
    stop = keepAttacking(() =>
      Promise.all(
        Array.from({ length: 20 }, () => a.call('/emails?status=bounced&limit=100').then((r) => r.arrayBuffer())),
      ),
    );
    record('A: 20 × GET /emails?status=', await measure(b, healthy.arrivals));
    await stop();
    // 2b. The same with a status read from the newest emails (not indexed): 100 histories a request.
    stop = keepAttacking(() =>
      Promise.all(
        Array.from({ length: 20 }, () => a.call('/emails?status=delivered&limit=100').then((r) => r.arrayBuffer())),
      ),
    );
    record('A: 20 × GET /emails?status=delivered', await measure(b, healthy.arrivals));
    await stop();

    // 3. Recovery jobs against an endpoint that never answers (its deliveries failed first).
    await aHanging.call(`/webhooks/${aHanging.webhookId}`, { method: 'PUT', body: { url: failing.url } });
    for (let i = 0; i < 100; i++) await aHanging.call(`/webhooks/${aHanging.webhookId}/test`, { method: 'POST' });
    await aHanging.call(`/webhooks/${aHanging.webhookId}`, { method: 'PUT', body: { url: hanging.url } });
    stop = keepAttacking(async () => {
      await aHanging.call(`/webhooks/${aHanging.webhookId}/recoveries`, { method: 'POST', body: {} });
      await sleep(500);
    });
    record('A: recovery jobs, endpoint hangs', await measure(b, healthy.arrivals));
    await stop();

    // 4. A burst of 2,500 sends (25 batches of 100), then B measures while they go out.
    await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        a.call('/emails/batch', {
          method: 'POST',
          body: Array.from({ length: 100 }, (_, j) => email(`burst${i}-${j}@example.com`)),
        }),
      ),
    );
    record('A: burst of 2,500 sends', await measure(b, healthy.arrivals));

    console.log(
      `\nTenant B, ${WINDOW_MS} ms per phase: API = GET /v1/usage round trip; delivery = POST /v1/emails → email.sent at its endpoint (ms)`,
    );
    printTable(['phase', 'API p50', 'API p99', 'API max', 'deliv p50', 'deliv p99', 'deliv max'], rows);
    console.log(`\nGoal: p99 ≤ ${GOAL_MS} ms for both under every attack: ${met ? 'met' : 'NOT met'}`);
  } finally {
    healthy.close();
    failing.close();
    hanging.close();
    await runtime.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
