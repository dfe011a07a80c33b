// The event catalog over real HTTP on the local runtime: GET /v1/event-types answers any valid key (rate
// limited and logged like every route), and every payload delivered to a real receiver (every simulator
// story, a suppressed and a scheduled send, an unsubscribe, the domain and contact events) validates, with ajv
// (draft 2020-12, formats checked), against the schema the route serves for its type.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountKey } from '../../lambdas/app/accounts';
import { SIMULATOR_DOMAIN, SIMULATOR_STORIES } from '../../lambdas/domain/email/simulator';
import { EVENT_TYPES } from '../../lambdas/domain/events';

/** Made by auto-disable, whose own test validates them (test/integration/webhook-health.test.ts). */
const WEBHOOK_EVENT_TYPES = ['webhook.disabled', 'webhook.failing'];
/** Made by the reputation judgment, whose own test validates it (test/integration/reputation.test.ts). */
const ACCOUNT_EVENT_TYPES = ['account.reputation_warning'];

import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

type Json = Record<string, unknown>;
interface Catalog {
  object: string;
  data: { type: string; description: string; schema: Json }[];
}

// ajv-formats is CommonJS: its function is the default export's default under ESM interop.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as typeof addFormatsModule;

let rt: TestRuntime;
let receiver: Receiver;
beforeAll(async () => {
  // suppression.* (behind their stored format, off by default) and the reputation event (its switch) too.
  rt = await startTestRuntime({ SF_REPUTATION_EVENTS: 'true' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await rt.stop();
});

const post = (key: string, path: string, body: unknown) =>
  rt.call(path, { method: 'POST', key, body: JSON.stringify(body) });

describe('GET /v1/event-types', () => {
  it('answers a key of any scope with every event type, its description and a 2020-12 schema', async () => {
    const { accountId, key: full } = await rt.newKey();
    const { secret: sender } = await createAccountKey(rt.admin, { accountId, mode: 'test', scopes: ['email:send'] });

    const res = await rt.call('/event-types', { key: sender });

    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    expect(res.headers.get('cache-control')).toBe('private, max-age=300');
    const catalog = (await res.json()) as Catalog;
    expect(catalog.object).toBe('list');
    expect(catalog.data.map((entry) => entry.type)).toEqual([...EVENT_TYPES]);
    expect(EVENT_TYPES).toEqual(expect.arrayContaining(WEBHOOK_EVENT_TYPES));
    for (const entry of catalog.data) {
      expect(entry.description, entry.type).not.toBe('');
      expect(entry.schema).toMatchObject({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        additionalProperties: false,
        properties: { type: { const: entry.type } },
      });
    }
    const logged = (await (await rt.call('/logs', { key: full })).json()) as { data: Json[] };
    expect(logged.data).toContainEqual(expect.objectContaining({ method: 'GET', path: '/event-types', status: 200 }));
  });

  it('is 401 without a valid key', async () => {
    expect((await rt.call('/event-types')).status).toBe(401);
    expect((await rt.call('/event-types', { key: 'sf_test_not-a-key' })).status).toBe(401);
  });
});

describe('every delivered payload validates against the schema GET /v1/event-types serves for its type', () => {
  it('email, domain and contact events at a real receiver', { timeout: 60_000 }, async () => {
    // Arrange: one webhook for every event type.
    const { key } = await rt.newKey();
    const hook = await post(key, '/webhooks', { url: `${receiver.url}/all`, events: [...EVENT_TYPES] });
    expect(hook.status).toBe(201);
    const email = { from: 'Acme <ops@acme.test>', subject: 'Catalog', html: '<p>Hi</p>' };

    // Act: every simulator story, then a send to a bounced (now suppressed) address, a scheduled send, an
    // unsubscribe, and the domain and contact events.
    const stories = Object.keys(SIMULATOR_STORIES).map((story) => `${story}@${SIMULATOR_DOMAIN}`);
    const sent = await post(key, '/emails', { ...email, to: stories });
    const { id } = (await sent.json()) as { id: string };
    await rt.settle();
    await post(key, '/emails', { ...email, to: `bounce@${SIMULATOR_DOMAIN}` });
    const later = new Date(Date.now() + 86_400_000).toISOString();
    await post(key, '/emails', { ...email, to: 'later@example.com', scheduled_at: later });
    const read = (await (await rt.call(`/emails/${id}`, { key })).json()) as {
      recipient_headers: Record<string, Record<string, string>>;
    };
    const link = (read.recipient_headers[`success@${SIMULATOR_DOMAIN}`]?.['List-Unsubscribe'] ?? '').slice(1, -1);
    const unsubscribed = await fetch(link, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(unsubscribed.status).toBe(200);
    const domain = (await (await post(key, '/domains', { name: 'mail.acme.test' })).json()) as { id: string };
    await post(key, `/domains/${domain.id}/verify`, {});
    await rt.call(`/domains/${domain.id}`, { method: 'PATCH', key, body: '{"open_tracking":true}' });
    await rt.call(`/domains/${domain.id}`, { method: 'DELETE', key });
    const contact = (await (await post(key, '/contacts', { email: 'ada@example.com' })).json()) as {
      id: string;
      confirmation_url: string;
    };
    await rt.call(`/contacts/${contact.id}`, { method: 'PATCH', key, body: '{"first_name":"Ada"}' });
    expect((await fetch(contact.confirmation_url, { method: 'POST' })).status).toBe(200);
    await rt.call(`/contacts/${contact.id}`, { method: 'DELETE', key });
    // The bounced address's suppression (suppression.added) removed (suppression.removed).
    const removed = await rt.call(`/suppressions/bounce@${SIMULATOR_DOMAIN}`, { method: 'DELETE', key });
    expect(removed.status).toBe(200);
    await rt.settle();

    // Assert: each body against the served schema of its type.
    const catalog = (await (await rt.call('/event-types', { key })).json()) as Catalog;
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(ajv);
    const validators = new Map(catalog.data.map((entry) => [entry.type, ajv.compile(entry.schema)]));
    const delivered = receiver.received.filter((r) => r.path === '/all').map((r) => JSON.parse(r.body) as Json);
    const problems = delivered.flatMap((payload) => {
      const type = String(payload.type);
      const validate = validators.get(type);
      if (!validate) return [`${type}: not in the catalog`];
      return validate(payload) ? [] : (validate.errors ?? []).map((e) => `${type} ${e.instancePath} ${e.message}`);
    });
    expect(problems).toEqual([]);
    const seen = new Set(delivered.map((payload) => String(payload.type)));
    // email.received comes from inbound mail, whose own test validates it (test/integration/inbound-smtp.test.ts).
    // The webhook.* events come from endpoint health, whose own tests drive a failing endpoint; the account.*
    // event from the reputation judgment, whose own test drives bounces and complaints.
    const made = EVENT_TYPES.filter(
      (type) => !WEBHOOK_EVENT_TYPES.includes(type) && !ACCOUNT_EVENT_TYPES.includes(type),
    );
    expect(made.filter((type) => !seen.has(type))).toEqual(['email.received']);
  });
});
