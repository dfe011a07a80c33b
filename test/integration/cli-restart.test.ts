// `npm start` right after Ctrl-C: the previous runtime may still be draining (up to 10 s) and hold the data
// directory's lock. The new start waits for it, saying so in one line, then serves; nothing the first accepted
// is lost. Run as a user runs it: child processes on one data directory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
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

function start(env: Record<string, string>): Spawned {
  const runtime = spawnScript('bin/local.ts', [], env);
  children.push(runtime);
  return runtime;
}

const eventsArrived = () => new Set((receiver?.received ?? []).map((r) => r.headers['webhook-id'] as string)).size;

it('a start right after SIGINT waits for the draining runtime, then serves, and loses nothing it accepted', async () => {
  // Arrange: a runtime with deliveries in flight to an endpoint that never answers, so its stop drains for seconds.
  receiver = await startReceiver();
  receiver.answer({ kind: 'hang' });
  dir = mkdtempSync(join(tmpdir(), 'sendflow-restart-'));
  const env = {
    PORT: '0',
    SF_DATA_DIR: join(dir, 'data'),
    SF_LOCAL_STATE_FILE: join(dir, 'state.json'),
    SF_SIMULATOR_STEP_SECONDS: '0',
  };
  const first = start(env);
  const firstUrl = (await first.waitFor(/listening on (http:\/\/\S+)/, 30_000))[1] as string;
  const key = (await first.waitFor(/^\s+(sf_test_\w+)$/m))[1] as string;
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  const hook = await fetch(`${firstUrl}/webhooks`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url: `${receiver.url}/h`, events: ['email.sent'] }),
  });
  expect(hook.status).toBe(201);
  const emails = Array.from({ length: 10 }, (_, i) => ({
    from: 'a@acme.test',
    to: `user${i}@example.com`,
    subject: 's',
    text: 't',
  }));
  const batch = await fetch(`${firstUrl}/emails/batch`, { method: 'POST', headers, body: JSON.stringify(emails) });
  expect(batch.status).toBe(200);
  const accepted = ((await batch.json()) as { data: { id: string }[] }).data.map((e) => e.id);
  await receiver.waitFor(1, 20_000);

  // Act: Ctrl-C, and at once a new start on the same data directory.
  first.child.kill('SIGINT');
  const second = start(env);

  // Assert: it says it waits, then starts once the first has let go; the first had exited cleanly.
  await second.waitFor(/waiting for the previous Sendflow on this data directory/i, 15_000);
  const url = (await second.waitFor(/listening on (http:\/\/\S+)/, 40_000))[1] as string;
  expect(await first.exited()).toBe(0);
  receiver.answer({ kind: 'status', status: 200 });
  for (const id of accepted) expect((await fetch(`${url}/emails/${id}`, { headers })).status, id).toBe(200);
  const deadline = Date.now() + 30_000;
  while (eventsArrived() < accepted.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(eventsArrived()).toBe(accepted.length);
}, 90_000);
