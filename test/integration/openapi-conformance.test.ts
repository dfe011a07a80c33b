// The document tells the truth: every operation of the API is driven once over real HTTP on the local runtime (a
// real receiver behind the webhook), and each answer (status, content type, required headers, body) is checked
// against what the served /v1/openapi.json declares for that operation (test/support/openapi-check, ajv). A
// manifest route this file does not drive fails the last test, so a new route gets checked once it is merged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../lambdas/handlers/http/openapi';
import { routes as allRoutes } from '../../lambdas/manifest';

/** The API's operations: the dashboard's pages are HTML for people, not in the document. */
const routes = allRoutes.filter((route) => !('dashboard' in route));

import { answerOf, type OpenApiChecker, openApiChecker } from '../support/openapi-check';
import { raw } from '../support/raw-http';
import { type Receiver, startReceiver, stringHeaders } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';
import { RawSmtp } from '../support/smtp-client';

type Body = Record<string, unknown> & { id: string };

let rt: TestRuntime;
let receiver: Receiver;
let checker: OpenApiChecker;
let key: string;
const covered = new Set<string>();

beforeAll(async () => {
  rt = await startTestRuntime();
  receiver = await startReceiver();
  ({ key } = await rt.newKey());
  const served = await fetch(`${rt.url}/openapi.json`);
  checker = openApiChecker((await served.json()) as Record<string, unknown>);
});
afterAll(async () => {
  await receiver.close();
  await rt.stop();
});

/** Calls the API and checks the answer against the document: `expected` status, then the declared shape. */
async function call(
  operationId: string,
  expected: number,
  path: string,
  init: RequestInit & { key?: string | null; json?: unknown } = {},
): Promise<Body> {
  const { json, key: given, ...rest } = init;
  const res = await rt.call(path, {
    ...rest,
    ...(given === null ? {} : { key: given ?? key }),
    ...(json !== undefined ? { method: rest.method ?? 'POST', body: JSON.stringify(json) } : {}),
  });
  const answer = await answerOf(res);
  expect(answer.status, `${operationId}: ${answer.body.slice(0, 300)}`).toBe(expected);
  expect(checker.check(operationId, answer)).toEqual([]);
  if (expected < 300) covered.add(operationId);
  return /json/.test(answer.headers.get('content-type') ?? '') ? (JSON.parse(answer.body) as Body) : ({} as Body);
}

const ids: Record<string, string> = {};
const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();

describe('every operation answers as the OpenAPI document says', () => {
  it('the reference routes', async () => {
    await call('getOpenApi', 200, '/openapi.json', { key: null });
    await call('apiReference', 200, '/reference', { key: null });
  });

  it('usage', async () => {
    await call('getUsage', 200, '/usage');
  });

  it('the event catalog, for a key of any scope', async () => {
    const { key: sender } = await rt.newKey({ scopes: ['email:send'] });
    await call('listEventTypes', 200, '/event-types', { key: sender });
  });

  it('the API request log', async () => {
    const page = (await call('listApiRequests', 200, '/logs')) as { data: { id: string }[] } & Body;
    await call('getApiRequest', 200, `/logs/${page.data[0]?.id}`);
  });

  it('API keys', async () => {
    const created = await call('createApiKey', 201, '/api-keys', { json: { name: 'sender', scopes: ['email:send'] } });
    await call('listApiKeys', 200, '/api-keys');
    await call('revokeApiKey', 200, `/api-keys/${created.id}`, { method: 'DELETE' });
  });

  it('webhooks, with a test send to a real receiver', async () => {
    const hook = await call('createWebhook', 201, '/webhooks', {
      json: { url: `${receiver.url}/hooks`, events: ['email.sent', 'delivered'], description: 'conformance' },
    });
    ids.webhook = hook.id;
    await call('listWebhooks', 200, '/webhooks');
    await call('getWebhook', 200, `/webhooks/${hook.id}`);
    await call('updateWebhook', 200, `/webhooks/${hook.id}`, { method: 'PUT', json: { events: ['email.sent'] } });
    await call('testWebhookFilter', 200, '/webhooks/filter-test', {
      json: { filter: { tags: { plan: 'pro' } }, event: { type: 'email.sent', data: {}, tags: { plan: 'free' } } },
    });
    await call('simulateWebhookTransformation', 200, `/webhooks/${hook.id}/transformation/simulate`, {
      json: { event_type: 'email.sent', payload: { n: 1 }, transformation: 'function handler(w) { return w }' },
    });
    await call('testWebhook', 200, `/webhooks/${hook.id}/test`, { method: 'POST' });
    await call('getWebhooksMetrics', 200, '/webhooks/metrics');
    await call('getWebhookMetrics', 200, `/webhooks/${hook.id}/metrics?window=7d`);
    await call('rotateWebhookSecret', 200, `/webhooks/${hook.id}/rotate-secret`, {
      json: { grace_period_seconds: 60 },
    });
    const [received] = await receiver.waitFor(1);
    await call('checkWebhookSignature', 200, `/webhooks/${hook.id}/signature-check`, {
      json: { headers: stringHeaders(received?.headers ?? {}), body: received?.body ?? '' },
    });
  });

  it('emails: send, batch, read, schedule and cancel', async () => {
    const email = { from: 'ops@acme.test', subject: 'Hi', text: 'Hi' };
    const sent = await call('sendEmail', 200, '/emails', { json: { ...email, to: 'reader@example.com' } });
    ids.email = sent.id;
    // Twelve email.sent deliveries: more than a recovery step takes, so a recovery is still running to cancel.
    const batch = Array.from({ length: 11 }, (_, i) => ({ ...email, to: `user${i}@example.com` }));
    await call('sendEmailBatch', 200, '/emails/batch', { json: batch });
    await rt.settle();
    await call('getEmail', 200, `/emails/${sent.id}`);
    const attached = await call('sendEmail', 200, '/emails', {
      json: { ...email, to: 'files@example.com', attachments: [{ filename: 'a.txt', content: 'QQ==' }] },
    });
    const listed = await call('listEmailAttachments', 200, `/emails/${attached.id}/attachments`);
    const [attachment] = listed.data as { id: string }[];
    await call('getEmailAttachment', 200, `/emails/${attached.id}/attachments/${attachment?.id}`);
    await call('listEmails', 200, '/emails?limit=5');
    await call('getEmailMetrics', 200, '/emails/metrics?dimensions=period,domain&granularity=weekly');
    await call('listEmailDeliveries', 200, `/emails/${sent.id}/deliveries`);
    const later = await call('sendEmail', 200, '/emails', {
      json: { ...email, to: 'later@example.com', scheduled_at: new Date(Date.now() + 86_400_000).toISOString() },
    });
    await call('updateEmail', 200, `/emails/${later.id}`, {
      method: 'PATCH',
      json: { scheduled_at: new Date(Date.now() + 2 * 86_400_000).toISOString() },
    });
    await call('cancelEmail', 200, `/emails/${later.id}/cancel`, { method: 'POST' });
    // A replayed answer (same Idempotency-Key and body) is the first one, with Idempotent-Replayed.
    const once = { json: { ...email, to: 'once@example.com' }, headers: { 'Idempotency-Key': 'conformance-1' } };
    const first = await call('sendEmail', 200, '/emails', once);
    expect(await call('sendEmail', 200, '/emails', once)).toEqual(first);
  });

  it('the delivery log and a manual retry', async () => {
    const page = (await call(
      'listDeliveries',
      200,
      `/webhooks/${ids.webhook}/deliveries?status=succeeded&limit=5`,
    )) as {
      data: { id: string }[];
    } & Body;
    const first = page.data[0]?.id ?? '';
    expect(first).not.toBe('');
    await call('getDelivery', 200, `/webhooks/${ids.webhook}/deliveries/${first}`);
    await call('retryDelivery', 200, `/webhooks/${ids.webhook}/deliveries/${first}/retry`, { method: 'POST' });
    // The same log as Resend's webhook events.
    const events = (await call('listWebhookEvents', 200, `/webhooks/${ids.webhook}/events?limit=20`)) as {
      data: { id: string; status: string }[];
    } & Body;
    const event = events.data[0]?.id ?? '';
    await call('getWebhookEvent', 200, `/webhooks/${ids.webhook}/events/${event}`);
    await call('listWebhookEventAttempts', 200, `/webhooks/${ids.webhook}/events/${event}/attempts`);
    // Another one than the delivery just retried (a second retry within 2 s of it is 409).
    const other = events.data.find((e) => e.id !== first && e.status === 'success')?.id ?? '';
    expect(other, JSON.stringify(events.data)).not.toBe('');
    await call('replayWebhookEvent', 200, `/webhooks/${ids.webhook}/events/${other}/replay`, { method: 'POST' });
  });

  it("webhooks under Resend's names: PATCH, signing-secret/rotate", async () => {
    await call('patchWebhook', 200, `/webhooks/${ids.webhook}`, { method: 'PATCH', json: { status: 'enabled' } });
    await call('rotateWebhookSigningSecret', 200, `/webhooks/${ids.webhook}/signing-secret/rotate`, {
      method: 'POST',
    });
  });

  it('suppressions: add, batch add, list, get, remove, batch remove', async () => {
    const added = await call('addSuppression', 201, '/suppressions', { json: { email: 'gone@example.com' } });
    await call('batchAddSuppressions', 201, '/suppressions/batch/add', { json: { emails: ['b@example.com'] } });
    await call('listSuppressions', 200, '/suppressions?limit=1&origin=manual');
    await call('getSuppression', 200, `/suppressions/${added.id}`);
    await call('removeSuppression', 200, '/suppressions/gone@example.com', { method: 'DELETE' });
    await call('batchRemoveSuppressions', 200, '/suppressions/batch/remove', { json: { emails: ['b@example.com'] } });
    await call('getSuppression', 404, `/suppressions/${added.id}`);
  });

  it('a recovery job: started (202), followed, canceled', async () => {
    const job = await call('startRecovery', 202, `/webhooks/${ids.webhook}/recoveries`, {
      json: { since: hoursAgo(1) },
    });
    await call('cancelRecovery', 200, `/webhooks/${ids.webhook}/recoveries/${job.id}/cancel`, { method: 'POST' });
    await call('getRecovery', 200, `/webhooks/${ids.webhook}/recoveries/${job.id}`);
    await call('listRecoveries', 200, `/webhooks/${ids.webhook}/recoveries`);
  });

  it('domains', async () => {
    const domain = await call('createDomain', 201, '/domains', { json: { name: 'mail.example.com' } });
    await call('listDomains', 200, '/domains');
    await call('getDomain', 200, `/domains/${domain.id}`);
    await call('updateDomain', 200, `/domains/${domain.id}`, { method: 'PATCH', json: { open_tracking: true } });
    await call('verifyDomain', 200, `/domains/${domain.id}/verify`, { method: 'POST' });
    await call('deleteDomain', 200, `/domains/${domain.id}`, { method: 'DELETE' });
  });

  it('received emails: a message over SMTP to a receiving live domain, then list, read, attachments', async () => {
    const { key: live } = await rt.newKey({ mode: 'live' });
    const domain = await call('createDomain', 201, '/domains', {
      key: live,
      json: { name: 'in.example.com', capabilities: { receiving: 'enabled' } },
    });
    await call('verifyDomain', 200, `/domains/${domain.id}/verify`, { key: live, method: 'POST' });
    const { client } = await RawSmtp.open(rt.smtpPort);
    const sent = await client.send(
      'a@sender.example',
      ['b@in.example.com'],
      [
        'Subject: conformance',
        'Content-Type: multipart/mixed; boundary="b"',
        '',
        '--b',
        'Content-Type: text/plain',
        '',
        'hello',
        '--b',
        'Content-Type: application/pdf; name="a.pdf"',
        'Content-Disposition: attachment; filename="a.pdf"',
        '',
        'pdf',
        '--b--',
        '',
      ].join('\r\n'),
    );
    client.close();
    expect(sent.data.code).toBe(250);
    await rt.inbound.idle();
    const list = (await call('listReceivedEmails', 200, '/emails/receiving?limit=5', { key: live })) as unknown as {
      data: Body[];
    };
    const id = list.data[0]?.id ?? '';
    await call('getReceivedEmail', 200, `/emails/receiving/${id}`, { key: live });
    const files = (await call('listReceivedAttachments', 200, `/emails/receiving/${id}/attachments`, {
      key: live,
    })) as unknown as { data: Body[] };
    await call('getReceivedAttachment', 200, `/emails/receiving/${id}/attachments/${files.data[0]?.id}`, { key: live });
  });

  it('templates, and an email sent by one', async () => {
    const created = await call('createTemplate', 201, '/templates', {
      json: {
        name: 'Order',
        alias: 'conformance-order',
        subject: 'Your {{{PRODUCT}}}',
        from: 'Acme <orders@acme.example>',
        html: '<p>{{{PRODUCT}}} for {{{PRICE}}}</p>',
        variables: [
          { key: 'PRODUCT', type: 'string' },
          { key: 'PRICE', type: 'number', fallback_value: 25 },
        ],
      },
    });
    await call('listTemplates', 200, '/templates?limit=5');
    await call('publishTemplate', 200, `/templates/${created.id}/publish`, { method: 'POST' });
    await call('updateTemplate', 200, `/templates/${created.id}`, { method: 'PATCH', json: { text: '{{{PRODUCT}}}' } });
    await call('getTemplate', 200, '/templates/conformance-order');
    const sent = await call('sendEmail', 200, '/emails', {
      json: { to: 'success@simulator.amazonses.com', template: { id: created.id, variables: { PRODUCT: 'Pen' } } },
    });
    const email = await call('getEmail', 200, `/emails/${sent.id}`);
    expect(email.template_id).toBe(created.id);
    const copy = await call('duplicateTemplate', 200, `/templates/${created.id}/duplicate`, { method: 'POST' });
    await call('deleteTemplate', 200, `/templates/${copy.id}`, { method: 'DELETE' });
  });

  it('contacts, with the double opt-in pages', async () => {
    const contact = await call('createContact', 201, '/contacts', {
      json: { email: 'new@example.com', first_name: 'Ada' },
    });
    await call('listContacts', 200, '/contacts');
    await call('getContact', 200, `/contacts/${contact.id}`);
    await call('updateContact', 200, `/contacts/${contact.id}`, { method: 'PATCH', json: { last_name: 'Lovelace' } });
    const link = String(contact.confirmation_url).slice(rt.url.length);
    await call('confirmContactPage', 200, link, { key: null });
    await call('confirmContact', 200, link, { key: null, method: 'POST' });
    await call('deleteContact', 200, `/contacts/${contact.id}`, { method: 'DELETE' });
    await call('confirmContactPage', 410, link, { key: null });
  });

  it('one-click unsubscribe: the page, then the RFC 8058 form post', async () => {
    const email = (await (await rt.call(`/emails/${ids.email}`, { key })).json()) as {
      recipient_headers: Record<string, Record<string, string>>;
    };
    const url = (email.recipient_headers['reader@example.com']?.['List-Unsubscribe'] ?? '').slice(1, -1);
    const link = url.slice(rt.url.length);
    await call('unsubscribePage', 200, link, { key: null });
    await call('unsubscribe', 200, link, {
      key: null,
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
  });

  it('listen sessions: open, poll an event, end', async () => {
    const session = await call('createListenSession', 201, '/listen-sessions', { json: { events: ['email.sent'] } });
    const sent = await rt.call('/emails', {
      method: 'POST',
      key,
      body: JSON.stringify({
        from: 'Acme <hi@acme.test>',
        to: 'delivered@simulator.sendflow.dev',
        subject: 'Hi',
        html: '<p>x</p>',
      }),
    });
    expect(sent.status).toBe(200);
    const page = await call('pollListenSession', 200, `/listen-sessions/${session.id}/events?wait=10`);
    expect(page.data).toHaveLength(1);
    await call('pollListenSession', 422, `/listen-sessions/${session.id}/events?wait=99`);
    await call('deleteListenSession', 200, `/listen-sessions/${session.id}`, { method: 'DELETE' });
    await call('deleteListenSession', 404, `/listen-sessions/${session.id}`, { method: 'DELETE' });
  });

  it('errors: 401, 403, 404, 422 and 405 have the declared Error shape and headers', async () => {
    await call('listWebhooks', 401, '/webhooks', { key: 'sf_test_not-a-key' });
    const { key: sender } = await rt.newKey({ scopes: ['email:send'] });
    await call('listWebhooks', 403, '/webhooks', { key: sender });
    await call('getWebhook', 404, '/webhooks/wh_unknown');
    await call('createWebhook', 422, '/webhooks', { json: { url: 'https://hooks.example.com', events: [] } });
    await call('listDeliveries', 422, `/webhooks/${ids.webhook}/deliveries?error_class=slow`);
    await call('unsubscribe', 422, `/unsubscribe/${'a'.repeat(20)}.${'b'.repeat(43)}`, { key: null, method: 'POST' });
    await call('deleteWebhook', 200, `/webhooks/${ids.webhook}`, { method: 'DELETE' });
    await call('getWebhook', 405, '/webhooks/x', { method: 'POST' });
  });

  it('covers every operation of the manifest and of the document', () => {
    expect([...covered].sort()).toEqual(routes.map((route) => route.id).sort());
    expect([...checker.operationIds].sort()).toEqual(routes.map((route) => route.id).sort());
  });
});

describe('the API reference, served offline at stable URLs', () => {
  it('GET /v1/openapi.json answers the generated document, without an API key', async () => {
    const res = await fetch(`${rt.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const { servers, ...served } = (await res.json()) as { servers: unknown };
    const { servers: _generated, ...generated } = JSON.parse(JSON.stringify(buildOpenApi()));
    expect(served).toEqual(generated);
    // It names the server it came from (this runtime's port, not the default 3000): a client built from it works.
    expect(servers).toEqual([{ url: new URL(rt.url).origin, description: expect.any(String) }]);
  });

  it('names the host and scheme a request came through (a deployed stage behind https), never a forged one', async () => {
    // node:http, since fetch never sends the Host it is given.
    const viaGateway = await raw(rt, 'GET', '/openapi.json', { Host: 'api.example.com', 'X-Forwarded-Proto': 'https' });
    const forged = await raw(rt, 'GET', '/openapi.json', { Host: 'evil.example/"><x' });

    expect(viaGateway.status).toBe(200);
    expect((JSON.parse(viaGateway.body) as { servers: unknown }).servers).toEqual([
      { url: 'https://api.example.com', description: expect.any(String) },
    ]);
    expect(forged.status).toBe(200);
    expect((JSON.parse(forged.body) as { servers: { url: string }[] }).servers.map((s) => s.url)).toEqual(['/']);
  });

  it('gives every field of the served reference a description and an example', async () => {
    const served = (await (await fetch(`${rt.url}/openapi.json`)).json()) as Record<string, unknown>;
    const page = await (await fetch(`${rt.url}/reference`)).text();

    const fields = [...servedFields(served)];
    expect(fields.length).toBeGreaterThan(800);
    expect(
      fields.filter((f) => typeof f.schema.description !== 'string' || !f.schema.description).map((f) => f.at),
    ).toEqual([]);
    expect(fields.filter((f) => f.schema.example === undefined).map((f) => f.at)).toEqual([]);
    // On the page: no field or parameter row with an empty Description or Example cell.
    const rows = [...page.matchAll(/<tr><td><code>([^<]*)<\/code><\/td>(.*?)<\/tr>/g)].filter(([, , rest]) =>
      /<td>(?:yes|no)<\/td>/.test(rest ?? ''),
    );
    expect(rows.length).toBeGreaterThan(500);
    expect(rows.filter(([, , rest]) => /<td><\/td>/.test(rest ?? '')).map(([, name]) => name)).toEqual([]);
  });

  it('GET /v1/reference is one HTML page listing every operation with its anchor, under a strict CSP', async () => {
    const res = await fetch(`${rt.url}/reference`);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).not.toMatch(/unsafe-inline|https?:/);
    expect(html).not.toMatch(/<script|src="http|href="http/);
    for (const route of routes) {
      expect(html, route.id).toContain(`<article id="op-${route.id}">`);
      expect(html, route.id).toContain(`href="#op-${route.id}"`);
      expect(html).toContain(`<code>/v1${route.path}</code>`);
    }
    expect(html).toContain('id="schema-Delivery"');
    expect(html).toContain('href="openapi.json"');
  });
});

/** Every field of a served OpenAPI document: schema properties (components, bodies, answers, webhooks), parameters. */
function* servedFields(doc: Record<string, unknown>): Generator<{ at: string; schema: Record<string, unknown> }> {
  type Json = Record<string, unknown>;
  function* walk(schema: unknown, at: string): Generator<{ at: string; schema: Json }> {
    if (!schema || typeof schema !== 'object') return;
    const s = schema as Json;
    for (const [name, inner] of Object.entries((s.properties ?? {}) as Record<string, Json>)) {
      yield { at: `${at}.${name}`, schema: inner };
      yield* walk(inner, `${at}.${name}`);
    }
    for (const key of ['items', 'additionalProperties']) yield* walk(s[key], at);
    for (const key of ['anyOf', 'oneOf', 'allOf'])
      for (const inner of (s[key] ?? []) as unknown[]) yield* walk(inner, at);
  }
  for (const [name, schema] of Object.entries((doc.components as { schemas: Json }).schemas)) yield* walk(schema, name);
  const items = [...Object.entries(doc.paths as Json), ...Object.entries((doc.webhooks ?? {}) as Json)];
  for (const [path, item] of items) {
    for (const [method, op] of Object.entries(item as Record<string, Json>)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const p of (op.parameters ?? []) as Json[]) yield { at: `${at} ${p.name}`, schema: p };
      for (const media of Object.values(((op.requestBody as Json)?.content ?? {}) as Record<string, Json>)) {
        yield* walk(media.schema, `${at} body`);
      }
      for (const [status, answer] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
        for (const media of Object.values((answer.content ?? {}) as Record<string, Json>)) {
          yield* walk(media.schema, `${at} ${status}`);
        }
      }
    }
  }
}
