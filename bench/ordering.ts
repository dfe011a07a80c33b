// `npm run bench:ordering`: what per-email ordering costs per delivery, in DynamoDB calls on the deliveries table
// (its lane writes and the rows), for the same emails to a webhook without the option and to one with
// `ordering: "per_email"`, through the local runtime over real HTTP (emails to the simulator, a loopback receiver
// that answers 200). Env: BENCH_EMAILS (default 200; each is sent and delivered: 2 deliveries), BENCH_STEP_SECONDS
// (default 1: an email's delivered event a second after its sent, as SES's come; 0: both at once, so the second
// nearly always finds the first in flight and is held: the worst case).
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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

let received = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    received += 1;
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
  return Object.fromEntries(
    Object.entries(snapshot)
      .filter(([key]) => key.endsWith(config.tables.deliveries))
      .map(([key, n]) => [key.split(' ')[0] as string, n / (EMAILS * 2)]),
  );
}

console.log(
  `bench:ordering: ${EMAILS} emails × 2 events (sent, then delivered ${STEP_SECONDS} s later) to one webhook, each answered 200`,
);
const none = await run('none');
const ordered = await run('per_email');
const ops = [...new Set([...Object.keys(none), ...Object.keys(ordered)])].sort();
printTable(
  ['deliveries table, calls per delivery', 'ordering none', 'per_email'],
  [
    ...ops.map((op) => [op, (none[op] ?? 0).toFixed(3), (ordered[op] ?? 0).toFixed(3)]),
    // Every delivery is created (PutItem) and records its attempt (PutItem): a held one is stored once more.
    ['held (stored waiting), per delivery', '0.000', ((ordered.PutItem ?? 2) - 2).toFixed(3)],
  ],
);
await runtime.stop();
receiver.close();
