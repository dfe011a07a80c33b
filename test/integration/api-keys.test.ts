// POST, GET and DELETE /v1/api-keys over real HTTP, and what is (and is not) stored.
import { createHash } from 'node:crypto';
import { DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDynamoClient } from '../../lambdas/runtime/local/dynamo';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let doc: DynamoDBDocumentClient;

beforeAll(async () => {
  rt = await startTestRuntime({ SF_IP_RATE_LIMIT: '1000' });
  doc = DynamoDBDocumentClient.from(localDynamoClient(rt.dynamoEndpoint));
});
afterAll(async () => {
  doc.destroy();
  await rt.stop();
});

const post = (key: string, body: unknown) => rt.call('/api-keys', { method: 'POST', key, body: JSON.stringify(body) });

describe('POST /v1/api-keys', () => {
  it('returns the secret once, stores only its SHA-256, and the new key works with its scopes', async () => {
    const { key: admin, accountId } = await rt.newKey();
    const res = await post(admin, { name: 'ci sender', scopes: ['email:send', 'email:read'] });
    expect(res.status).toBe(201);
    const created = (await res.json()) as Record<string, unknown>;
    expect(created).toMatchObject({
      object: 'api_key',
      name: 'ci sender',
      mode: 'test',
      scopes: ['email:send', 'email:read'],
      key: expect.stringMatching(/^sf_test_[0-9A-Za-z]{40}$/),
      id: expect.stringMatching(/^key_/),
      created_at: expect.stringMatching(/Z$/),
    });
    const secret = created.key as string;

    const stored = await doc.send(
      new GetCommand({
        TableName: 'sendflow-apiKeys',
        Key: { hash: createHash('sha256').update(secret).digest('hex') },
      }),
    );
    expect(stored.Item).toMatchObject({ id: created.id, accountId, mode: 'test' });
    const everything = JSON.stringify((await doc.send(new ScanCommand({ TableName: 'sendflow-apiKeys' }))).Items);
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain(secret.slice(8, 30));

    const listing = await rt.call('/api-keys', { key: admin });
    const list = (await listing.json()) as { data: Record<string, unknown>[] };
    expect(JSON.stringify(list)).not.toContain(secret);
    expect(list.data.map((k) => k.id)).toContain(created.id);

    // The new key authenticates, and lacks full access.
    const own = await rt.call('/api-keys', { key: secret });
    expect(own.status).toBe(403);
  });

  it('refuses scopes the caller does not hold (403) and creates nothing', async () => {
    const { key: admin } = await rt.newKey();
    const limited = (await (await post(admin, { scopes: ['email:send'] })).json()) as { key: string };
    // A key without full access cannot call the route at all.
    expect((await post(limited.key, { scopes: ['email:send'] })).status).toBe(403);
    const before = ((await (await rt.call('/api-keys', { key: admin })).json()) as { data: unknown[] }).data.length;
    expect(before).toBe(2);
  });

  it('gives the new key the caller mode: a live caller makes live keys', async () => {
    const { key: live } = await rt.newKey({ mode: 'live' });
    const created = (await (await post(live, { scopes: ['webhook:read'] })).json()) as { key: string; mode: string };
    expect(created.mode).toBe('live');
    expect(created.key).toMatch(/^sf_live_/);
  });
});

describe('POST /v1/api-keys as Resend takes it', () => {
  const send = (key: string, from: string) =>
    rt.call('/emails', {
      method: 'POST',
      key,
      body: JSON.stringify({ from, to: 'delivered@example.com', subject: 'Hi', text: 'Hello' }),
    });

  it('{name} alone is a 422 naming scopes and permission (spec §5.5: an API-made key lists its scopes)', async () => {
    const { key: admin } = await rt.newKey();
    const before = ((await (await rt.call('/api-keys', { key: admin })).json()) as { data: unknown[] }).data.length;
    for (const body of [{ name: 'everything' }, {}]) {
      const res = await post(admin, body);
      expect(res.status).toBe(422);
      const error = (await res.json()) as { message: string; name: string; details: { path: string }[] };
      expect(error.message).toMatch(/`scopes`.*`permission`/);
      expect(error.name).toBe('missing_required_field');
      expect(error.details.map((d) => d.path)).toEqual(['scopes']);
    }
    const after = ((await (await rt.call('/api-keys', { key: admin })).json()) as { data: unknown[] }).data.length;
    expect(after).toBe(before);
  });

  it('{name, permission: full_access} and {name, scopes} make keys; the secret is also `token`', async () => {
    const { key: admin } = await rt.newKey();
    const res = await post(admin, { name: 'everything', permission: 'full_access' });
    expect(res.status).toBe(201);
    const created = (await res.json()) as Record<string, unknown>;
    expect(created).toMatchObject({
      scopes: ['email:send', 'email:read', 'domain:read', 'webhook:read', 'webhook:write'],
      permission: 'full_access',
      domain_id: null,
    });
    expect(created.token).toBe(created.key);
    // Full access: it may itself make keys.
    const child = await post(created.token as string, { name: 'child', scopes: ['email:read'] });
    expect(child.status).toBe(201);
    expect(await child.json()).toMatchObject({ name: 'child', scopes: ['email:read'], permission: 'custom' });
  });

  it('permission sending_access is email:send; with domain_id it sends only from that domain (403 otherwise)', async () => {
    const { key: admin } = await rt.newKey();
    const domain = (await (
      await rt.call('/domains', { method: 'POST', key: admin, body: JSON.stringify({ name: 'only.example.com' }) })
    ).json()) as { id: string };
    const plain = (await (await post(admin, { name: 's', permission: 'sending_access' })).json()) as Record<
      string,
      unknown
    >;
    expect(plain).toMatchObject({ scopes: ['email:send'], permission: 'sending_access', domain_id: null });

    const res = await post(admin, { name: 'r', permission: 'sending_access', domain_id: domain.id });
    expect(res.status).toBe(201);
    const restricted = (await res.json()) as { token: string; id: string };
    expect(restricted).toMatchObject({ permission: 'sending_access', domain_id: domain.id });

    expect((await send(restricted.token, 'a@only.example.com')).status).toBe(200);
    const refused = await send(restricted.token, 'a@other.example.com');
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      code: 'insufficient_scope',
      name: 'restricted_api_key',
      message: expect.stringMatching(/only from the domain only\.example\.com/),
    });
    // Listing shows the permission and the domain.
    const list = (await (await rt.call('/api-keys', { key: admin })).json()) as { data: Record<string, unknown>[] };
    expect(list.data.find((k) => k.id === restricted.id)).toMatchObject({
      permission: 'sending_access',
      domain_id: domain.id,
    });
  });

  it.each([
    [{ name: 'x', permission: 'sending_access', scopes: ['email:send'] }, 'scopes', 'validation_error'],
    [{ name: 'x', permission: 'admin' }, 'permission', 'invalid_access'],
    [{ name: 'x', domain_id: 'dom_x' }, 'domain_id', 'validation_error'],
    [{ name: 'x', permission: 'sending_access', domain_id: 'dom_nope' }, 'domain_id', 'validation_error'],
    [{ name: 'x', scopes: [] }, 'scopes', 'validation_error'],
  ])('refuses %j with 422 on %s (%s)', async (body, path, name) => {
    const { key: admin } = await rt.newKey();
    const res = await post(admin, body);
    expect(res.status).toBe(422);
    const error = (await res.json()) as { name: string; details: { path: string }[] };
    expect(error.name).toBe(name);
    expect(error.details.map((d) => d.path)).toContain(path);
  });
});

describe('GET /v1/api-keys', () => {
  it('lists the keys of the caller mode only, never a secret', async () => {
    const { key: testKey, accountId } = await rt.newKey({ mode: 'test' });
    const { createAccountKey } = await import('../../lambdas/app/accounts');
    const live = await createAccountKey(rt.admin, { accountId, mode: 'live' });
    const list = (await (await rt.call('/api-keys', { key: testKey })).json()) as {
      object: string;
      data: { mode: string; id: string }[];
    };
    expect(list.object).toBe('list');
    expect(list.data.every((k) => k.mode === 'test')).toBe(true);
    expect(list.data.map((k) => k.id)).not.toContain(live.key.id);
    expect(Object.keys(list.data[0] ?? {}).sort()).toEqual([
      'created_at',
      'domain_id',
      'hint',
      'id',
      'mode',
      'name',
      'object',
      'permission',
      'scopes',
    ]);
  });
});

describe('DELETE /v1/api-keys/:id', () => {
  it('revokes: the key then gets 401, a second delete 404s', async () => {
    const { key: admin } = await rt.newKey();
    const victim = (await (await post(admin, { scopes: ['email:send'] })).json()) as { id: string; key: string };
    const res = await rt.call(`/api-keys/${victim.id}`, { method: 'DELETE', key: admin });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: victim.id, revoked: true, revoked_at: expect.any(String) });

    const after = await rt.call('/api-keys', { key: victim.key });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: string }).error).toMatch(/revoked/);
    expect((await rt.call(`/api-keys/${victim.id}`, { method: 'DELETE', key: admin })).status).toBe(404);
    const list = (await (await rt.call('/api-keys', { key: admin })).json()) as { data: { id: string }[] };
    expect(list.data.map((k) => k.id)).not.toContain(victim.id);
  });

  it('cannot reach keys of another account or another mode (404)', async () => {
    const a = await rt.newKey();
    const b = await rt.newKey();
    expect((await rt.call(`/api-keys/${b.keyId}`, { method: 'DELETE', key: a.key })).status).toBe(404);
    const { createAccountKey } = await import('../../lambdas/app/accounts');
    const live = await createAccountKey(rt.admin, { accountId: a.accountId, mode: 'live' });
    expect((await rt.call(`/api-keys/${live.key.id}`, { method: 'DELETE', key: a.key })).status).toBe(404);
    expect((await rt.call('/api-keys', { key: live.secret })).status).toBe(200);
  });
});

describe('with the authorizer cache on (as on AWS)', () => {
  it('a revoked key stops working at once: revocation flushes the cache', async () => {
    const cached = await startTestRuntime({ SF_AUTH_CACHE_TTL: '60' });
    try {
      const { key: admin } = await cached.newKey();
      const victim = (await (
        await cached.call('/api-keys', {
          method: 'POST',
          key: admin,
          body: JSON.stringify({ scopes: ['webhook:read'] }),
        })
      ).json()) as { id: string; key: string };
      expect((await cached.call('/webhooks', { key: victim.key })).status).toBe(200);
      expect((await cached.call(`/api-keys/${victim.id}`, { method: 'DELETE', key: admin })).status).toBe(200);
      expect((await cached.call('/webhooks', { key: victim.key })).status).toBe(401);
    } finally {
      await cached.stop();
    }
  });

  it('a plan change applies at once: set-plan flushes the cache', async () => {
    const cached = await startTestRuntime({ SF_AUTH_CACHE_TTL: '60' });
    try {
      const { key, accountId } = await cached.newKey({ plan: 'free' });
      expect((await cached.call('/api-keys', { key })).headers.get('x-ratelimit-limit')).toBe('10');
      const { setPlan } = await import('../../lambdas/app/accounts');
      await setPlan(cached.admin, accountId, 'scale');
      expect((await cached.call('/api-keys', { key })).headers.get('x-ratelimit-limit')).toBe('500');
    } finally {
      await cached.stop();
    }
  });
});
