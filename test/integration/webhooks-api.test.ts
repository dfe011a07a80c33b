// /v1/webhooks over real HTTP: field sets exactly as the spec's tables, legacy names normalized, format
// detection, validation, scopes, and isolation between accounts and modes.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let key: string;

beforeAll(async () => {
  rt = await startTestRuntime();
  key = (await rt.newKey()).key;
});
afterAll(() => rt.stop());
// A fresh account per test: an account has at most 10 webhooks per mode (docs/sending.md, "Limits").
beforeEach(async () => {
  key = (await rt.newKey()).key;
});

const create = (body: unknown, as = key) =>
  rt.call('/webhooks', { method: 'POST', key: as, body: JSON.stringify(body) });
const hook = 'https://hooks.example.com/sendflow';

describe('POST /v1/webhooks', () => {
  it('creates an active webhook with the spec field set, normalized events and a whsec_ secret', async () => {
    const res = await create({
      url: hook,
      events: ['delivered', 'email.bounced', 'email.delivered'],
      description: 'prod',
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(
      [
        'active',
        'created_at',
        'description',
        // {"type": "http"} here; an AWS destination's fields otherwise (docs/webhooks.md, "AWS destinations").
        'destination',
        'events',
        'filter',
        'format',
        'id',
        'object',
        'ordering',
        'rate_limit_per_second',
        'signing_secret',
        // The transformation's source, null without one (docs/webhooks.md, "Transformations").
        'transformation',
        'url',
        // Resend's names for url and active (docs/resend.md).
        'endpoint',
        'status',
      ].sort(),
    );
    expect(body).toMatchObject({
      object: 'webhook',
      url: hook,
      events: ['email.delivered', 'email.bounced'],
      format: 'standard',
      description: 'prod',
      active: true,
      id: expect.stringMatching(/^wh_/),
    });
    expect(body.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from((body.signing_secret as string).slice(6), 'base64')).toHaveLength(32);
    expect(new Date(body.created_at as string).toISOString()).toBe(body.created_at);
  });

  it.each([
    ['https://discord.com/api/webhooks/123456789012345678/tok-en_1', 'discord'],
    ['https://canary.discordapp.com/api/webhooks/1/x', 'discord'],
    ['https://hooks.slack.com/services/T000/B000/XXXX', 'slack'],
    ['https://example.com/api/webhooks/1/x', 'standard'],
  ])('detects the format of %s', async (url, format) => {
    const body = (await (await create({ url, events: ['email.sent'] })).json()) as { format: string };
    expect(body.format).toBe(format);
  });

  it('a detected format follows a new URL; a detected chat format moved to your endpoint becomes standard', async () => {
    const created = (await (
      await create({ url: 'https://hooks.slack.com/services/T1/B1/x', events: ['email.sent'] })
    ).json()) as {
      id: string;
    };
    await rt.call(`/webhooks/${created.id}`, { method: 'PUT', key, body: JSON.stringify({ url: hook }) });
    expect(((await (await rt.call(`/webhooks/${created.id}`, { key })).json()) as { format: string }).format).toBe(
      'standard',
    );
    const chosen = (await (await create({ url: hook, events: ['email.sent'], format: 'discord' })).json()) as {
      id: string;
    };
    await rt.call(`/webhooks/${chosen.id}`, { method: 'PUT', key, body: JSON.stringify({ url: `${hook}/2` }) });
    expect(((await (await rt.call(`/webhooks/${chosen.id}`, { key })).json()) as { format: string }).format).toBe(
      'discord',
    );
  });

  it('keeps an explicit format', async () => {
    const body = (await (await create({ url: hook, events: ['email.sent'], format: 'slack' })).json()) as {
      format: string;
    };
    expect(body.format).toBe('slack');
  });

  it('refuses unknown events, missing fields and a bad format with 422 details, creating nothing', async () => {
    const before = ((await (await rt.call('/webhooks', { key })).json()) as { data: unknown[] }).data.length;
    const res = await create({ url: hook, events: ['delivered', 'email.nope', 'test'] });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { code: string; details: { path: string; message: string }[] };
    expect(body.code).toBe('validation_error');
    expect(body.details.map((d) => d.path)).toEqual(['events.1', 'events.2']);
    for (const bad of [
      { events: ['email.sent'] },
      { url: hook },
      { url: hook, events: [] },
      { url: hook, events: ['email.sent'], format: 'teams' },
    ]) {
      expect((await create(bad)).status).toBe(422);
    }
    expect(((await (await rt.call('/webhooks', { key })).json()) as { data: unknown[] }).data).toHaveLength(before);
  });

  it('refuses URLs that are not http(s) or carry credentials', async () => {
    for (const url of ['ftp://example.com/x', 'not a url', 'https://user:pw@example.com/x']) {
      const res = await create({ url, events: ['email.sent'] });
      expect(res.status).toBe(422);
      expect(((await res.json()) as { details: { path: string }[] }).details[0]?.path).toBe('url');
    }
  });
});

describe('GET, PUT, DELETE', () => {
  it('lists with object, id, url, events, active, created_at and the health fields (issue 18: health, success_rate_24h, last_failure_at) only, as an object "list"', async () => {
    const { key: own } = await rt.newKey();
    await create({ url: hook, events: ['email.sent'] }, own);
    const body = (await (await rt.call('/webhooks', { key: own })).json()) as {
      object: string;
      data: Record<string, unknown>[];
    };
    expect(body.object).toBe('list');
    expect(body.data).toHaveLength(1);
    expect(Object.keys(body.data[0] ?? {}).sort()).toEqual([
      // With Resend's names for url and active: endpoint, status (docs/resend.md).
      'active',
      'created_at',
      'disabled_at',
      'disabled_reason',
      'endpoint',
      'events',
      'health',
      'id',
      'last_failure_at',
      'object',
      'status',
      'success_rate_24h',
      'url',
    ]);
    expect(body.data[0]).toMatchObject({
      disabled_at: null,
      disabled_reason: null,
      health: 'quiet',
      last_failure_at: null,
      success_rate_24h: null,
    });
    expect(body.data[0]?.object).toBe('webhook');
  });

  it('updates url, events and active; the response has id, url, events, active, ordering, rate limit, filter, updated_at, disabled_reason, disabled_at', async () => {
    const created = (await (await create({ url: hook, events: ['email.sent'] })).json()) as { id: string };
    const res = await rt.call(`/webhooks/${created.id}`, {
      method: 'PUT',
      key,
      body: JSON.stringify({ url: `${hook}/v2`, events: ['bounced'], active: false }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual([
      // With Resend's names for url and active: endpoint, status (docs/resend.md).
      'active',
      'disabled_at',
      'disabled_reason',
      'endpoint',
      'events',
      'filter',
      'id',
      'object',
      'ordering',
      'rate_limit_per_second',
      'status',
      'transformation',
      'updated_at',
      'url',
    ]);
    expect(body).toMatchObject({ object: 'webhook', url: `${hook}/v2`, events: ['email.bounced'], active: false });
    const got = (await (await rt.call(`/webhooks/${created.id}`, { key })).json()) as Record<string, unknown>;
    expect(got).toMatchObject({
      object: 'webhook',
      id: created.id,
      active: false,
      events: ['email.bounced'],
      format: 'standard',
    });
    expect(got).not.toHaveProperty('signing_secret');
    const resumed = await rt.call(`/webhooks/${created.id}`, { method: 'PUT', key, body: '{"active": true}' });
    expect(((await resumed.json()) as { active: boolean }).active).toBe(true);
  });

  it('refuses an empty or unknown update with 422 and changes nothing', async () => {
    const created = (await (await create({ url: hook, events: ['email.sent'] })).json()) as { id: string };
    expect((await rt.call(`/webhooks/${created.id}`, { method: 'PUT', key, body: '{}' })).status).toBe(422);
    expect((await rt.call(`/webhooks/${created.id}`, { method: 'PUT', key, body: '{"format":"slack"}' })).status).toBe(
      422,
    );
    expect((await rt.call(`/webhooks/${created.id}`, { method: 'PUT', key, body: '{"active":"no"}' })).status).toBe(
      422,
    );
    const got = (await (await rt.call(`/webhooks/${created.id}`, { key })).json()) as { active: boolean };
    expect(got.active).toBe(true);
  });

  it('deletes; then every route on it is 404', async () => {
    const created = (await (await create({ url: hook, events: ['email.sent'] })).json()) as { id: string };
    expect((await rt.call(`/webhooks/${created.id}`, { method: 'DELETE', key })).status).toBe(200);
    for (const [method, path] of [
      ['GET', ''],
      ['PUT', ''],
      ['DELETE', ''],
      ['POST', '/test'],
      ['GET', '/deliveries'],
    ] as const) {
      const res = await rt.call(`/webhooks/${created.id}${path}`, {
        method,
        key,
        body: method === 'PUT' ? '{"active":true}' : undefined,
      });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
  });
});

describe('isolation and scopes', () => {
  it('ids of another account or of the other mode are 404', async () => {
    const a = await rt.newKey({ mode: 'test' });
    const b = await rt.newKey({ mode: 'test' });
    const { createAccountKey } = await import('../../lambdas/app/accounts');
    const aLive = await createAccountKey(rt.admin, { accountId: a.accountId, mode: 'live' });
    const created = (await (await create({ url: hook, events: ['email.sent'] }, a.key)).json()) as { id: string };
    for (const other of [b.key, aLive.secret]) {
      expect((await rt.call(`/webhooks/${created.id}`, { key: other })).status).toBe(404);
      expect((await rt.call(`/webhooks/${created.id}`, { method: 'DELETE', key: other })).status).toBe(404);
      const list = (await (await rt.call('/webhooks', { key: other })).json()) as { data: unknown[] };
      expect(list.data).toHaveLength(0);
    }
  });

  it('needs webhook:read to read and webhook:write to change (403 otherwise)', async () => {
    const reader = await rt.newKey({ scopes: ['webhook:read'] });
    const writer = await rt.newKey({ scopes: ['webhook:write'] });
    expect((await rt.call('/webhooks', { key: reader.key })).status).toBe(200);
    expect((await create({ url: hook, events: ['email.sent'] }, reader.key)).status).toBe(403);
    expect((await create({ url: hook, events: ['email.sent'] }, writer.key)).status).toBe(201);
    expect((await rt.call('/webhooks', { key: writer.key })).status).toBe(403);
  });
});

describe('SSRF guard with private targets disallowed (the AWS setting)', () => {
  it('refuses http, loopback, private and metadata addresses with 422', async () => {
    const strict = await startTestRuntime({ SF_ALLOW_PRIVATE_WEBHOOKS: 'false' });
    try {
      const { key: k } = await strict.newKey();
      for (const url of [
        'http://example.com/hook',
        'https://127.0.0.1/hook',
        'https://2130706433/hook',
        'https://0177.0.0.1/hook',
        'https://[::1]/hook',
        'https://[::ffff:169.254.169.254]/hook',
        'https://169.254.169.254/latest/meta-data',
        'https://10.0.0.8/hook',
        'https://localhost/hook',
      ]) {
        const res = await strict.call('/webhooks', {
          method: 'POST',
          key: k,
          body: JSON.stringify({ url, events: ['email.sent'] }),
        });
        expect(res.status, url).toBe(422);
      }
    } finally {
      await strict.stop();
    }
  });
});

describe("Resend's names (endpoint, status) and the events a stored format holds back", () => {
  const details = async (res: Response) =>
    (await res.json()) as { name: string; details: { path: string; message: string }[] };

  it('takes endpoint for url (both only when equal) and status for active; takes suppression.* by default and refuses it where its stored format is off', async () => {
    const conflicting = await create({ url: hook, endpoint: 'https://other.example.com/in', events: ['email.sent'] });
    expect(conflicting.status).toBe(422);
    expect((await details(conflicting)).details[0]?.path).toBe('endpoint');
    const neither = await create({ events: ['email.sent'] });
    expect(neither.status).toBe(422);
    expect(await details(neither)).toMatchObject({ name: 'missing_required_field', details: [{ path: 'url' }] });

    const created = await create({ endpoint: hook, url: hook, events: ['email.sent'] });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const patch = (body: unknown) => rt.call(`/webhooks/${id}`, { method: 'PATCH', key, body: JSON.stringify(body) });
    const both = await patch({ active: true, status: 'disabled' });
    expect(both.status).toBe(422);
    expect((await details(both)).details[0]?.path).toBe('status');
    expect(await (await patch({ status: 'disabled' })).json()).toMatchObject({ active: false, status: 'disabled' });

    // On by default (the release before this one reads them); a stage that keeps the switch off refuses them.
    expect((await create({ url: hook, events: ['email.sent', 'suppression.added'] })).status).toBe(201);
    const off = await startTestRuntime({ SF_STORED_FORMATS: 'suppressionEvents=off' });
    try {
      const { key: offKey } = await off.newKey();
      const held = await off.call('/webhooks', {
        method: 'POST',
        key: offKey,
        body: JSON.stringify({ url: hook, events: ['email.sent', 'suppression.added'] }),
      });
      expect(held.status).toBe(422);
      expect((await details(held)).details).toEqual([
        { path: 'events.1', message: expect.stringMatching(/suppressionEvents stored format/) },
      ]);
    } finally {
      await off.stop();
    }
  });
});
