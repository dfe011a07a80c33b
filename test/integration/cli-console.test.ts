// `npm start`'s console as a person and a pipe see it (bin/local.ts): on a terminal (a real one, from util-linux's
// `script`), the banner, then one short line per request and per webhook attempt, failures in colour, no JSON,
// the key only in the banner; into a pipe, the JSON lines of today; a port in use is one line and exit 1, with
// nothing before it (a failed start no longer logs "reconciler failed … DynamoDB is closing").
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runScript, type Spawned, spawnScript } from '../support/process';
import { type Receiver, startReceiver } from '../support/receiver';

const root = join(import.meta.dirname, '..', '..');
const ESC = String.fromCharCode(27);
/** The dim time that starts a line on a terminal, as a RegExp source. */
const TIME = `${ESC}\\[2m\\d\\d:\\d\\d:\\d\\d${ESC}\\[0m `;

let dir: string;
let receiver: Receiver;
// Colours follow the terminal alone here: the children inherit no NO_COLOR or FORCE_COLOR (node warns of both).
const colorSettings = { NO_COLOR: process.env.NO_COLOR, FORCE_COLOR: process.env.FORCE_COLOR };
beforeAll(async () => {
  delete process.env.NO_COLOR;
  delete process.env.FORCE_COLOR;
  dir = mkdtempSync(join(tmpdir(), 'sendflow-console-'));
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
  for (const [name, value] of Object.entries(colorSettings)) if (value !== undefined) process.env[name] = value;
});

/** The env of a run: its own data and state file, at the default log level (the test setup's is SILENT). */
const envOf = (name: string, more: Record<string, string> = {}) => ({
  PORT: '0',
  SF_DATA_DIR: join(dir, name),
  SF_LOCAL_STATE_FILE: join(dir, `${name}.json`),
  POWERTOOLS_LOG_LEVEL: 'INFO',
  ...more,
});

/** `npm start` on a pseudo-terminal: stdout is a TTY, as in a person's terminal. */
function onTerminal(env: Record<string, string>) {
  const command = `exec '${process.execPath}' --import tsx bin/local.ts`;
  const child = spawn('script', ['-qefc', command, '/dev/null'], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  const append = (d: Buffer) => {
    out += d.toString().replace(/\r\n/g, '\n');
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  return {
    child,
    output: () => out,
    waitFor: (pattern: RegExp) =>
      until(
        () => pattern.exec(out),
        () => out,
      ),
  };
}

async function until<T>(found: () => T | null | undefined, output: () => string, timeoutMs = 20_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = found();
    if (value) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out; output so far:\n${output()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Requests a person makes: a webhook, a test event it answers 200, one it answers 500, a body refused 422. */
async function exercise(url: string, key: string) {
  const auth = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  receiver.answer((n) => ({ kind: 'status', status: n % 2 === 1 ? 200 : 500 }));
  const created = await fetch(`${url}/webhooks`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ url: `${receiver.url}/hooks`, events: ['email.sent'] }),
  });
  expect(created.status).toBe(201);
  const webhook = ((await created.json()) as { id: string }).id;
  const before = receiver.received.length;
  expect((await fetch(`${url}/webhooks/${webhook}/test`, { method: 'POST', headers: auth })).status).toBe(200);
  expect((await fetch(`${url}/webhooks/${webhook}/test`, { method: 'POST', headers: auth })).status).toBe(200);
  await receiver.waitFor(before + 2);
  const refused = await fetch(`${url}/emails`, { method: 'POST', headers: auth, body: '{}' });
  expect(refused.status).toBe(422);
  return webhook;
}

/** Ctrl-C's SIGTERM cousin: to the process, or to `script`'s whole process group. */
const stop = async (child: ChildProcess, group = false) => {
  if (child.exitCode !== null || child.pid === undefined) return;
  const exited = new Promise((r) => child.once('exit', r));
  if (group) process.kill(-child.pid, 'SIGTERM');
  else child.kill('SIGTERM');
  await exited;
};

describe('npm start on a terminal', () => {
  let run: ReturnType<typeof onTerminal>;
  afterEach(() => stop(run.child, true));

  it('prints the banner, then one coloured line per request and per attempt, and no JSON', async () => {
    // Arrange
    run = onTerminal(envOf('tty', { SF_LOG_FORMAT: '' }));
    const url = (await run.waitFor(/listening on (http:\/\/\S+)/))[1] as string;
    const key = (await run.waitFor(/^\s+(sf_test_\w+)$/m))[1] as string;
    await run.waitFor(/Requests and webhook attempts follow/);

    // Act
    const webhook = await exercise(url, key);
    await run.waitFor(/POST \/v1\/emails 422/);
    await run.waitFor(/attempt 1 500/);

    // Assert
    const lines = run.output().split('\n');
    const after = lines.slice(lines.findIndex((l) => l.includes('Requests and webhook attempts follow')) + 1);
    const line = (pattern: RegExp) => after.find((l) => pattern.test(l));
    expect(line(/POST \/v1\/webhooks /)).toMatch(new RegExp(`^${TIME}POST /v1/webhooks 201 \\d+ ms$`));
    expect(line(/attempt 1 200/)).toMatch(
      new RegExp(`^${TIME}→ ${webhook} attempt 1 200 \\d+ ms test \\(test event\\)$`),
    );
    expect(line(/attempt 1 500/)).toMatch(
      new RegExp(`^${TIME}${ESC}\\[31m→ ${webhook} attempt 1 500 \\d+ ms test: HTTP 500.*${ESC}\\[0m$`),
    );
    expect(line(/POST \/v1\/emails /)).toMatch(
      new RegExp(`^${TIME}${ESC}\\[33mPOST /v1/emails 422 \\d+ ms${ESC}\\[0m$`),
    );
    expect(line(/POST \/v1\/webhooks\/\{id\}\/test 200/)).toBeDefined();
    expect(after.filter((l) => l.trimStart().startsWith('{'))).toEqual([]);
    // The key is printed once, in the banner.
    expect(run.output().split(key)).toHaveLength(2);
  });
});

describe('npm start into a pipe', () => {
  let runtime: Spawned;
  afterEach(() => stop(runtime.child));

  async function started(env: Record<string, string>) {
    runtime = spawnScript('bin/local.ts', [], env);
    const url = (await runtime.waitFor(/listening on (http:\/\/\S+)/))[1] as string;
    const key = (await runtime.waitFor(/^\s+(sf_test_\w+)$/m))[1] as string;
    return { url, key };
  }

  it("writes today's JSON lines: failures at INFO, a successful request or attempt not at all (DEBUG)", async () => {
    // Arrange
    const { url, key } = await started(envOf('pipe'));

    // Act
    await exercise(url, key);
    await runtime.waitFor(/"status":422/);
    await runtime.waitFor(/"status_code":500/);

    // Assert
    const json = runtime
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(json.filter((l) => l.message === 'api request').map((l) => [l.level, l.route, l.status])).toEqual([
      ['INFO', 'sendEmail', 422],
    ]);
    expect(json.filter((l) => l.message === 'webhook attempt').map((l) => [l.level, l.status_code])).toEqual([
      ['INFO', 500],
    ]);
    expect(runtime.output()).not.toMatch(/POST \/v1\/|→ wh_/);
    expect(runtime.output()).not.toContain(`${ESC}[`);
    expect(runtime.output()).not.toMatch(/Requests and webhook attempts follow/);
  });

  it('writes the lines for people with SF_LOG_FORMAT=pretty, without colours (not a terminal)', async () => {
    // Arrange
    const { url, key } = await started(envOf('forced', { SF_LOG_FORMAT: 'pretty' }));

    // Act
    const webhook = await exercise(url, key);
    await runtime.waitFor(/POST \/v1\/emails 422/);
    await runtime.waitFor(/attempt 1 500/);

    // Assert
    const output = runtime.output();
    expect(output).toMatch(/^\d\d:\d\d:\d\d POST \/v1\/webhooks 201 \d+ ms$/m);
    expect(output).toMatch(
      new RegExp(`^\\d\\d:\\d\\d:\\d\\d → ${webhook} attempt 1 200 \\d+ ms test \\(test event\\)$`, 'm'),
    );
    expect(output).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d → ${webhook} attempt 1 500 \\d+ ms test: HTTP 500`, 'm'));
    expect(output).not.toMatch(/^\{/m);
    expect(output).not.toContain(`${ESC}[`);
  });
});

describe('npm start with a port in use', () => {
  let blocker: Server;
  let port: number;
  beforeAll(async () => {
    blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    port = (blocker.address() as { port: number }).port;
    // A data directory in use before: a start on it has work to reconcile and journals to re-arm.
    const first = spawnScript('bin/local.ts', [], envOf('used'));
    await first.waitFor(/listening on/);
    await stop(first.child);
  }, 30_000);
  afterAll(() => new Promise((r) => blocker.close(r)));

  const withoutNpmNotices = (stderr: string) =>
    stderr
      .trim()
      .split('\n')
      .filter((l) => !/npm warn/.test(l));

  it('says which port and which setting in one line, exits 1, no stack trace and no log line before it', () => {
    // Act
    const result = runScript('bin/local.ts', [], envOf('used', { PORT: String(port) }));

    // Assert
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(withoutNpmNotices(result.stderr)).toEqual([
      `sendflow: port ${port} is already in use: set PORT to another port, or PORT=0 for any free port.`,
    ]);
    expect(result.stderr).not.toMatch(/\n\s+at |reconciler failed|is closing/);
  });

  it("says the same of the inbound SMTP server's port, naming SF_SMTP_PORT", () => {
    // Act
    const result = runScript('bin/local.ts', [], envOf('used', { SF_SMTP_PORT: String(port) }));

    // Assert
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(withoutNpmNotices(result.stderr)).toEqual([
      `sendflow: inbound SMTP port ${port} is already in use: set SF_SMTP_PORT to another port, or SF_SMTP_PORT=0 for any free port.`,
    ]);
  });
});
