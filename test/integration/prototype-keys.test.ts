// Keys named like Object.prototype members are plain data everywhere over real HTTP: a header named
// `constructor` or `__proto__` is one more header (it was a 500, or silently dropped), a tag named so is a tag,
// and on routes with fixed fields such a key is an unknown field (422), never a property lookup.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let key: string;
beforeAll(async () => {
  rt = await startTestRuntime();
  key = (await rt.newKey()).key;
});
afterAll(() => rt.stop());

const PROTO_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'];
const email = { from: 'a@acme.test', to: 'b@example.com', subject: 'Hi', text: 'x' };
/** JSON with `name` as a key, written by hand: an object literal would set a prototype for `__proto__`. */
const withKey = (json: string, name: string) => json.replace('"@KEY@"', JSON.stringify(name));
const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  rt.call(path, { method: 'POST', key, body, headers });

describe('prototype-named keys', () => {
  it.each(PROTO_NAMES)('a header named %s is kept, sent and shown as data', async (name) => {
    // Act
    const res = await post(
      '/emails',
      withKey(JSON.stringify({ ...email, headers: { '@KEY@': 'p', 'X-B': 'q' } }), name),
    );

    // Assert
    expect(res.status, await res.clone().text()).toBe(200);
    const { id } = (await res.json()) as { id: string };
    const stored = await rt.repos.emails.get(id);
    expect(Object.entries(stored?.headers ?? {})).toEqual([
      [name, 'p'],
      ['X-B', 'q'],
    ]);
    expect(Object.getPrototypeOf(stored?.headers)).toBeNull();
    await rt.settle();
    expect((await rt.call(`/emails/${id}`, { key })).status).toBe(200);
  });

  it('a batch whose headers are all prototype names is stored whole', async () => {
    const headers = `{${PROTO_NAMES.map((n) => `${JSON.stringify(n)}:"v"`).join(',')}}`;
    const one = JSON.stringify(email).replace(/}$/, `,"headers":${headers}}`);
    const res = await post('/emails/batch', `[${one},${one}]`, { 'Idempotency-Key': 'proto-batch' });
    expect(res.status, await res.clone().text()).toBe(200);
    const { data } = (await res.json()) as { data: { id: string }[] };
    for (const { id } of data) {
      expect(Object.keys((await rt.repos.emails.get(id))?.headers ?? {})).toEqual(PROTO_NAMES);
    }
    // The idempotency fingerprint saw the keys too: a replay matches, the same keys without __proto__ do not.
    expect((await post('/emails/batch', `[${one},${one}]`, { 'Idempotency-Key': 'proto-batch' })).status).toBe(200);
    const without = one.replace('"__proto__":"v",', '');
    expect((await post('/emails/batch', `[${without},${without}]`, { 'Idempotency-Key': 'proto-batch' })).status).toBe(
      409,
    );
    await rt.settle();
  });

  it.each(PROTO_NAMES)('a tag named %s is a tag', async (name) => {
    const tag = name.replace(/[^A-Za-z0-9_-]/g, '') || 'x';
    const res = await post('/emails', JSON.stringify({ ...email, tags: [{ name: tag, value: tag }] }));
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as { id: string };
    const got = (await (await rt.call(`/emails/${id}`, { key })).json()) as { tags: unknown };
    expect(got.tags).toEqual([{ name: tag, value: tag }]);
    await rt.settle();
  });

  it.each([
    ['/webhooks', '{"url":"http://127.0.0.1:9/h","events":["email.sent"],"@KEY@":{"active":false}}'],
    ['/contacts', '{"email":"proto@example.com","@KEY@":"x"}'],
    ['/domains', '{"name":"proto.example.com","@KEY@":"x"}'],
    ['/api-keys', '{"scopes":["email:send"],"@KEY@":{"scopes":["x"]}}'],
    ['/emails', `${JSON.stringify(email).slice(0, -1)},"@KEY@":{"subject":"x"}}`],
  ])('%s with an unknown prototype-named field is 422 naming it, and creates nothing', async (path, template) => {
    for (const name of PROTO_NAMES) {
      const res = await post(path, withKey(template, name));
      const body = (await res.json()) as { code: string; details?: { message: string }[] };
      expect(res.status, `${path} ${name}: ${JSON.stringify(body)}`).toBe(422);
      expect(body.code).toBe('validation_error');
      expect(JSON.stringify(body.details)).toContain(name);
    }
    expect(rt.queues.sends.depth).toBe(0);
    for (const list of ['/webhooks', '/contacts', '/domains']) {
      expect(((await (await rt.call(list, { key })).json()) as { data: unknown[] }).data).toEqual([]);
    }
    expect(((await (await rt.call('/api-keys', { key })).json()) as { data: unknown[] }).data).toHaveLength(1);
  });
});
