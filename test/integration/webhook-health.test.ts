// Endpoint health over real HTTP against the local runtime (issue 18, items 1 and 2): a webhook failing past the
// window (shortened by SF_WEBHOOK_DISABLE_AFTER_SECONDS, 10 failed deliveries) is disabled and `webhook.disabled`
// arrives, signed, at another webhook of the account (after one `webhook.failing`); a resume clears the reason and
// the streak; `Retry-After: 3` on a 503 moves the next attempt at least 3 s out with SF_RETRY_DELAYS=1,1,1,1; a
// 410 disables at once.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Received, type Receiver, startReceiver, stringHeaders } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
const receivers: Receiver[] = [];

beforeAll(async () => {
  rt = await startTestRuntime({
    SF_RETRY_DELAYS: '1,1,1,1',
    SF_WEBHOOK_DISABLE_AFTER_SECONDS: '3',
    SF_WEBHOOK_FAILING_AFTER_SECONDS: '1',
  });
});
afterAll(() => rt.stop());
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

interface Hook {
  id: string;
  signing_secret: string;
}

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

async function createHook(key: string, url: string, events: string[]): Promise<Hook> {
  const res = await rt.call('/webhooks', { method: 'POST', key, body: JSON.stringify({ url, events }) });
  expect(res.status).toBe(201);
  return (await res.json()) as Hook;
}

const sendEmail = async (key: string) => {
  const res = await rt.call('/emails', {
    method: 'POST',
    key,
    body: JSON.stringify({ from: 'Acme <hello@acme.test>', to: 'user@example.com', subject: 'Hi', html: '<p>Hi</p>' }),
  });
  expect(res.status).toBe(200);
};

async function getHook(key: string, id: string) {
  const res = await rt.call(`/webhooks/${id}`, { key });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

async function until<T>(read: () => Promise<T>, predicate: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (predicate(value)) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The events a watcher received of `type`, each verified with its signing secret by standardwebhooks. */
function verifiedEvents(watcher: Receiver, secret: string, type: string) {
  return watcher.received
    .map(
      (got: Received) =>
        new StandardWebhook(secret).verify(got.body, stringHeaders(got.headers)) as Record<string, unknown>,
    )
    .filter((event) => event.type === type);
}

// ajv-formats is CommonJS: its function is the default export's default under ESM interop.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as typeof addFormatsModule;

/** Each event validates against its type's schema as GET /v1/event-types serves it (the event catalog). */
async function expectCatalogued(key: string, events: readonly Record<string, unknown>[]) {
  const catalog = (await (await rt.call('/event-types', { key })).json()) as {
    data: { type: string; schema: Record<string, unknown> }[];
  };
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  for (const event of events) {
    const schema = catalog.data.find((entry) => entry.type === event.type)?.schema;
    expect(schema, String(event.type)).toBeDefined();
    const validate = ajv.compile(schema ?? {});
    expect(validate(event) ? [] : validate.errors, String(event.type)).toEqual([]);
  }
}

describe('auto-disable', () => {
  it('disables a webhook failing past the window with 10 failed deliveries; webhook.disabled arrives signed at another webhook; a resume clears', async () => {
    // Arrange: one webhook that always fails, one that watches the account's webhooks, one bystander.
    const { key, accountId } = await rt.newKey();
    const failing = await receiver();
    failing.answer({ kind: 'status', status: 500, body: 'down' });
    const watching = await receiver();
    const hook = await createHook(key, `${failing.url}/hook`, ['email.sent']);
    const watcher = await createHook(key, `${watching.url}/watch`, ['webhook.disabled', 'webhook.failing']);
    const bystander = await receiver();
    await createHook(key, `${bystander.url}/other`, ['email.delivered']);
    const started = Date.now();

    // Act: 10 failed deliveries now; one more after a second (the failing notice), one after the window.
    for (let i = 0; i < 10; i++) await sendEmail(key);
    await failing.waitFor(10);
    const beforeWindow = await getHook(key, hook.id);
    await new Promise((r) => setTimeout(r, Math.max(0, started + 1_200 - Date.now())));
    await sendEmail(key);
    await until(
      async () => verifiedEvents(watching, watcher.signing_secret, 'webhook.failing'),
      (events) => events.length === 1,
    );
    await new Promise((r) => setTimeout(r, Math.max(0, started + 3_300 - Date.now())));
    await sendEmail(key);
    const disabled = await until(
      () => getHook(key, hook.id),
      (h) => h.active === false,
    );
    const [announced] = await until(
      async () => verifiedEvents(watching, watcher.signing_secret, 'webhook.disabled'),
      (events) => events.length === 1,
    );

    // Assert
    expect(beforeWindow).toMatchObject({ active: true, disabled_reason: null, disabled_at: null });
    expect(disabled).toMatchObject({
      active: false,
      disabled_reason: 'failing',
      disabled_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      success_rate_24h: 0,
      // Issue 31: a webhook Sendflow disabled says so in `health` too.
      health: 'disabled',
      last_failure_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(announced).toMatchObject({
      type: 'webhook.disabled',
      data: {
        webhook_id: hook.id,
        url: `${failing.url}/hook`,
        reason: 'failing',
        last_error_class: 'http_5xx',
        last_status_code: 500,
        disabled_at: disabled.disabled_at,
      },
    });
    expect(verifiedEvents(watching, watcher.signing_secret, 'webhook.failing')).toHaveLength(1);
    await expectCatalogued(key, [
      announced as Record<string, unknown>,
      ...verifiedEvents(watching, watcher.signing_secret, 'webhook.failing'),
    ]);
    // A webhook not subscribed to them gets no webhook events (only its email.delivered).
    expect(
      bystander.received.map((got) => JSON.parse(got.body).type as string).filter((t) => t.startsWith('webhook.')),
    ).toEqual([]);
    expect(bystander.received.length).toBeGreaterThan(0);
    // No request reaches a disabled webhook: its pending retries end failed (webhook_paused), kept in the log.
    await rt.settle();
    const requests = failing.received.length;
    await sendEmail(key);
    await rt.settle();
    expect(failing.received).toHaveLength(requests);

    // Act: the owner fixes the endpoint and resumes.
    failing.answer({ kind: 'status', status: 200 });
    const resumed = await rt.call(`/webhooks/${hook.id}`, {
      method: 'PUT',
      key,
      body: JSON.stringify({ active: true }),
    });

    // Assert: reason and streak cleared; deliveries flow again.
    expect(resumed.status).toBe(200);
    expect(await resumed.json()).toMatchObject({ active: true, disabled_reason: null, disabled_at: null });
    expect(await getHook(key, hook.id)).toMatchObject({ active: true, disabled_reason: null, disabled_at: null });
    const stored = await rt.repos.webhooks.get({ accountId, mode: 'test' }, hook.id);
    expect(stored).toMatchObject({ failingSince: null, failedDeliveries: null, disabledReason: null });
    await sendEmail(key);
    await until(
      async () => failing.received.length,
      (n) => n > requests,
    );
  }, 60_000);

  it('a 410 Gone disables the webhook at once (gone) and tells the other webhooks', async () => {
    // Arrange
    const { key } = await rt.newKey();
    const gone = await receiver();
    gone.answer({ kind: 'status', status: 410, body: 'gone' });
    const watching = await receiver();
    const hook = await createHook(key, `${gone.url}/hook`, ['email.sent']);
    const watcher = await createHook(key, `${watching.url}/watch`, ['webhook.disabled']);

    // Act
    await sendEmail(key);
    const disabled = await until(
      () => getHook(key, hook.id),
      (h) => h.active === false,
    );
    const [announced] = await until(
      async () => verifiedEvents(watching, watcher.signing_secret, 'webhook.disabled'),
      (events) => events.length === 1,
    );
    await rt.settle();

    // Assert: one request, no retry reached the endpoint.
    // Issue 31: 0% success and disabled by the 410 is not `healthy`.
    expect(disabled).toMatchObject({
      disabled_reason: 'gone',
      disabled_at: expect.any(String),
      success_rate_24h: 0,
      health: 'disabled',
    });
    expect(announced).toMatchObject({
      data: { webhook_id: hook.id, reason: 'gone', last_status_code: 410, failing_since: null },
    });
    await expectCatalogued(key, [announced as Record<string, unknown>]);
    expect(gone.received).toHaveLength(1);
  }, 30_000);
});

describe('Retry-After', () => {
  it('a 503 with Retry-After: 3 moves the next attempt at least 3 s out (schedule 1 s), and the attempt log says so', async () => {
    // Arrange
    const { key } = await rt.newKey();
    const paced = await receiver();
    paced.answer((n) =>
      n === 1 ? { kind: 'status', status: 503, headers: { 'Retry-After': '3' } } : { kind: 'status', status: 200 },
    );
    const hook = await createHook(key, `${paced.url}/hook`, ['email.sent']);

    // Act
    await sendEmail(key);
    const [first, second] = await paced.waitFor(2, 20_000);

    // Assert
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(3_000);
    type Row = { status: string; attempt_log: Record<string, unknown>[] };
    const delivery = await until(
      async () => {
        const res = await rt.call(`/webhooks/${hook.id}/deliveries`, { key });
        return ((await res.json()) as { data: Row[] }).data[0];
      },
      (d) => d?.status === 'succeeded',
    );
    expect(delivery?.attempt_log.map((a) => [a.status_code, a.retry_after_seconds])).toEqual([
      [503, 3],
      [200, null],
    ]);
  }, 30_000);
});
