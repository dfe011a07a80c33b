// The local gateway's authorizer result cache: one entry per key whatever the header's spelling, a flush that
// beats a lookup in flight, Allow answers only, and a bound on its entries (least recently used out first).
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { AuthorizerResultCache } from '../../lambdas/runtime/local/gateway';

const KEY = `sf_test_${'a'.repeat(32)}`;
const answer = (effect: 'Allow' | 'Deny', principalId = 'key_1'): APIGatewayAuthorizerResult => ({
  principalId,
  policyDocument: {
    Version: '2012-10-17',
    Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: '*' }],
  },
});

describe('AuthorizerResultCache', () => {
  it('keys every spelling of one Authorization header alike, and a header without a well-formed key not at all', () => {
    const key = AuthorizerResultCache.keyOf(`Bearer ${KEY}`);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    for (const spelling of [`bearer ${KEY}`, `BEARER    ${KEY}`, `bEaReR ${KEY}  `])
      expect(AuthorizerResultCache.keyOf(spelling), spelling).toBe(key);
    for (const junk of [undefined, '', KEY, `Basic ${KEY}`, `Bearer sf_test_${'x'.repeat(15_000)}`])
      expect(AuthorizerResultCache.keyOf(junk), String(junk).slice(0, 20)).toBeUndefined();
  });

  it('does not store a result whose lookup began before a flush', () => {
    const cache = new AuthorizerResultCache();
    const key = AuthorizerResultCache.keyOf(`Bearer ${KEY}`) as string;
    const started = cache.generation;
    cache.flush();
    cache.set(key, answer('Allow'), 60_000, started);
    expect(cache.get(key, 0)).toBeUndefined();
    cache.set(key, answer('Allow'), 60_000, cache.generation);
    expect(cache.get(key, 0)).toEqual(answer('Allow'));
  });

  it('stores no denial', () => {
    const cache = new AuthorizerResultCache();
    cache.set('k', answer('Deny', 'anonymous'), 60_000, cache.generation);
    expect(cache.size).toBe(0);
  });

  it('forgets an entry once it expires', () => {
    const cache = new AuthorizerResultCache();
    cache.set('k', answer('Allow'), 1_000, cache.generation);
    expect(cache.get('k', 999)).toBeDefined();
    expect(cache.get('k', 1_000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('holds at most its bound, dropping the least recently used', () => {
    const cache = new AuthorizerResultCache(3);
    for (const k of ['a', 'b', 'c']) cache.set(k, answer('Allow', k), 60_000, cache.generation);
    cache.get('a', 0); // now b is the least recently used
    cache.set('d', answer('Allow', 'd'), 60_000, cache.generation);
    expect(cache.size).toBe(3);
    expect(['a', 'b', 'c', 'd'].map((k) => cache.get(k, 0)?.principalId)).toEqual(['a', undefined, 'c', 'd']);
  });

  it('stays at its default bound of 10,000 under 12,000 distinct keys', () => {
    const cache = new AuthorizerResultCache();
    for (let i = 0; i < 12_000; i++) cache.set(`k${i}`, answer('Allow'), 60_000, cache.generation);
    expect(cache.size).toBe(10_000);
    expect(cache.get('k1999', 0)).toBeUndefined();
    expect(cache.get('k2000', 0)).toBeDefined();
  });
});
