// `npm run bench:crash-loop`: `npm start` on a data directory, killed with SIGKILL every BENCH_KILL_EVERY_S
// (default 15) seconds and started again at once, while a client sends BENCH_RATE (default 50) emails a second for
// BENCH_DURATION_S (default 60) seconds to a webhook on email.sent. After each kill it reads the dead process's
// sends journal: the sends waiting, and how many of them repeat an email already waiting (the goal: none). At the
// end it waits for the backlog to drain and reports accepted emails, delivered ones, lost ones (accepted, never
// delivered: the goal is 0), deliveries that arrived twice (same webhook-id), and accept → delivery p50/p99.
import { type ChildProcess, fork, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { QueueJournal } from '../lambdas/adapters/in-process/journal';
import { percentile, positiveInt, printTable } from './report';

const RATE = positiveInt('BENCH_RATE', 50);
const DURATION_S = positiveInt('BENCH_DURATION_S', 60);
const KILL_EVERY_S = positiveInt('BENCH_KILL_EVERY_S', 15);
const DRAIN_S = positiveInt('BENCH_DRAIN_S', 120);
/** BENCH_SINGLE=1: each email its own POST /v1/emails (queued before it is stored) instead of batches of RATE / 5. */
const SINGLE = process.env.BENCH_SINGLE === '1';
const root = join(import.meta.dirname, '..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Runtime {
  readonly url: string;
  readonly child: ChildProcess;
}

/** Starts `npm start`'s entry point on the data directory; the key is the seeded one (printed on the first start). */
async function start(dataDir: string, seen: { key?: string; account?: string }): Promise<Runtime> {
  const child = fork(join(root, 'bin/local.ts'), [], {
    cwd: root,
    env: { ...process.env, PORT: '0', SF_DATA_DIR: dataDir, SF_SEED: 'true', POWERTOOLS_LOG_LEVEL: 'ERROR' },
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the runtime exited (code ${code}) before it listened`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      seen.key ??= /^\s+(sf_test_\S+)/.exec(line)?.[1];
      seen.account ??= /default account (acct_\S+)/.exec(line)?.[1];
      const listening = /listening on (\S+)/.exec(line)?.[1];
      if (listening) resolve(listening);
    });
  });
  return { url, child };
}

/** The dead process's sends journal: messages waiting, and those that repeat an email already waiting. */
function sendsJournal(dataDir: string): { waiting: number; repeats: number } {
  const journal = QueueJournal.open(join(dataDir, 'queues', 'sends.journal'));
  try {
    const ids = journal.messages().map((m) => (JSON.parse(m.body) as { emailId: string }).emailId);
    return { waiting: ids.length, repeats: ids.length - new Set(ids).size };
  } finally {
    journal.close();
  }
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sendflow-crash-loop-'));
  const arrivals = new Map<string, number>();
  const webhookIds = new Map<string, number>();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      webhookIds.set(id, (webhookIds.get(id) ?? 0) + 1);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { email_id?: string };
      if (body.email_id && !arrivals.has(body.email_id)) arrivals.set(body.email_id, performance.now());
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const seen: { key?: string; account?: string } = {};
  let runtime = await start(dataDir, seen);
  // The seeded account's lines come after the listening one.
  for (let i = 0; i < 100 && !(seen.account && seen.key); i++) await sleep(50);
  // The seeded account is on the free plan (10 requests/s, 1,000 test recipients a day): the bench needs scale's.
  const admin = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'bin/admin.ts', 'set-plan', '--account', String(seen.account), '--plan', 'scale'],
    { cwd: root, env: { ...process.env, SF_DATA_DIR: dataDir }, encoding: 'utf8' },
  );
  if (admin.status !== 0) throw new Error(`admin set-plan failed: ${admin.stderr || admin.stdout}`);
  const headers = () => ({ Authorization: `Bearer ${seen.key}`, 'Content-Type': 'application/json' });
  const hook = await fetch(`${runtime.url}/webhooks`, {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify({
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      events: ['email.sent'],
    }),
  });
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${await hook.text()}`);

  const accepted = new Map<string, number>();
  const restarts: string[][] = [];
  let refused = 0;
  const end = performance.now() + DURATION_S * 1000;
  let nextKill = performance.now() + KILL_EVERY_S * 1000;
  let n = 0;
  try {
    while (performance.now() < end) {
      const tick = performance.now();
      const batch = Array.from({ length: Math.max(1, Math.round(RATE / 5)) }, () => ({
        from: 'a@acme.test',
        to: `r${n++}@example.com`,
        subject: 'Crash loop',
        text: 'Hello',
      }));
      const sent = performance.now();
      if (SINGLE) {
        // Each its own request (POST /v1/emails): a single email sent now is queued before it is stored.
        const answers = await Promise.all(
          batch.map((email) =>
            fetch(`${runtime.url}/emails`, { method: 'POST', headers: headers(), body: JSON.stringify(email) }).catch(
              () => null,
            ),
          ),
        );
        for (const res of answers) {
          if (res?.status === 200) accepted.set(((await res.json()) as { id: string }).id, sent);
          else refused += 1;
        }
      } else {
        const res = await fetch(`${runtime.url}/emails/batch`, {
          method: 'POST',
          headers: headers(),
          body: JSON.stringify(batch),
        }).catch(() => null);
        if (res?.status === 200) {
          for (const { id } of ((await res.json()) as { data: { id: string }[] }).data) accepted.set(id, sent);
        } else refused += batch.length;
      }
      if (performance.now() >= nextKill) {
        runtime.child.kill('SIGKILL');
        await new Promise((resolve) => runtime.child.once('exit', resolve));
        const { waiting, repeats } = sendsJournal(dataDir);
        const started = performance.now();
        runtime = await start(dataDir, seen);
        restarts.push([
          String(restarts.length + 1),
          String(waiting),
          String(repeats),
          (performance.now() - started).toFixed(0),
        ]);
        nextKill = performance.now() + KILL_EVERY_S * 1000;
      }
      await sleep(Math.max(0, 200 - (performance.now() - tick)));
    }
    const drainEnd = performance.now() + DRAIN_S * 1000;
    while ([...accepted.keys()].some((id) => !arrivals.has(id)) && performance.now() < drainEnd) await sleep(200);
  } finally {
    runtime.child.kill('SIGKILL');
    receiver.closeAllConnections();
    receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }

  const latencies = [...accepted].flatMap(([id, at]) => (arrivals.has(id) ? [(arrivals.get(id) as number) - at] : []));
  const lost = [...accepted.keys()].filter((id) => !arrivals.has(id)).length;
  const twice = [...webhookIds.values()].filter((count) => count > 1).length;
  console.log(
    `\nkill -9 every ${KILL_EVERY_S} s at ${RATE} emails/s for ${DURATION_S} s; after each kill, the sends journal:`,
  );
  printTable(['restart', 'sends waiting', 'repeated', 'restart ms'], restarts);
  console.log(
    `\naccepted ${accepted.size}, refused while down ${refused}, delivered ${arrivals.size}, lost ${lost}, ` +
      `delivered twice (same webhook-id) ${twice}; accept → email.sent p50 ${percentile(latencies, 50).toFixed(0)} ms, ` +
      `p99 ${percentile(latencies, 99).toFixed(0)} ms`,
  );
  const repeats = restarts.reduce((sum, row) => sum + Number(row[2]), 0);
  console.log(
    `Goal: no send queued twice, nothing lost, the backlog drains: ${repeats === 0 && lost === 0 ? 'met' : 'NOT met'}`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
