// Sending reputation end to end, as a user and an operator meet it: `npm start` (bin/local.ts, live mode
// simulated) with the minimum volume lowered to 10 and the reputation event switched on; one account sends 20
// good copies, then a hard bounce (past the 4% warning: account.reputation_warning `warning` reaches its webhook,
// signed), then a complaint (past the 0.3% pause: the `paused` event); its next live send, single or batch, is
// refused with 403 sending_paused naming the rate, another account's send succeeds, GET /v1/emails/metrics shows
// the counts and rates by day and domain and the pause, the dashboard's overview says it; `npm run admin --
// reputation-lift` lifts it, and the account sends again.
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runScript, type Spawned, spawnScript } from '../support/process';
import { type Receiver, startReceiver } from '../support/receiver';

let dir: string;
let env: Record<string, string>;
let runtime: Spawned;
let url: string;
let receiver: Receiver;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sendflow-reputation-'));
  env = {
    PORT: '0',
    SF_SMTP_PORT: '0',
    SF_DATA_DIR: join(dir, 'data'),
    SF_LOCAL_STATE_FILE: join(dir, 'state.json'),
    SF_SEED: 'false',
    SF_SIMULATOR_STEP_SECONDS: '0',
    SF_DOMAIN_VERIFY_SECONDS: '0',
    SF_REPUTATION_MINIMUM_SENT: '10',
    SF_REPUTATION_EVENTS: 'true',
  };
  runtime = spawnScript('bin/local.ts', [], env);
  url = (await runtime.waitFor(/listening on (http:\/\/\S+)/))[1] as string;
  receiver = await startReceiver();
}, 30_000);

afterAll(async () => {
  await receiver?.close();
  if (runtime.child.exitCode === null) {
    runtime.child.kill('SIGTERM');
    await runtime.exited();
  }
  rmSync(dir, { recursive: true, force: true });
});

// ajv-formats is CommonJS: its function is the default export's default under ESM interop.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as typeof addFormatsModule;

const admin = (...args: string[]) => {
  const result = runScript('bin/admin.ts', args, env);
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
};

const call = (key: string, path: string, init: RequestInit = {}) =>
  fetch(`${url}${path}`, { ...init, headers: { Authorization: `Bearer ${key}`, ...init.headers } });
const post = (key: string, path: string, body: unknown) =>
  call(key, path, { method: 'POST', body: JSON.stringify(body) });

/** A live account with a verified sending domain: its key. */
async function liveSender(domain: string): Promise<{ accountId: string; key: string }> {
  const accountId = admin('create-account', '--plan', 'scale').account_id as string;
  const key = admin('create-key', '--account', accountId, '--mode', 'live').key as string;
  const created = (await (await post(key, '/domains', { name: domain })).json()) as { id: string };
  await call(key, `/domains/${created.id}/verify`, { method: 'POST' });
  return { accountId, key };
}

const email = (from: string, to: string) => ({ from, to, subject: 'Hello', text: 'Hi' });

interface Totals {
  sent: number;
  delivered: number;
  bounced_permanent: number;
  complained: number;
  bounce_rate: number;
  complaint_rate: number;
  delivery_rate: number;
}

async function metrics(key: string, query = ''): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await call(key, `/emails/metrics${query}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Polls until `check` holds (the simulator's events are processed in the background). */
async function until<T>(what: string, read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() - started > 15_000) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The overview page of a live-mode dashboard session (its one-time link from the admin CLI). */
async function dashboardOverview(accountId: string): Promise<string> {
  const link = admin('dashboard-link', '--account', accountId, '--mode', 'live').url as string;
  const token = new URL(link).searchParams.get('token') ?? '';
  const signedIn = await fetch(`${url}/dashboard/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
  });
  const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  return (await fetch(`${url}/dashboard`, { headers: { cookie } })).text();
}

const totalsOf = async (key: string) => (await metrics(key)).body.totals as Totals;

type Warning = {
  type: string;
  data: { level: string; scope: string; domain: string | null; sending_paused: boolean; breaches: string[] } & Record<
    string,
    unknown
  >;
};

it('warns, pauses one account only, shows it in the metrics, and an operator lifts it', async () => {
  // Arrange: the sender with a webhook for the reputation event, and a bystander account.
  const bad = await liveSender('bulk.example');
  const good = await liveSender('fine.example');
  const hook = (await (
    await post(bad.key, '/webhooks', { url: `${receiver.url}/reputation`, events: ['account.reputation_warning'] })
  ).json()) as { id: string; signing_secret: string };
  const from = 'news@bulk.example';

  // 20 good copies, counted before anything bounces.
  const batch = await post(
    bad.key,
    '/emails/batch',
    Array.from({ length: 20 }, (_, i) => email(from, `success+${i}@simulator.amazonses.com`)),
  );
  expect(batch.status).toBe(200);
  await until(
    '20 sent and delivered',
    () => totalsOf(bad.key),
    (t) => t.sent === 20 && t.delivered === 20,
  );

  // Act 1: a hard bounce: 1 of 21 is 4.8%, past the 4% warning, short of the 8% pause.
  expect((await post(bad.key, '/emails', email(from, 'bounce@simulator.amazonses.com'))).status).toBe(200);
  const warned = (await receiver.waitFor(2)).map((r) => JSON.parse(r.body) as Warning);

  // Assert 1: told once per subject (the account and its domain), level warning, sending not paused.
  expect(warned.map((w) => `${w.type} ${w.data.level} ${w.data.scope} ${w.data.domain}`).sort()).toEqual([
    'account.reputation_warning warning account null',
    'account.reputation_warning warning domain bulk.example',
  ]);
  expect(warned[0]?.data).toMatchObject({ sending_paused: false, breaches: ['bounce_rate'], window_days: 7 });
  for (const request of receiver.received) {
    const expected = createHmac('sha256', hook.signing_secret).update(request.body).digest('hex');
    expect(request.headers['x-service-signature']).toBe(expected);
  }
  expect((await post(bad.key, '/emails', email(from, 'success+21@simulator.amazonses.com'))).status).toBe(200);

  // Act 2: a complaint: 1 of 23 is 4.3%, past the 0.3% pause.
  expect((await post(bad.key, '/emails', email(from, 'complaint@simulator.amazonses.com'))).status).toBe(200);
  const all = (await receiver.waitFor(4)).map((r) => JSON.parse(r.body) as Warning);
  const paused = all.slice(2);

  // Assert 2: the paused events, then the 403 on single and batch sends, naming the rate and the way out.
  expect(paused.map((w) => `${w.data.level} ${w.data.scope}`).sort()).toEqual(['paused account', 'paused domain']);
  expect(paused[0]?.data).toMatchObject({ sending_paused: true, breaches: ['complaint_rate'] });
  // Each payload is what the catalog (GET /v1/event-types) says it is.
  const catalog = (await (await call(bad.key, '/event-types')).json()) as { data: { type: string; schema: object }[] };
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  const schema = catalog.data.find((entry) => entry.type === 'account.reputation_warning')?.schema ?? {};
  const validate = ajv.compile(schema);
  for (const payload of all) expect(validate(payload), JSON.stringify(validate.errors)).toBe(true);
  const refused = await post(bad.key, '/emails', email(from, 'success+30@simulator.amazonses.com'));
  expect(refused.status).toBe(403);
  const error = (await refused.json()) as { code: string; error: string; statusCode: number };
  expect(error.code).toBe('sending_paused');
  expect(error.statusCode).toBe(403);
  expect(error.error).toMatch(/complaint rate was 4\.35% \(pause threshold 0\.3%\)/);
  expect(error.error).toMatch(/contact support/);
  const refusedBatch = await post(bad.key, '/emails/batch', [email(from, 'success+31@simulator.amazonses.com')]);
  expect(refusedBatch.status).toBe(403);
  expect(((await refusedBatch.json()) as { code: string }).code).toBe('sending_paused');
  // Other tenants are unaffected.
  expect((await post(good.key, '/emails', email('hi@fine.example', 'success@simulator.amazonses.com'))).status).toBe(
    200,
  );

  // The metrics show the same figures: totals, by day and domain, and the reputation as judged.
  const shown = await until(
    'the complaint counted',
    () => metrics(bad.key, '?dimensions=period,domain'),
    (m) => (m.body.totals as Totals).complained === 1,
  );
  expect(shown.status).toBe(200);
  const today = new Date().toISOString().slice(0, 10);
  const totals = {
    sent: 23,
    delivered: 22,
    bounced: 1,
    bounced_permanent: 1,
    bounced_transient: 0,
    bounced_undetermined: 0,
    complained: 1,
    delivery_rate: 0.9565,
    bounce_rate: 0.0435,
    complaint_rate: 0.0435,
  };
  expect(shown.body).toMatchObject({
    object: 'metrics',
    dimensions: ['period', 'domain'],
    granularity: 'daily',
    totals,
    data: [{ period: today, domain_id: expect.stringMatching(/^dom_/), domain_name: 'bulk.example', ...totals }],
    reputation: {
      judged: true,
      status: 'paused',
      window_days: 7,
      minimum_sent: 10,
      thresholds: {
        warning: { bounce_rate: 0.04, complaint_rate: 0.0008 },
        pause: { bounce_rate: 0.08, complaint_rate: 0.003 },
      },
      account: {
        domain_name: null,
        sent: 23,
        bounced: 1,
        complained: 1,
        level: 'paused',
        paused_at: expect.any(String),
      },
      domains: [{ domain_name: 'bulk.example', level: 'paused', paused_at: expect.any(String) }],
    },
  });
  // The dashboard says so, in words, on its overview.
  const overview = await dashboardOverview(bad.accountId);
  expect(overview).toMatch(/<p role="alert"><strong>Sending is paused<\/strong> for Whole account, bulk\.example/);
  expect(overview).toContain('4.35%');
  const bystander = await metrics(good.key);
  expect(bystander.body).toMatchObject({ reputation: { status: 'ok', account: { paused_at: null } } });

  // Act 3: the operator lifts the pause.
  const shownByCli = admin('reputation', '--account', bad.accountId);
  expect(shownByCli).toMatchObject({ status: 'paused', account: { sent: 23, level: 'paused' } });
  const lifted = admin('reputation-lift', '--account', bad.accountId, '--note', 'list cleaned, ticket 42');

  // Assert 3: both pauses lifted, sending works again, and the figures before the lift are not judged again.
  expect((lifted.lifted as { subject: string }[]).map((l) => l.subject).sort()).toEqual([
    'account',
    'domain bulk.example',
  ]);
  expect((await post(bad.key, '/emails', email(from, 'success+40@simulator.amazonses.com'))).status).toBe(200);
  const after = await metrics(bad.key);
  expect(after.body).toMatchObject({
    reputation: { status: 'ok', account: { paused_at: null, lifted_at: expect.any(String), sent: expect.any(Number) } },
  });
  const again = runScript('bin/admin.ts', ['reputation-lift', '--account', bad.accountId], env);
  expect(again.status).toBe(1);
  expect(again.stderr).toMatch(/Nothing is paused/);
}, 60_000);
