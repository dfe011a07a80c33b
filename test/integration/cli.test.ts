// The two command-line entry points as a user runs them: `npm start` (bin/local.ts) and the admin CLI
// against that running runtime, found through the state file it writes.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript, type Spawned, spawnScript } from '../support/process';

let dir: string;
let env: Record<string, string>;
let runtime: Spawned;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sendflow-cli-'));
  env = { PORT: '0', SF_DATA_DIR: join(dir, 'data'), SF_LOCAL_STATE_FILE: join(dir, 'state.json') };
  runtime = spawnScript('bin/local.ts', [], env);
  url = (await runtime.waitFor(/listening on (http:\/\/\S+)/))[1] as string;
}, 30_000);

afterAll(async () => {
  if (runtime.child.exitCode === null) runtime.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const admin = (...args: string[]) => runScript('bin/admin.ts', args, env);
const json = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>;

describe('npm start', () => {
  it('seeds a default account and prints a full-access test key that works', async () => {
    const key = (await runtime.waitFor(/^\s+(sf_test_\w+)$/m))[1] as string;
    const res = await fetch(`${url}/api-keys`, { headers: { Authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { scopes: string[] }[] };
    expect(body.data[0]?.scopes).toHaveLength(5);
    expect(res.headers.get('x-ratelimit-limit')).toBe('10');
  });

  it('prints a one-time dashboard sign-in link for the default account on every start', async () => {
    const link = (await runtime.waitFor(/Dashboard \(one-time sign-in link, valid 15 minutes\): (\S+)/))[1] as string;
    expect(link).toMatch(new RegExp(`^${url.replace(/[.]/g, '\\.')}/dashboard/sign-in\\?token=[A-Za-z0-9_-]{43}$`));
    const token = new URL(link).searchParams.get('token') ?? '';
    const signIn = () =>
      fetch(`${url}/dashboard/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: `token=${token}`,
      });
    expect((await signIn()).status).toBe(303);
    expect((await signIn()).status).toBe(400);
  });

  it('refuses a taken port with one clear line and exit 1', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    const result = runScript('bin/local.ts', [], {
      ...env,
      PORT: String(port),
      SF_DATA_DIR: ':memory:',
      SF_LOCAL_STATE_FILE: join(dir, 'other.json'),
    });
    blocker.close();
    expect(result.status).toBe(1);
    expect(
      result.stderr
        .trim()
        .split('\n')
        .filter((l) => !/npm warn/.test(l)),
    ).toEqual([`sendflow: port ${port} is already in use: set PORT to another port, or PORT=0 for any free port.`]);
  });

  it('refuses an unusable data directory with one clear line and exit 1', () => {
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, 'x');
    const result = runScript('bin/local.ts', [], {
      ...env,
      SF_DATA_DIR: join(file, 'data'),
      SF_LOCAL_STATE_FILE: join(dir, 'x.json'),
    });
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^sendflow: Cannot use data directory .*not-a-dir/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses the data directory of a Sendflow already running, after waiting its bound, with one clear line and exit 1', () => {
    const result = runScript('bin/local.ts', [], {
      ...env,
      SF_LOCAL_STATE_FILE: join(dir, 'second.json'),
      SF_DATA_DIR_WAIT_SECONDS: '2',
    });
    expect(result.stdout).toMatch(/^Waiting for the previous Sendflow on this data directory .* up to 2 s/m);
    expect(result.status).toBe(1);
    const lines = result.stderr
      .trim()
      .split('\n')
      .filter((l) => !/npm warn/.test(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^sendflow: Cannot open data directory .*; is another Sendflow running on it\?/);
  });

  it('refuses at once the data directory of a Sendflow that announces itself running on it (nothing to wait for)', () => {
    const started = Date.now();
    const result = runScript('bin/local.ts', [], { ...env, SF_DATA_DIR_WAIT_SECONDS: '15' });
    expect(result.status).toBe(1);
    expect(result.stdout).not.toMatch(/Waiting for the previous Sendflow/);
    expect(result.stderr).toMatch(/^sendflow: Cannot open data directory .*; is another Sendflow running on it\?/m);
    expect(Date.now() - started).toBeLessThan(12_000);
  });

  it('refuses invalid configuration listing every problem', () => {
    const result = runScript('bin/local.ts', [], { ...env, PORT: 'abc', SF_MAX_BODY_BYTES: '-1' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/PORT/);
    expect(result.stderr).toMatch(/SF_MAX_BODY_BYTES/);
  });
});

describe('admin CLI against the running local runtime', () => {
  it('dashboard-link prints {"url"} for the running runtime, a link that signs in once, in the mode asked', async () => {
    const account = json(admin('create-account', '--plan', 'free').stdout);
    const result = admin('dashboard-link', '--account', account.account_id as string, '--mode', 'live');
    expect(result.status).toBe(0);
    const printed = json(result.stdout);
    expect(printed.url).toMatch(/\/v1\/dashboard\/sign-in\?token=[A-Za-z0-9_-]{43}$/);
    expect(String(printed.url).startsWith(url)).toBe(true);
    const token = new URL(printed.url as string).searchParams.get('token') ?? '';
    const signedIn = await fetch(`${url}/dashboard/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `token=${token}`,
    });
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const page = await (await fetch(`${url}/dashboard`, { headers: { cookie } })).text();
    expect(page).toContain(account.account_id as string);
    expect(page).toContain('Live mode');

    // dashboard-revoke ends it at once (it removes the session and the link it came from).
    const revoked = admin('dashboard-revoke', '--account', account.account_id as string);
    expect(json(revoked.stdout)).toEqual({ account_id: account.account_id, revoked: 2 });
    expect((await fetch(`${url}/dashboard`, { headers: { cookie } })).status).toBe(401);

    const unknown = admin('dashboard-link', '--account', 'acct_nobody');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('No account acct_nobody');
  });

  it('creates an account and a key, changes the plan, revokes the key', async () => {
    const created = admin('create-account', '--plan', 'starter');
    expect(created.status).toBe(0);
    const account = json(created.stdout);
    expect(account).toEqual({ account_id: expect.stringMatching(/^acct_/), plan: 'starter' });

    const keyResult = admin('create-key', '--account', account.account_id as string, '--mode', 'test');
    expect(keyResult.status).toBe(0);
    const key = json(keyResult.stdout);
    expect(key).toMatchObject({ id: expect.stringMatching(/^key_/), key: expect.stringMatching(/^sf_test_/) });
    expect(key.scopes).toEqual(['email:send', 'email:read', 'domain:read', 'webhook:read', 'webhook:write']);

    const call = () => fetch(`${url}/api-keys`, { headers: { Authorization: `Bearer ${key.key}` } });
    const first = await call();
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('50');

    expect(json(admin('set-plan', '--account', account.account_id as string, '--plan', 'growth').stdout)).toEqual({
      account_id: account.account_id,
      plan: 'growth',
    });
    expect((await call()).headers.get('x-ratelimit-limit')).toBe('100');

    const scoped = json(
      admin('create-key', '--account', account.account_id as string, '--scopes', 'email:send,webhook:read').stdout,
    );
    expect(scoped.scopes).toEqual(['email:send', 'webhook:read']);
    expect(scoped.key).toMatch(/^sf_live_/);

    const revoked = admin('revoke-key', '--account', account.account_id as string, '--key', key.id as string);
    expect(revoked.status).toBe(0);
    expect(json(revoked.stdout)).toMatchObject({ id: key.id, revoked: true });
    expect((await call()).status).toBe(401);
  });

  it("lists the accounts (the default one marked) and an account's keys by hint, never the secret", async () => {
    const printed = (await runtime.waitFor(/^\s+(sf_test_\w+)$/m))[1] as string;
    const accounts = admin('list-accounts');
    expect(accounts.status).toBe(0);
    const { data } = json(accounts.stdout) as { data: Record<string, unknown>[] };
    const seeded = data.find((a) => a.default === true);
    expect(seeded).toEqual({
      id: expect.stringMatching(/^acct_/),
      plan: 'free',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      default: true,
    });
    expect(data.filter((a) => a.default)).toHaveLength(1);

    const keys = admin('list-keys', '--account', seeded?.id as string);
    expect(keys.status).toBe(0);
    expect(keys.stdout).not.toContain(printed);
    expect(json(keys.stdout)).toEqual({
      data: [
        {
          id: expect.stringMatching(/^key_/),
          name: 'Default test key',
          mode: 'test',
          scopes: ['email:send', 'email:read', 'domain:read', 'webhook:read', 'webhook:write'],
          hint: `sf_test_…${printed.slice(-4)}`,
          created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          revoked: false,
        },
      ],
    });
  });

  it('exits 1 when listing the keys of an unknown account', () => {
    const result = admin('list-keys', '--account', 'acct_missing');
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/No account with id acct_missing/);
    expect(result.stdout).toBe('');
  });

  it.each(['--help', '-h', 'help', 'create-key --help'])('prints the usage on stdout and exits 0 for `%s`', (line) => {
    const result = admin(...line.split(' '));
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^usage: npm run admin -- <command>/);
    expect(result.stdout).toMatch(/list-accounts/);
    expect(result.stderr.split('\n').filter((l) => /admin:/.test(l))).toEqual([]);
  });

  it('exits 2 with the usage on stderr for an unknown command', () => {
    const result = admin('frobnicate');
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/admin: unknown command: frobnicate\n\nusage: npm run admin/);
    expect(result.stdout).toBe('');
  });

  it('exits 2 with the message and usage for bad arguments, printing nothing on stdout', () => {
    const result = admin('create-account', '--plan', 'platinum');
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/--plan must be one of free, starter, growth, scale, not platinum/);
    expect(result.stderr).toMatch(/usage: npm run admin/);
    expect(result.stdout).toBe('');
  });

  it('exits 1 with a message for an unknown account', () => {
    const result = admin('set-plan', '--account', 'acct_missing', '--plan', 'free');
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/No account with id acct_missing/);
  });

  it('shuts down cleanly on SIGTERM and removes its state file', async () => {
    expect(existsSync(env.SF_LOCAL_STATE_FILE as string)).toBe(true);
    runtime.child.kill('SIGTERM');
    expect(await runtime.exited()).toBe(0);
    expect(existsSync(env.SF_LOCAL_STATE_FILE as string)).toBe(false);
  });
});

describe('the admin CLI before the first `npm start`', () => {
  it('does not keep the first start from creating and printing the default account and key', async () => {
    // Arrange: a fresh data directory, used by the admin CLI first (no runtime running).
    const fresh = mkdtempSync(join(tmpdir(), 'sendflow-first-'));
    const freshEnv = { PORT: '0', SF_DATA_DIR: join(fresh, 'data'), SF_LOCAL_STATE_FILE: join(fresh, 'state.json') };
    try {
      expect(json(runScript('bin/admin.ts', ['list-accounts'], freshEnv).stdout)).toEqual({ data: [] });
      const created = json(runScript('bin/admin.ts', ['create-account', '--plan', 'starter'], freshEnv).stdout);

      // Act
      const first = spawnScript('bin/local.ts', [], freshEnv);
      try {
        const base = (await first.waitFor(/listening on (http:\/\/\S+)/))[1] as string;
        const key = (await first.waitFor(/^\s+(sf_test_\w+)$/m))[1] as string;

        // Assert: the printed key works, and its account is the default one, not the one made before.
        expect(first.output()).toMatch(/Created the default account acct_\w+ \(plan free\)/);
        const res = await fetch(`${base}/api-keys`, { headers: { Authorization: `Bearer ${key}` } });
        expect(res.status).toBe(200);
        first.child.kill('SIGTERM');
        expect(await first.exited()).toBe(0);
      } finally {
        if (first.child.exitCode === null) first.child.kill('SIGKILL');
      }
      const listed = json(runScript('bin/admin.ts', ['list-accounts'], freshEnv).stdout) as {
        data: Record<string, unknown>[];
      };
      expect(listed.data.map((a) => [a.id === created.account_id, a.default ?? false])).toEqual([
        [true, false],
        [false, true],
      ]);

      // A second start finds the default account and prints no key.
      const second = spawnScript('bin/local.ts', [], freshEnv);
      try {
        await second.waitFor(/listening on/);
        await new Promise((r) => setTimeout(r, 300));
        expect(second.output()).not.toMatch(/Created the default account|sf_test_/);
        second.child.kill('SIGTERM');
        await second.exited();
      } finally {
        if (second.child.exitCode === null) second.child.kill('SIGKILL');
      }
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  }, 60_000);
});
