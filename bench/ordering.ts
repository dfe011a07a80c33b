// `npm run bench:ordering`: what per-email ordering costs per delivery, in DynamoDB calls on the deliveries table
// (its lane writes and the rows), for the same emails to a webhook without the option and to one with
// `ordering: "per_email"`, through the local runtime over real HTTP (emails to the simulator, a loopback receiver
// that answers 200). Env: BENCH_EMAILS (default 200; each is sent and delivered: 2 deliveries), BENCH_STEP_SECONDS
// (default 1: an email's delivered event a second after its sent, as SES's come; 0: both at once, so the second
// nearly always finds the first in flight and is held: the worst case). It also counts, per mode, the emails whose
// email.delivered reached the receiver before their email.sent (overtaken: 0 is the per_email promise).
// BENCH_BEFORE=<git ref> (e.g. 5446728, the release before issue 27's fix) first runs this same script against that
// ref's code (a temporary git worktree sharing node_modules), then this one's, and prints both side by side: the
// fix's cost measured on the same machine in one run. BENCH_JSON=1 prints the figures as one JSON line instead.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallCounts } from '../lambdas/adapters/dynamodb/call-counter';
import { countCalls } from '../lambdas/adapters/dynamodb/call-counter';
import { noUsagePlans } from '../lambdas/adapters/local/usage-plans';
import { createAccount, createAccountKey } from '../lambdas/app/accounts';
import { localDynamoClient } from '../lambdas/runtime/local/dynamo';
import { startLocalRuntime } from '../lambdas/runtime/local/runtime';
import { createRepositories } from '../lambdas/runtime/repositories';
import { benchConfig, positiveInt, printTable } from './report';

const EMAILS = positiveInt('BENCH_EMAILS', 200);
const STEP_SECONDS = process.env.BENCH_STEP_SECONDS ?? '1';
const BEFORE = process.env.BENCH_BEFORE;
const JSON_OUT = process.env.BENCH_JSON === '1';

type Figures = Record<string, number>;

/** This script run against `ref`'s code: its figures (none and per_email), parsed from its JSON line. */
function figuresAt(ref: string): { none: Figures; per_email: Figures } {
  const root = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim();
  const dir = mkdtempSync(join(tmpdir(), 'bench-ordering-'));
  try {
    execFileSync('git', ['worktree', 'add', '--detach', dir, ref], { cwd: root, stdio: 'ignore' });
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    copyFileSync(new URL(import.meta.url), join(dir, 'bench', 'ordering.ts'));
    const out = execFileSync('node', ['--import', 'tsx', 'bench/ordering.ts'], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, BENCH_BEFORE: '', BENCH_JSON: '1' },
    });
    return JSON.parse(out.trim().split('\n').at(-1) as string);
  } finally {
    execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: root, stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  }
}
const before = BEFORE ? figuresAt(BEFORE) : null;

let received = 0;
/** Per email, the event types in the order they reached the receiver. */
const arrivals = new Map<string, string[]>();
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    received += 1;
    const { type, email_id } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; email_id: string };
    arrivals.set(email_id, [...(arrivals.get(email_id) ?? []), type]);
    res.writeHead(200).end('ok');
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

const config = benchConfig({
  SF_DATA_DIR: ':memory:',
  SF_SIMULATOR_STEP_SECONDS: STEP_SECONDS,
  SF_ALLOW_PRIVATE_WEBHOOKS: 'true',
  SF_IP_RATE_LIMIT: '100000',
  // The reconciler's sweep is a fixed cost per minute, not per delivery: out of the counts.
  SF_RECONCILE_INTERVAL_SECONDS: '3600',
});
let counts: CallCounts | undefined;
const runtime = await startLocalRuntime(config, {
  instrument: (client) => {
    counts = countCalls(client);
  },
});
const client = localDynamoClient(runtime.dynamoEndpoint);
const repos = createRepositories(client, config.tables);
const admin = {
  ...repos,
  usagePlans: noUsagePlans,
  authorizerCache: runtime.services.authorizerCache,
  clock: { now: () => Date.now() },
  random: randomBytes,
};

async function run(ordering: 'none' | 'per_email'): Promise<Record<string, number>> {
  const account = await createAccount(admin, 'scale');
  const { secret } = await createAccountKey(admin, { accountId: account.id, mode: 'test' });
  const call = (path: string, body: unknown) =>
    fetch(`${runtime.url}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  await call('/webhooks', { url: hookUrl, events: ['email.sent', 'email.delivered'], ordering });
  received = 0;
  arrivals.clear();
  counts?.reset();
  for (let i = 0; i < EMAILS; i++) {
    const res = await call('/emails', {
      from: 'a@acme.test',
      to: 'success@simulator.amazonses.com',
      subject: 'Hi',
      html: 'x',
    });
    if (res.status !== 200) throw new Error(`send: ${res.status}`);
  }
  const deadline = Date.now() + 120_000;
  while (received < EMAILS * 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await runtime.queues.deliveries.idle();
  if (received !== EMAILS * 2) throw new Error(`received ${received} of ${EMAILS * 2}`);
  const snapshot = counts?.snapshot({ byTable: true }) ?? {};
  const overtaken = [...arrivals.values()].filter(
    (types) => types.indexOf('email.delivered') < types.indexOf('email.sent'),
  );
  return {
    ...Object.fromEntries(
      Object.entries(snapshot)
        .filter(([key]) => key.endsWith(config.tables.deliveries))
        .map(([key, n]) => [key.split(' ')[0] as string, n / (EMAILS * 2)]),
    ),
    'overtaken emails': overtaken.length,
  };
}

const none = await run('none');
const ordered = await run('per_email');
await runtime.stop();
receiver.close();
if (JSON_OUT) {
  console.log(JSON.stringify({ none, per_email: ordered }));
} else {
  console.log(
    `bench:ordering: ${EMAILS} emails × 2 events (sent, then delivered ${STEP_SECONDS} s later) to one webhook, each answered 200`,
  );
  const columns = before ? [before.none, before.per_email, none, ordered] : [none, ordered];
  const ops = [...new Set(columns.flatMap((figures) => Object.keys(figures)))].sort();
  const cell = (figures: Figures, op: string) =>
    op === 'overtaken emails' ? String(figures[op] ?? 0) : (figures[op] ?? 0).toFixed(3);
  printTable(
    [
      'deliveries table, calls per delivery',
      ...(before
        ? [`none (${BEFORE})`, `per_email (${BEFORE})`, 'none (now)', 'per_email (now)']
        : ['none', 'per_email']),
    ],
    ops.map((op) => [op, ...columns.map((figures) => cell(figures, op))]),
  );
}
