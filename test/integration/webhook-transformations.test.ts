// Webhook transformations over real HTTP (docs/webhooks.md, "Transformations"): a transformation that changes the
// payload, the URL, the method and a header reaches a loopback receiver that verifies the signature over the new
// body with `standardwebhooks`; hostile handlers (an infinite loop, a 100 MB allocation) fail their attempts with
// transformation_error within the limits while another webhook's deliveries keep arriving; a cancel ends the
// delivery without a request; a transformation is checked on create and update (422, nothing written); the
// simulate endpoint answers the request, a cancel or the error, for the stored or an unsaved transformation.
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORED_URL_PREFIX } from '../../lambdas/domain/webhooks/transformation';
import { localDynamoClient } from '../../lambdas/runtime/local/dynamo';
import { type Receiver, startReceiver, stringHeaders } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let receiver: Receiver;

beforeAll(async () => {
  [rt, receiver] = await Promise.all([startTestRuntime(), startReceiver()]);
});
afterAll(async () => {
  await receiver?.close();
  await rt?.stop();
});

type Json = Record<string, unknown>;
const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as Json });
const post = (path: string, key: string, body: unknown) =>
  rt.call(path, { method: 'POST', key, body: JSON.stringify(body) });
const sendEmail = (key: string, to = 'someone@example.com') =>
  post('/emails', key, { from: 'news@acme.test', to, subject: 'hello', text: 'hi' });
type Attempt = { error: string | null; error_class: string | null; status_code: number | null; duration_ms: number };
type Row = { status: string; response: string; attempt_log: Attempt[] };
const deliveriesOf = async (key: string, id: string) =>
  ((await (await rt.call(`/webhooks/${id}/deliveries`, { key })).json()) as { data: Row[] }).data;

describe('a transformed delivery', () => {
  it('sends the new payload to the new URL with a header and PUT, signed over the new body', async () => {
    // Arrange: a webhook whose transformation reshapes the payload (a Teams-like card), moves the URL and adds a header.
    const { key } = await rt.newKey();
    const transformation = `function handler(webhook) {
      webhook.url = webhook.url.replace('/original', '/moved');
      webhook.method = 'PUT';
      webhook.headers['X-Card'] = 'teams';
      webhook.payload = { title: webhook.eventType + ' for ' + webhook.payload.data.to, at: new Date().toISOString() };
      return webhook;
    }`;
    const created = await json(
      await post('/webhooks', key, { url: `${receiver.url}/original`, events: ['email.sent'], transformation }),
    );
    expect(created.status).toBe(201);
    expect(created.body.transformation).toBe(transformation);

    // Act
    expect((await sendEmail(key, 'card@example.com')).status).toBe(200);
    await rt.settle();

    // Assert: the receiver got the card at /moved, by PUT, and the library verifies the signature over that body.
    const got = receiver.received.filter((r) => r.path === '/moved');
    expect(got).toHaveLength(1);
    const [request] = got;
    expect(request?.method).toBe('PUT');
    expect(request?.headers['x-card']).toBe('teams');
    const verified = new StandardWebhook(created.body.signing_secret as string).verify(
      request?.body ?? '',
      stringHeaders(request?.headers ?? {}),
    ) as Json;
    expect(verified).toEqual({ title: 'email.sent for card@example.com', at: expect.any(String) });
    expect(receiver.received.some((r) => r.path === '/original')).toBe(false);
    const get = await json(await rt.call(`/webhooks/${created.body.id}`, { key }));
    expect(get.body.transformation).toBe(transformation);
  });

  it('fails hostile handlers with transformation_error within the limits while another webhook is delivered', async () => {
    // Arrange: an infinite loop, a 100 MB string, and a plain webhook beside them on the same account.
    const { key } = await rt.newKey();
    const make = async (path: string, transformation?: string) =>
      (
        await json(
          await post('/webhooks', key, {
            url: `${receiver.url}/${path}`,
            events: ['email.sent'],
            ...(transformation ? { transformation } : {}),
          }),
        )
      ).body.id as string;
    const loop = await make('loop', 'function handler(w) { while (true) {} }');
    const bomb = await make('bomb', 'function handler(w) { w.payload = "x".repeat(100 * 1024 * 1024); return w; }');
    await make('plain');

    // Act: five emails.
    const started = Date.now();
    for (let i = 0; i < 5; i++) expect((await sendEmail(key)).status).toBe(200);
    await rt.settle();
    const elapsed = Date.now() - started;

    // Assert: every plain delivery arrived; each hostile first attempt failed with its limit, no request made.
    expect(receiver.received.filter((r) => r.path === '/plain')).toHaveLength(5);
    expect(receiver.received.some((r) => r.path === '/loop' || r.path === '/bomb')).toBe(false);
    const first = async (id: string) => (await deliveriesOf(key, id)).map((d) => d.attempt_log[0]);
    const loops = await first(loop);
    const bombs = await first(bomb);
    expect(loops).toHaveLength(5);
    expect(bombs).toHaveLength(5);
    for (const a of loops) {
      expect(a).toMatchObject({
        error_class: 'transformation_error',
        error: 'transformation failed: CPU time limit exceeded (50 ms)',
      });
      // 50 ms of CPU, and the time to start a runtime on a loaded machine.
      expect(a?.duration_ms).toBeLessThan(500);
    }
    for (const a of bombs) {
      expect(a).toMatchObject({
        error_class: 'transformation_error',
        error: expect.stringMatching(/^transformation failed: .*out of memory$/),
      });
      expect(a?.duration_ms).toBeLessThan(500);
    }
    const plainLast = Math.max(...receiver.received.filter((r) => r.path === '/plain').map((r) => r.at)) - started;
    console.log(
      `hostile: plain webhook's 5 deliveries all in by ${plainLast} ms after the first send; loop attempts ${loops.map((a) => a?.duration_ms).join('/')} ms, 100 MB attempts ${bombs.map((a) => a?.duration_ms).join('/')} ms; 5 emails to 3 webhooks settled in ${elapsed} ms`,
    );
    const failedList = await json(
      await rt.call(`/webhooks/${loop}/deliveries?error_class=transformation_error`, { key }),
    );
    expect((failedList.body.data as unknown[]).length).toBe(5);
  });

  it('a cancel ends the delivery succeeded with no request; the response says the transformation canceled it', async () => {
    const { key } = await rt.newKey();
    const transformation =
      'function handler(w) { if (String(w.payload.data.to).startsWith("skip")) w.cancel = true; return w; }';
    const hook = await json(
      await post('/webhooks', key, { url: `${receiver.url}/cancel`, events: ['email.sent'], transformation }),
    );
    expect((await sendEmail(key, 'skip@example.com')).status).toBe(200);
    expect((await sendEmail(key, 'keep@example.com')).status).toBe(200);
    await rt.settle();
    const got = receiver.received.filter((r) => r.path === '/cancel').map((r) => JSON.parse(r.body) as Json);
    expect(got.map((p) => String((p.data as Json).to))).toEqual(['keep@example.com']);
    const rows = await deliveriesOf(key, hook.body.id as string);
    const canceled = rows.find((d) => d.response.startsWith('canceled'));
    expect(canceled).toMatchObject({
      status: 'succeeded',
      response: 'canceled by the transformation: no request was made',
      attempt_log: [{ error: '', error_class: null }],
    });
  });
});

describe('checked on create and update', () => {
  it('answers 422 on transformation for a syntax error, a missing handler and oversize source; writes nothing', async () => {
    const { key } = await rt.newKey();
    const base = { url: `${receiver.url}/x`, events: ['email.sent'] };
    for (const [transformation, message] of [
      ['function handler(w) { return w', /SyntaxError/],
      ['const x = 1;', /must define function handler/],
      [`function handler(w) { return w } //${'x'.repeat(20_000)}`, /at most 16384 characters/],
      ['while (true) {}', /CPU time limit exceeded/],
      [42, /must be a string/],
    ] as const) {
      const res = await json(await post('/webhooks', key, { ...base, transformation }));
      expect(res.status).toBe(422);
      const errors = JSON.stringify(res.body);
      expect(errors).toContain('transformation');
      expect(errors).toMatch(message);
    }
    const list = await json(await rt.call('/webhooks', { key }));
    expect(list.body.data).toEqual([]);

    const hook = await json(await post('/webhooks', key, base));
    const id = hook.body.id as string;
    const bad = await rt.call(`/webhooks/${id}`, {
      method: 'PATCH',
      key,
      body: JSON.stringify({ transformation: 'function handler(' }),
    });
    expect(bad.status).toBe(422);
    const ok = await json(
      await rt.call(`/webhooks/${id}`, {
        method: 'PATCH',
        key,
        body: JSON.stringify({ transformation: 'function handler(w) { return w }' }),
      }),
    );
    expect(ok.body.transformation).toBe('function handler(w) { return w }');
    expect(ok.body.url).toBe(`${receiver.url}/x`);
    // Stored: the URL behind a scheme the release before refuses to send to (docs/deploy-and-operate.md).
    const storedUrl = async () => {
      const doc = DynamoDBDocumentClient.from(localDynamoClient(rt.dynamoEndpoint));
      const items = (await doc.send(new ScanCommand({ TableName: 'sendflow-webhooks' }))).Items ?? [];
      doc.destroy();
      return items.find((item) => item.id === id)?.url as string;
    };
    expect(await storedUrl()).toBe(`${STORED_URL_PREFIX}${receiver.url}/x`);
    expect(new URL(await storedUrl()).protocol).toBe('sendflow-transformation+http:');
    const removed = await json(
      await rt.call(`/webhooks/${id}`, { method: 'PATCH', key, body: JSON.stringify({ transformation: null }) }),
    );
    expect(removed.body.transformation).toBeNull();
    expect(removed.body.url).toBe(`${receiver.url}/x`);
    expect(await storedUrl()).toBe(`${receiver.url}/x`);
  });
});

describe('POST /v1/webhooks/:id/transformation/simulate', () => {
  it('answers the request, a cancel, or the error; tries unsaved code; other tenants get 404', async () => {
    const { key } = await rt.newKey();
    const transformation = 'function handler(w) { w.payload = { n: w.payload.n + 1 }; w.url += "?v=2"; return w; }';
    const hook = await json(
      await post('/webhooks', key, { url: `${receiver.url}/sim`, events: ['email.sent'], transformation }),
    );
    const id = hook.body.id as string;
    const simulate = (body: unknown, as = key) => post(`/webhooks/${id}/transformation/simulate`, as, body);

    const stored = await json(await simulate({ event_type: 'email.sent', payload: { n: 1 } }));
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({
      object: 'transformation_simulation',
      outcome: 'request',
      error: null,
      request: { url: `${receiver.url}/sim?v=2`, method: 'POST', body: '{"n":2}' },
    });
    const headers = (stored.body.request as { headers: Record<string, string> }).headers;
    const body = (stored.body.request as { body: string }).body;
    expect(new StandardWebhook(hook.body.signing_secret as string).verify(body, headers)).toEqual({ n: 2 });

    const event = { type: 'email.sent', data: { to: 'a@example.com' } };
    const canceled = await json(
      await simulate({ event, transformation: 'function handler(w) { w.cancel = true; return w }' }),
    );
    expect(canceled.body).toMatchObject({ outcome: 'canceled', request: null, error: null });
    const thrown = await json(
      await simulate({ event, transformation: 'function handler(w) { throw new TypeError("nope") }' }),
    );
    expect(thrown.body).toMatchObject({ outcome: 'error', error: 'transformation failed: TypeError: nope' });
    const signature = await json(
      await simulate({
        event,
        transformation: 'function handler(w) { w.headers["webhook-signature"] = "v1,x"; return w }',
      }),
    );
    expect(signature.body.error).toMatch(/webhook-signature may not be set/);
    // The scheme rules (the SSRF guard on what a name resolves to: transformation unit test, without private URLs).
    const scheme = await json(
      await simulate({ event, transformation: 'function handler(w) { w.url = "file:///etc/passwd"; return w }' }),
    );
    expect(scheme.body).toMatchObject({ outcome: 'error', error: 'transformation failed: url must use http or https' });
    // Nothing was sent by any of it.
    expect(receiver.received.some((r) => r.path.startsWith('/sim'))).toBe(false);

    expect((await simulate({})).status).toBe(422);
    expect((await simulate({ event, event_type: 'email.sent', payload: {} })).status).toBe(422);
    const other = await rt.newKey();
    expect((await simulate({ event }, other.key)).status).toBe(404);
  });
});
