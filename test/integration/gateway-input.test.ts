// The local gateway builds API Gateway events whose header and query maps are plain data: keys named like
// Object.prototype members are ordinary names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raw } from '../support/raw-http';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

describe('the local gateway', () => {
  let rt: TestRuntime;
  let key: string;
  beforeAll(async () => {
    rt = await startTestRuntime();
    key = (await rt.newKey()).key;
  });
  afterAll(() => rt.stop());

  describe('prototype-named query parameters and headers are plain data', () => {
    const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];
    const query = `?${names.map((n) => `${n}=1&${n}=2`).join('&')}`;
    const headers = Object.fromEntries(names.map((n) => [n, 'x']));

    it.each([
      ['an authenticated route', 'GET', '/webhooks', 200],
      ['a public route', 'GET', '/unsubscribe/not-a-token', 404],
      ['an unknown path', 'GET', '/nowhere', 404],
      ['a known path with another method', 'PATCH', '/webhooks', 405],
    ])('%s answers as without them', async (_name, method, path, status) => {
      const res = await raw(rt, method, `${path}${query}`, { ...headers, Authorization: `Bearer ${key}` });
      expect(res.status).toBe(status);
      expect(JSON.parse(res.body)).not.toMatchObject({ code: 'internal_error' });
    });

    it('an unauthenticated request with them is a plain 401', async () => {
      const res = await raw(rt, 'GET', `/webhooks${query}`, headers);
      expect(res.status).toBe(401);
    });
  });
});
