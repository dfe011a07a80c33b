// `npm run listen` over real HTTP: the real CLI (a child process) against the local runtime forwards the
// account's events to a local receiver, signed so that the standardwebhooks package verifies them with the secret
// it printed, one line per event; Ctrl-C ends the session. And the session API itself: the cap, isolation between
// accounts and modes, bad input (422), the scope, an ended session.
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountKey } from '../../lambdas/app/accounts';
import { createSignInLink } from '../../lambdas/app/dashboard/sign-in';
import { serviceSignature } from '../../lambdas/domain/webhooks/signature';
import { runScript, spawnScript } from '../support/process';
import { type Receiver, startReceiver, stringHeaders } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let receiver: Receiver;
beforeAll(async () => {
  rt = await startTestRuntime();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await rt.stop();
});

const post = (key: string, path: string, body: unknown) =>
  rt.call(path, { method: 'POST', key, body: JSON.stringify(body) });

async function send(key: string, to: string): Promise<string> {
  const res = await post(key, '/emails', { from: 'Acme <hi@acme.test>', to, subject: 'Hello', html: '<p>x</p>' });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

interface Session {
  readonly id: string;
  readonly signing_secret: string;
  readonly events: string[] | null;
}
interface Poll {
  readonly data: { id: string; type: string; payload: string }[];
  readonly next_after: string | null;
}

async function open(key: string, body: unknown = {}): Promise<Session> {
  const res = await post(key, '/listen-sessions', body);
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Session;
}

/** Polls until `count` events have come (each poll waits up to 2 s). */
async function pollFor(key: string, id: string, count: number): Promise<Poll['data']> {
  const got: Poll['data'] = [];
  let after: string | null = null;
  for (let i = 0; i < 15 && got.length < count; i++) {
    const res = await rt.call(
      `/listen-sessions/${id}/events?wait=2${after ? `&after=${encodeURIComponent(after)}` : ''}`,
      {
        key,
      },
    );
    expect(res.status).toBe(200);
    const page = (await res.json()) as Poll;
    got.push(...page.data);
    after = page.next_after ?? after;
  }
  return got;
}

describe('npm run listen', () => {
  it('forwards a signed event that standardwebhooks verifies with the printed secret, one line per event, and Ctrl-C ends the session', async () => {
    // Arrange: the CLI against the runtime, forwarding to a receiver; only email.delivered.
    const { key } = await rt.newKey();
    const cli = spawnScript('bin/listen.ts', ['--forward-to', `${receiver.url}/laptop`, '--events', 'delivered'], {
      SENDFLOW_API_KEY: key,
      SENDFLOW_API_URL: rt.url,
    });
    try {
      const secret = (await cli.waitFor(/Signing secret: (whsec_\S+)/))[1] as string;
      await cli.waitFor(/Ready/);

      // Act: an email is sent; the simulator delivers it.
      const emailId = await send(key, 'delivered@simulator.sendflow.dev');
      const [request] = await receiver.waitFor(1, 20_000);
      const line = await cli.waitFor(/email\.delivered\s+(evt_\w+)\s+-> (\d{3})/, 20_000);

      // Assert: one request, signed as a webhook delivery: both signature headers, verified independently.
      expect(request?.path).toBe('/laptop');
      const headers = stringHeaders(request?.headers ?? {});
      const payload = new StandardWebhook(secret).verify(request?.body ?? '', headers) as Record<string, unknown>;
      expect(payload).toMatchObject({ type: 'email.delivered', email_id: emailId });
      expect(headers['x-service-signature']).toBe(serviceSignature(secret, request?.body ?? ''));
      expect(headers['webhook-id']).toBe(payload.id);
      expect(line[1]).toBe(payload.id);
      expect(line[2]).toBe('200');
      expect(receiver.received.filter((r) => r.path === '/laptop')).toHaveLength(1);

      // Ctrl-C: the session is deleted and the CLI exits 0.
      const session = /session (ls_\w+)/.exec(cli.output())?.[1] ?? '';
      cli.child.kill('SIGINT');
      expect(await cli.exited()).toBe(0);
      const after = await rt.call(`/listen-sessions/${session}/events?wait=0`, { key });
      expect(after.status, cli.output()).toBe(404);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
  }, 60_000);
});

describe('npm run listen against a stage whose polls answer at once (AWS: SF_LISTEN_MAX_WAIT_SECONDS=0)', () => {
  it('a poll asking to wait 20 s answers at once, and the CLI, polling again each second, still forwards', async () => {
    const aws = await startTestRuntime({ SF_LISTEN_MAX_WAIT_SECONDS: '0' });
    const { key } = await aws.newKey();
    const cli = spawnScript('bin/listen.ts', ['--forward-to', `${receiver.url}/at-once`, '--events', 'delivered'], {
      SENDFLOW_API_KEY: key,
      SENDFLOW_API_URL: aws.url,
    });
    try {
      const session = (await cli.waitFor(/Ready.*session (ls_\w+)/))[1] as string;
      const started = Date.now();
      const poll = await aws.call(`/listen-sessions/${session}/events?wait=20`, { key });
      expect(poll.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(2_000);

      const res = await aws.call('/emails', {
        key,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          from: 'Acme <hi@acme.test>',
          to: ['delivered@simulator.sendflow.dev'],
          subject: 'Hi',
          html: '<p>x</p>',
        }),
      });
      expect(res.status).toBe(200);
      await cli.waitFor(/email\.delivered\s+evt_\w+\s+-> 200/, 20_000);
      expect(receiver.received.filter((r) => r.path === '/at-once')).toHaveLength(1);
      cli.child.kill('SIGINT');
      expect(await cli.exited()).toBe(0);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
      await aws.stop();
    }
  }, 60_000);
});

describe('npm run listen: when it cannot go on', () => {
  it('exits 1 with one line when its session ended under it (deleted, or expired)', async () => {
    const { key } = await rt.newKey();
    const cli = spawnScript('bin/listen.ts', ['--forward-to', `${receiver.url}/gone`], {
      SENDFLOW_API_KEY: key,
      SENDFLOW_API_URL: rt.url,
    });
    try {
      const session = (await cli.waitFor(/Ready.*session (ls_\w+)/))[1] as string;
      expect((await rt.call(`/listen-sessions/${session}`, { method: 'DELETE', key })).status).toBe(200);
      expect(await cli.exited()).toBe(1);
      expect(cli.output()).toMatch(/The listen session ended/);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
  }, 40_000);

  it('exits 2 with the usage for a missing --forward-to, an unknown flag or no key; 1 when the key is refused', async () => {
    const env = { SENDFLOW_API_KEY: 'sf_test_x', SENDFLOW_API_URL: rt.url };
    const missing = runScript('bin/listen.ts', [], env);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/--forward-to must be an http\(s\) URL/);
    expect(missing.stderr).toMatch(/usage: /);
    expect(runScript('bin/listen.ts', ['--forward-to', 'http://127.0.0.1:1/', '--nope'], env).status).toBe(2);
    const noKey = runScript('bin/listen.ts', ['--forward-to', 'http://127.0.0.1:1/'], { SENDFLOW_API_KEY: '' });
    expect(noKey.status).toBe(2);
    expect(noKey.stderr).toMatch(/Set SENDFLOW_API_KEY/);
    // Asynchronously: the runtime answering the CLI runs in this very process.
    const refused = spawnScript('bin/listen.ts', ['--forward-to', 'http://127.0.0.1:1/'], env);
    expect(await refused.exited()).toBe(1);
    expect(refused.output()).toMatch(/Could not open a listen session: 401/);
  }, 60_000);
});

describe('listen sessions API', () => {
  it('holds every event type when none is named, each with the exact standard payload', async () => {
    const { key } = await rt.newKey();
    const session = await open(key);
    expect(session.events).toBeNull();
    expect(session.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const emailId = await send(key, 'delivered@simulator.sendflow.dev');
    const events = await pollFor(key, session.id, 2);
    // In the order they were put on the session: the simulator's two events come at once here, either first.
    expect(events.map((e) => e.type).sort()).toEqual(['email.delivered', 'email.sent']);
    for (const event of events) expect(JSON.parse(event.payload)).toMatchObject({ id: event.id, email_id: emailId });
  }, 40_000);

  it("never gets another account's events, nor its own account's other mode's", async () => {
    // Arrange: a session in test mode, and one in live mode of the same account; another account sends.
    const mine = await rt.newKey({ mode: 'test' });
    const other = await rt.newKey({ mode: 'test' });
    const { secret: liveKey } = await createAccountKey(rt.admin, { accountId: mine.accountId, mode: 'live' });
    const session = await open(mine.key);
    const liveSession = await open(liveKey);

    // Act: the other account sends, then this account's test mode does.
    await send(other.key, 'delivered@simulator.sendflow.dev');
    await rt.settle();
    const res = await rt.call(`/listen-sessions/${session.id}/events?wait=2`, { key: mine.key });
    await send(mine.key, 'delivered@simulator.sendflow.dev');
    await rt.settle();
    const live = await rt.call(`/listen-sessions/${liveSession.id}/events?wait=2`, { key: liveKey });

    // Assert: nothing of the other account; nothing of test mode on the live session.
    expect(res.status).toBe(200);
    expect(((await res.json()) as Poll).data).toEqual([]);
    expect(live.status).toBe(200);
    expect(((await live.json()) as Poll).data).toEqual([]);
    expect((await pollFor(mine.key, session.id, 2)).map((e) => e.type).sort()).toEqual([
      'email.delivered',
      'email.sent',
    ]);
    // Another account, or the other mode, cannot poll nor end the session: it is not found.
    for (const key of [other.key, liveKey]) {
      expect((await rt.call(`/listen-sessions/${session.id}/events?wait=0`, { key })).status).toBe(404);
      expect((await rt.call(`/listen-sessions/${session.id}`, { method: 'DELETE', key })).status).toBe(404);
    }
  }, 30_000);

  it('caps live sessions at 5 per account (422 limit_exceeded); ending one frees a place', async () => {
    const { key } = await rt.newKey();
    const sessions = [];
    for (let i = 0; i < 5; i++) sessions.push(await open(key));
    const sixth = await post(key, '/listen-sessions', {});
    expect(sixth.status).toBe(422);
    expect(await sixth.json()).toMatchObject({ code: 'limit_exceeded', status: 422 });
    const ended = await rt.call(`/listen-sessions/${sessions[0]?.id}`, { method: 'DELETE', key });
    expect(ended.status).toBe(200);
    expect(await ended.json()).toEqual({ object: 'listen_session', id: sessions[0]?.id, deleted: true });
    await open(key);
  });

  it("waiting long-polls hold none of the account's gateway slots: its other requests answer at once while 4 polls wait", async () => {
    // Arrange: 4 sessions, each long-polling (the local gateway runs 4 requests of an account at a time).
    const { key } = await rt.newKey();
    const sessions = [];
    for (let i = 0; i < 4; i++) sessions.push(await open(key));
    const polls = sessions.map((s) => rt.call(`/listen-sessions/${s.id}/events?wait=6`, { key }));
    await new Promise((r) => setTimeout(r, 300));

    // Act
    const started = Date.now();
    const list = await rt.call('/webhooks', { key });
    const took = Date.now() - started;

    // Assert
    expect(list.status).toBe(200);
    expect(took).toBeLessThan(3_000);
    expect((await Promise.all(polls)).map((r) => r.status)).toEqual([200, 200, 200, 200]);
  }, 20_000);

  it('refuses bad input with 422: unknown event, unknown field, bad cursor, bad wait', async () => {
    const { key } = await rt.newKey();
    const unknown = await post(key, '/listen-sessions', { events: ['email.delivred'] });
    expect(unknown.status).toBe(422);
    expect(((await unknown.json()) as { details: { path: string }[] }).details[0]?.path).toBe('events.0');
    expect((await post(key, '/listen-sessions', { events: [] })).status).toBe(422);
    expect((await post(key, '/listen-sessions', { url: 'http://x' })).status).toBe(422);
    const session = await open(key);
    expect((await rt.call(`/listen-sessions/${session.id}/events?after=nope`, { key })).status).toBe(422);
    expect((await rt.call(`/listen-sessions/${session.id}/events?wait=21`, { key })).status).toBe(422);
    expect((await rt.call(`/listen-sessions/${session.id}/events?limit=5`, { key })).status).toBe(422);
  });

  it('needs webhook:write: a send-only key is refused (403)', async () => {
    const { key } = await rt.newKey({ scopes: ['email:send'] });
    expect((await post(key, '/listen-sessions', {})).status).toBe(403);
  });
});

describe("the dashboard's webhooks page", () => {
  it("says how to listen on a laptop, with the mode of the page and this API's real URL", async () => {
    const { accountId } = await rt.newKey();
    const { url } = await createSignInLink(rt.services, { accountId, mode: 'test', baseUrl: rt.url });
    const token = new URL(url).searchParams.get('token') ?? '';
    const signIn = await fetch(`${rt.url}/dashboard/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
    });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const page = await (await fetch(`${rt.url}/dashboard/webhooks`, { headers: { cookie } })).text();
    expect(page).toContain('<h2 id="listen-h">Test on your laptop</h2>');
    expect(page).toContain(
      `SENDFLOW_API_URL=${rt.url} SENDFLOW_API_KEY=sf_test_… npm run listen -- --forward-to http://127.0.0.1:PORT/webhooks`,
    );
  });
});
