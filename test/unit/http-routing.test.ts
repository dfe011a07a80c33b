// Unit tests for route lookup over the manifest (lambdas/handlers/http/routing.ts).
import { describe, expect, it } from 'vitest';
import { matchPath, methodsOn, routeFor } from '../../lambdas/handlers/http/routing';

describe('matchPath', () => {
  it.each([
    ['POST', '/api-keys', 'createApiKey'],
    ['GET', '/api-keys', 'listApiKeys'],
    ['get', '/api-keys', 'listApiKeys'],
    ['GET', '/api-keys/', 'listApiKeys'],
    ['DELETE', '/api-keys/key_01abc', 'revokeApiKey'],
    ['DELETE', '/api-keys/key_01abc/', 'revokeApiKey'],
  ])('%s %s → %s', (method, path, id) => {
    // Act
    const match = matchPath(method, path);

    // Assert
    expect(match.kind).toBe('route');
    if (match.kind === 'route') expect(match.route.id).toBe(id);
  });

  it('extracts path parameters', () => {
    // Act
    const match = matchPath('DELETE', '/api-keys/key_01abc');

    // Assert
    expect(match).toMatchObject({ kind: 'route', params: { id: 'key_01abc' } });
  });

  it.each([
    ['an encoded slash', 'key%2Fabc', 'key/abc'],
    ['an encoded space', 'key%20abc', 'key abc'],
    ['UTF-8', 'caf%C3%A9', 'café'],
    ['a trailing slash', 'key_1/', 'key_1'],
  ])('decodes parameters: %s', (_, segment, decoded) => {
    // Act
    const match = matchPath('DELETE', `/api-keys/${segment}`);

    // Assert
    expect(match).toMatchObject({ kind: 'route', params: { id: decoded } });
  });

  it.each(['%E0%A4%A', '%', 'key%ZZ', '%C3'])(
    'answers not_found, without throwing, for malformed encoding %j',
    (bad) => {
      // Act
      const act = () => matchPath('DELETE', `/api-keys/${bad}`);

      // Assert
      expect(act).not.toThrow();
      expect(act()).toEqual({ kind: 'not_found' });
    },
  );

  it.each([
    ['PUT', '/api-keys', ['POST', 'GET']],
    ['DELETE', '/api-keys', ['POST', 'GET']],
    ['PATCH', '/api-keys/', ['POST', 'GET']],
    ['GET', '/api-keys/key_1', ['DELETE']],
    ['POST', '/api-keys/key_1', ['DELETE']],
  ])('%s %s → 405 with the methods the path has', (method, path, allow) => {
    // Act
    const match = matchPath(method, path);

    // Assert
    expect(match.kind).toBe('method_not_allowed');
    if (match.kind === 'method_not_allowed') expect([...match.allow].sort()).toEqual([...allow].sort());
  });

  it('names the resource template in a 405', () => {
    expect(matchPath('GET', '/api-keys/key_1')).toMatchObject({ resource: '/api-keys/{id}' });
  });

  it.each([
    ['/'],
    [''],
    ['/nope'],
    ['/api-keys/key_1/extra'],
    ['/api-keysx'],
    ['/API-KEYS'],
    ['//api-keys'],
    ['/api-keys//'],
    ['/v1/api-keys'],
  ])('GET %j → not_found', (path) => {
    expect(matchPath('GET', path)).toEqual({ kind: 'not_found' });
  });
});

describe('routeFor', () => {
  it.each([
    ['POST', '/api-keys', 'createApiKey'],
    ['GET', '/api-keys', 'listApiKeys'],
    ['delete', '/api-keys/{id}', 'revokeApiKey'],
  ])('%s %s (resource template) → %s', (method, resource, id) => {
    expect(routeFor(method, resource)?.id).toBe(id);
  });

  it.each([
    ['GET', '/api-keys/{id}'],
    ['PUT', '/api-keys'],
    ['GET', '/{proxy+}'],
    ['DELETE', '/api-keys/key_1'],
  ])('%s %s → undefined', (method, resource) => {
    expect(routeFor(method, resource)).toBeUndefined();
  });
});

describe('methodsOn', () => {
  it('lists the methods declared on a resource template', () => {
    expect([...methodsOn('/api-keys')].sort()).toEqual(['GET', 'POST']);
    expect(methodsOn('/api-keys/{id}')).toEqual(['DELETE']);
  });

  it('is empty for an unknown resource', () => {
    expect(methodsOn('/{proxy+}')).toEqual([]);
    expect(methodsOn('/nope')).toEqual([]);
  });
});
