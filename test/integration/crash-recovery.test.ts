// Nothing accepted is lost by `npm start` itself: kill -9 while it works, or SIGTERM with a backlog behind a
// slow endpoint, then a restart on the same data directory, and every accepted email's events still reach the
// webhook (at least once; a repeat carries the same webhook-id). Run as a user runs it: child processes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Spawned, spawnScript } from '../support/process';
import { type Receiver, startReceiver } from '../support/receiver';

let dir: string;
let receiver: Receiver | undefined;
const children: Spawned[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.child.exitCode === null) child.child.kill('SIGKILL');
  await receiver?.close();
  receiver = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function start(env: Record<string, string>) {
  const runtime = spawnScript('bin/local.ts', [], env);
  children.push(runtime);
  const url = (await runtime.waitFor(/listening on (http:\/\/\S+)/, 30_000))[1] as string;
  return { runtime, url };
}

function environment() {
  dir = mkdtempSync(join(tmpdir(), 'sendflow-crash-'));
  return {
    PORT: '0',
    SF_DATA_DIR: join(dir, 'data'),
    SF_LOCAL_STATE_FILE: join(dir, 'state.json'),
    SF_SIMULATOR_STEP_SECONDS: '0.2',
    SF_RECONCILE_INTERVAL_SECONDS: '2',
    SF_RECONCILE_GRACE_SECONDS: '2',
  };
}

/** Sets up a webhook for sent + delivered and accepts `count` emails (each 200); returns the key. */
async function acceptEmails(runtime: Spawned, url: string, count: number): Promise<void> {
  const key = (await runtime.waitFor(/^\s+(sf_test_\w+)$/m))[1] as string;
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  const hook = await fetch(`${url}/webhooks`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url: `${receiver?.url}/h`, events: ['email.sent', 'email.delivered'] }),
  });
  expect(hook.status).toBe(201);
  // The default account is on the free plan (10 requests/s): batches of 10 emails, each one request.
  for (let i = 0; i < count; i += 10) {
    const emails = Array.from({ length: Math.min(10, count - i) }, (_, j) => ({
      from: 'a@acme.test',
      to: `user${i + j}@example.com`,
      subject: 's',
      text: 't',
    }));
    let res = await fetch(`${url}/emails/batch`, { method: 'POST', headers, body: JSON.stringify(emails) });
    // The free plan's 10 requests a second: a refused batch stores nothing, so it is simply sent again.
    while (res.status === 429) {
      await new Promise((r) => setTimeout(r, 1_000));
      res = await fetch(`${url}/emails/batch`, { method: 'POST', headers, body: JSON.stringify(emails) });
    }
    expect(res.status).toBe(200);
  }
}

const uniqueIds = () => new Set((receiver?.received ?? []).map((r) => r.headers['webhook-id'] as string));

async function untilUnique(count: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (uniqueIds().size < count) {
    if (Date.now() > deadline) throw new Error(`${uniqueIds().size} of ${count} events arrived`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('npm start keeps what it accepted', () => {
  it('kill -9 while deliveries are in flight, then a restart: every event of every email arrives', async () => {
    receiver = await startReceiver();
    receiver.answer({ kind: 'slow', delayMs: 250, status: 200 });
    const env = environment();
    const first = await start(env);
    await acceptEmails(first.runtime, first.url, 60);
    await receiver.waitFor(10, 20_000);
    first.runtime.child.kill('SIGKILL');
    await first.runtime.exited();
    const before = uniqueIds().size;
    expect(before).toBeLessThan(120);

    await start(env);
    await untilUnique(120, 45_000);
    // Repeats only for attempts in flight at the kill, each with its event's webhook-id.
    expect(receiver.received.length - 120).toBeLessThanOrEqual(120 - before);
  }, 90_000);

  it('SIGTERM with a backlog behind a slow endpoint: exits within 10 s, then a restart delivers the rest', async () => {
    receiver = await startReceiver();
    receiver.answer({ kind: 'slow', delayMs: 1_500, status: 200 });
    const env = environment();
    const first = await start(env);
    await acceptEmails(first.runtime, first.url, 100);
    await receiver.waitFor(5, 20_000);
    const stopping = Date.now();
    first.runtime.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    // Stops accepting at once: a new request is refused (connection refused, or 503 while it drains).
    const late = await fetch(`${first.url}/emails`).then(
      (res) => res.status,
      () => 'refused',
    );
    expect([503, 'refused']).toContain(late);
    expect(await first.runtime.exited()).toBe(0);
    expect(Date.now() - stopping).toBeLessThan(10_000);
    expect(uniqueIds().size).toBeLessThan(200);

    receiver.answer({ kind: 'status', status: 200 });
    await start(env);
    await untilUnique(200, 45_000);
  }, 90_000);
});
