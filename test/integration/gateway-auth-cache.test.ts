// The local gateway's authorizer result cache, keyed as API Gateway keys it: the Authorization header's
// value, the header name matched case-insensitively; a request without one never reaches the cache.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raw } from '../support/raw-http';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

describe('the authorizer cache (SF_AUTH_CACHE_TTL > 0)', () => {
  let rt: TestRuntime;
  let key: string;
  beforeAll(async () => {
    rt = await startTestRuntime({ SF_AUTH_CACHE_TTL: '60' });
    key = (await rt.newKey()).key;
  });
  afterAll(() => rt.stop());

  it('a key sent under an upper-case header name is cached under that key, never for requests with no key', async () => {
    const authorized = await raw(rt, 'GET', '/api-keys', { AUTHORIZATION: `Bearer ${key}` });
    expect(authorized.status).toBe(200);
    const anonymous = await raw(rt, 'GET', '/api-keys', {});
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.body)).toMatchObject({ code: 'unauthorized' });
    const minted = await raw(rt, 'POST', '/api-keys', {}, JSON.stringify({ scopes: ['email:send'] }));
    expect(minted.status).toBe(401);
  });

  it('any casing of the header name reaches the same cached entry, and an empty value is no key', async () => {
    for (const name of ['Authorization', 'authorization', 'AuThOrIzAtIoN'])
      expect((await raw(rt, 'GET', '/webhooks', { [name]: `Bearer ${key}` })).status, name).toBe(200);
    expect((await raw(rt, 'GET', '/webhooks', { Authorization: '' })).status).toBe(401);
    expect((await raw(rt, 'GET', '/webhooks', { Authorization: 'Bearer sf_test_nope' })).status).toBe(401);
  });
});
