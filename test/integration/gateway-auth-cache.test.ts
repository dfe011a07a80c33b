// The local gateway's authorizer result cache, keyed as API Gateway keys it: the Authorization header's
// value, the header name matched case-insensitively; a request without one never reaches the cache.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeKey } from '../../lambdas/app/api-keys';
import { KeyLookupHold } from '../support/key-lookup-hold';
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

/** 24 spellings of one key the authorizer accepts alike: the scheme's case and the spaces after it. */
const spellings = (key: string) =>
  ['Bearer', 'bearer', 'BEARER', 'bEaReR'].flatMap((scheme) =>
    [1, 2, 3, 4, 5, 6].map((spaces) => `${scheme}${' '.repeat(spaces)}${key}`),
  );

describe('a revocation racing lookups in flight (SF_AUTH_CACHE_TTL=60)', () => {
  let rt: TestRuntime;
  // While held, the authorizer's read of a key is answered, then held: its result is computed (valid) but not
  // yet returned to the gateway, exactly the window in which a revocation can land.
  const lookups = new KeyLookupHold();
  beforeAll(async () => {
    rt = await startTestRuntime({ SF_AUTH_CACHE_TTL: '60' }, { instrument: lookups.instrument });
  });
  afterAll(() => rt.stop());

  it('a lookup that read the key before its revocation never caches it: 0 of 24 spellings pass once revoke returns', async () => {
    // Arrange: every spelling's lookup in flight, each having read the key while it was valid.
    const { accountId, key, keyId } = await rt.newKey();
    lookups.hold();
    const inFlight = spellings(key).map((value) => raw(rt, 'GET', '/api-keys', { Authorization: value }));
    await expect.poll(() => lookups.held, { timeout: 5_000 }).toBe(24);
    lookups.stopHolding();

    // Act: revoke (it flushes the cache) while they are held, then let them finish.
    await revokeKey(rt.admin, { accountId, keyId });
    lookups.release();
    await Promise.all(inFlight);

    // Assert: after the revocation returned, no spelling is accepted.
    const after = await Promise.all(
      spellings(key).map((value) => raw(rt, 'GET', '/api-keys', { Authorization: value })),
    );
    expect(after.map((r) => r.status)).toEqual(Array(24).fill(401));
  });

  it('caches one entry per key, whatever its spelling, and no denial', async () => {
    // Arrange
    const { key } = await rt.newKey();
    const before = rt.authorizerCache.size;

    // Act
    for (const value of spellings(key))
      expect((await raw(rt, 'GET', '/api-keys', { Authorization: value })).status).toBe(200);
    // Unique 15 KB values (no key at all), and well-formed keys nobody holds: both denied, neither cached.
    for (let i = 0; i < 500; i++) {
      const id = i.toString().padStart(32, '0');
      const value = i % 2 ? `Bearer sf_test_${id}${'x'.repeat(15_000)}` : `Bearer sf_test_${id}`;
      expect((await raw(rt, 'GET', '/api-keys', { Authorization: value })).status).toBe(401);
    }

    // Assert
    expect(rt.authorizerCache.size - before).toBe(1);
  });
});
