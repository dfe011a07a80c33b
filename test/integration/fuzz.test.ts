// Property-based fuzzing of every route in the manifest over real HTTP (fast-check): hostile paths, queries,
// headers, content types and bodies (random, deep, wide, huge, non-JSON, prototype-named keys, control
// characters, mutations of a valid body), sent with a full-access key, a restricted key, a bad key or none.
// Whatever comes in: never a 5xx; every 4xx has DESIGN §7's JSON error shape; and a 4xx changes nothing (every
// data table is the same before and after, and nothing is queued). Bounded: 10 to 40 runs per route, about 400
// in all (about 25 s here).
import { request } from 'node:http';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RouteSpec, routes, type TableName } from '../../lambdas/manifest';
import { loadConfig, localTableDefaults } from '../../lambdas/runtime/config';
import { localDynamoClient } from '../../lambdas/runtime/local/dynamo';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, TEST_ENV, type TestRuntime } from '../support/runtime';

/** SF_FUZZ_SCALE=10 npx vitest run test/integration/fuzz.test.ts: ten times the runs, for a deeper hunt. */
const SCALE = Number(process.env.SF_FUZZ_SCALE ?? 1);
const RUNS_PER_ROUTE = 10;
/** Routes with the richest bodies get more runs. */
const RUNS: Partial<Record<RouteSpec['id'], number>> = {
  sendEmail: 40,
  sendEmailBatch: 30,
  createWebhook: 15,
  // Issue 32: payload filters, fuzzed (hostileFilter) on the route that only evaluates them.
  testWebhookFilter: 30,
};
/** Counters that legitimately change on a refused request (its rate-limit window) or are freed by it. */
/** Tables every request writes by design (its rate-limit window, its idempotency claim, its log entry): not data. */
const COUNTER_TABLES: readonly TableName[] = ['rateLimits', 'idempotency', 'apiRequests'];
const PROTO_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype'];

let rt: TestRuntime;
let receiver: Receiver;
let doc: DynamoDBDocumentClient;
let dataTables: string[];
const keys: Record<'full' | 'restricted', string> = { full: '', restricted: '' };
/** Ids that exist, so that some requests get past the 404 into the handler. */
const known: Record<string, string[]> = { id: [], deliveryId: [], token: [] };

beforeAll(async () => {
  // No reconciler run during the fuzz: its domain checks would change tables and queue events in the background.
  rt = await startTestRuntime({ SF_RECONCILE_INTERVAL_SECONDS: '3600' });
  receiver = await startReceiver();
  BASES.createWebhook = {
    url: `${receiver.url}/created`,
    events: ['email.sent', 'email.delivered'],
    filter: { tags: { plan: 'pro' } },
  };
  doc = DynamoDBDocumentClient.from(localDynamoClient(rt.dynamoEndpoint));
  const tables = loadConfig(TEST_ENV, localTableDefaults()).tables;
  dataTables = Object.entries(tables)
    .filter(([name]) => !COUNTER_TABLES.includes(name as TableName))
    .map(([, physical]) => physical);
  const full = await rt.newKey({ plan: 'scale' });
  keys.full = full.key;
  keys.restricted = String((await json('POST', '/api-keys', { scopes: ['email:send', 'webhook:read'] })).key);
  // A webhook with a delivery, an email, a domain, a contact, and a spare key: ids the fuzzer can hit.
  const webhook = await json('POST', '/webhooks', { url: `${receiver.url}/fuzz`, events: ['email.sent'] });
  const email = await json('POST', '/emails', { from: 'a@acme.test', to: 'b@example.com', subject: 's', text: 't' });
  await rt.settle();
  const deliveries = await json('GET', `/webhooks/${webhook.id}/deliveries`);
  const domain = await json('POST', '/domains', { name: 'fuzz.example.com' });
  const contact = await json('POST', '/contacts', { email: 'fuzz@example.com' });
  const spare = await json('POST', '/api-keys', { scopes: ['email:read'] });
  known.id = [webhook.id, email.id, domain.id, contact.id, spare.id].map(String);
  known.deliveryId = (deliveries.data as { id: string }[]).map((d) => d.id);
  known.token = [String(contact.confirmation_url).split('/').at(-1) as string];
});
afterAll(async () => {
  doc?.destroy();
  await receiver?.close();
  await rt?.stop();
});

interface Sent {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One request as a client could send it, through node:http (a body on a GET, any content type). */
function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Sent> {
  const url = new URL(`${rt.url}${path}`);
  return new Promise((resolve, reject) => {
    // Content-Length always: without it Node sends a GET's body raw, and the server parses it as another request.
    const length = body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(body)) };
    const req = request(url, { method, headers: { ...headers, ...length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function call(method: string, path: string, init: { body?: string; key?: string } = {}) {
  return fetch(`${rt.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${init.key ?? keys.full}` },
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
}

async function json(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await call(method, path, body === undefined ? {} : { body: JSON.stringify(body) });
  expect(res.status, `${method} ${path}`).toBeLessThan(300);
  return (await res.json()) as Record<string, unknown>;
}

/** Every data table's items, sorted: what a refused request must leave exactly as it was. */
async function snapshot(): Promise<string> {
  const scans = await Promise.all(
    dataTables.map(async (table) => {
      const items: string[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await doc.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
        items.push(...(page.Items ?? []).map((item) => JSON.stringify(item, setsAsArrays)));
        start = page.LastEvaluatedKey;
      } while (start);
      return `${table}:${items.sort().join('\n')}`;
    }),
  );
  return scans.join('\n\n');
}
const setsAsArrays = (_key: string, value: unknown) => (value instanceof Set ? [...value].sort() : value);

const queueDepths = () => Object.fromEntries(Object.entries(rt.queues).map(([name, queue]) => [name, queue.depth]));

// ---------- what the fuzzer sends ----------

const controlText = fc.string({ unit: fc.integer({ min: 0, max: 0x9f }).map((c) => String.fromCharCode(c)) });
const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }), // lone surrogates included
  controlText,
  fc.constantFrom(...PROTO_NAMES, '', ' ', '\r\n', '\u0000', 'a@b.c', '<x@y.z>', '-1', '1e309', 'null'),
  fc.integer({ min: 1000, max: 6000 }).map((n) => 'x'.repeat(n)),
);
const hostileKey = fc.oneof(fc.constantFrom(...PROTO_NAMES), fc.string({ maxLength: 12 }), controlText);
const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 20,
});
/** Header-like records: prototype names and plausible names with plausible values, to get past the first check. */
const headersLike = fc.dictionary(
  fc.oneof(fc.constantFrom(...PROTO_NAMES, 'X-A', 'From', 'x-ses-tags'), printable),
  printable,
  {
    maxKeys: 5,
  },
);
// Past the 32-level limit, yet shallow enough for JSON.stringify here (the raw-text bodies below go to 6,000).
const deepValue = fc.integer({ min: 33, max: 500 }).map((depth) => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
});
/** Filter-shaped values (issue 32): operators with operands of every kind, event fields, prototype names, depth. */
const FILTER_KEYS = ['$eq', '$neq', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exist', '$exists', '$and', '$or'];
const hostileFilter: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 1 }),
    fc.constantFrom(1e308, -0, '', '$', null),
    fc.array(tie('node'), { maxLength: 3 }),
    fc.dictionary(
      fc.oneof(
        fc.constantFrom(...FILTER_KEYS, '$not', '$startsWith', '$regex', 'type', 'data', 'tags', 'to', ...PROTO_NAMES),
        hostileKey,
      ),
      tie('node'),
      { maxKeys: 4 },
    ),
  ),
})).node;
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileFilter,
  deepValue.map((v) => ({ data: v })),
  headersLike,
  deepValue,
  hostileString,
  fc.jsonValue({ maxDepth: 3 }),
  fc.dictionary(hostileKey, hostileString, { maxKeys: 6 }),
  fc.array(hostileString, { maxLength: 6 }),
  fc.array(fc.record({ name: hostileString, value: hostileString }), { maxLength: 3 }),
  fc
    .integer({ min: 51, max: 300 })
    .map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-${i}`, 'v']))),
);

const EMAIL = { from: 'a@acme.test', to: 'fuzz@example.com', subject: 'Fuzz', text: 'x' };
/** A valid body per route, for mutations that reach past the schema's first line. */
const BASES: Partial<Record<RouteSpec['id'], unknown>> = {
  createApiKey: { scopes: ['email:send'], name: 'fuzz' },
  // Filled in once the receiver listens: webhooks the fuzzer creates answer at once, so settling stays quick.
  createWebhook: { url: '', events: ['email.sent'], filter: { tags: { plan: 'pro' } } },
  updateWebhook: { active: true, filter: { data: { to: { $in: ['a@b.c'] } } } },
  testWebhookFilter: {
    filter: { type: 'email.sent', tags: { plan: 'pro' } },
    event: { type: 'email.sent', data: { to: ['a@b.c'] }, tags: { plan: 'pro' } },
  },
  sendEmail: EMAIL,
  sendEmailBatch: [EMAIL, EMAIL],
  createDomain: { name: 'mutated.example.com' },
  createContact: { email: 'mutated@example.com', first_name: 'Ada' },
  updateContact: { first_name: 'Ada' },
};
const FIELDS = ['from', 'to', 'cc', 'bcc', 'reply_to', 'subject', 'html', 'text', 'headers', 'tags', 'scheduled_at'];

/** `base` with `field` set to `value` as an own property (so `__proto__` is a key, not a prototype). */
function mutate(base: unknown, field: string, value: unknown, where: number): unknown {
  const target = Array.isArray(base) ? base[where % base.length] : base;
  const copy = { ...(target as object) };
  Object.defineProperty(copy, field, { value, enumerable: true, configurable: true, writable: true });
  if (!Array.isArray(base)) return copy;
  return base.map((item, i) => (i === where % base.length ? copy : item));
}

const nested = (depth: number, open: string, close: string) => `${open.repeat(depth)}1${close.repeat(depth)}`;

function bodyArbitrary(route: RouteSpec): fc.Arbitrary<string | undefined> {
  const base = BASES[route.id];
  return fc.oneof(
    fc.constant(undefined),
    fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
    fc.anything({ maxDepth: 3, withObjectString: true }).map((v) => JSON.stringify(v) ?? 'undefined'),
    fc.string({ maxLength: 80 }), // mostly not JSON
    fc.constantFrom('{', '[', '{"a":}', 'null', '""', 'List-Unsubscribe=One-Click', '\u0000', '{"__proto__":{"x":1}}'),
    fc.integer({ min: 33, max: 6000 }).map((d) => nested(d, '[', ']')),
    fc.integer({ min: 33, max: 3000 }).map((d) => nested(d, '{"a":', '}')),
    fc
      .integer({ min: 1000, max: 20000 })
      .map((n) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ [`k${i}`]: i })))),
    fc.constant(`"${'x'.repeat(1024 * 1024 + 1)}"`), // past SF_MAX_BODY_BYTES
    base === undefined
      ? fc.constant(undefined)
      : fc
          .record({
            field: fc.oneof(fc.constantFrom(...FIELDS, ...Object.keys(base as object)), hostileKey),
            value: hostileValue,
            where: fc.nat(),
          })
          .map(({ field, value, where }) => JSON.stringify(mutate(base, field, value, where))),
  );
}

const pathValue = (param: string) =>
  fc.oneof(fc.constantFrom(...(known[param] ?? known.id ?? []), 'x'), hostileString, fc.constantFrom(...PROTO_NAMES));

interface FuzzRequest {
  path: string;
  query: [string, string][];
  auth: 'full' | 'restricted' | 'bad' | 'none';
  contentType: string | undefined;
  idempotencyKey: string | undefined;
  body: string | undefined;
}

function requestArbitrary(route: RouteSpec): fc.Arbitrary<FuzzRequest> {
  const params = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => name as string);
  return fc.record({
    path: fc
      .tuple(...params.map(pathValue))
      .map((values) =>
        params.reduce((path, name, i) => path.replace(`{${name}}`, encodeURIComponent(values[i] ?? '')), route.path),
      ),
    query: fc.array(
      fc.tuple(
        // Prototype-named query keys are left to the gateway test below (gateway.ts, another engineer's fix).
        fc
          .oneof(fc.constantFrom('limit', 'status', 'after'), fc.string({ maxLength: 10 }))
          .filter((k) => !PROTO_NAMES.includes(k)),
        fc.oneof(hostileString, fc.constantFrom('0', '101', '1.5', 'pending', 'failed', 'dlv_0000000000000000000000')),
      ),
      { maxLength: 3 },
    ),
    auth: fc.constantFrom('full', 'full', 'restricted', 'bad', 'none'),
    contentType: fc.constantFrom(
      undefined,
      'application/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=zz',
      'application/json; charset=utf-16',
      '*/*; q=nonsense',
    ),
    idempotencyKey: fc.oneof(
      fc.constant(undefined),
      fc.nat().map((n) => `fuzz-${n}`),
      fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 300 }),
    ),
    body: bodyArbitrary(route),
  });
}

function headersOf(r: FuzzRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  if (r.auth === 'full' || r.auth === 'restricted') headers.Authorization = `Bearer ${keys[r.auth]}`;
  if (r.auth === 'bad') headers.Authorization = `Bearer sf_test_${'z'.repeat(40)}`;
  if (r.contentType) headers['Content-Type'] = r.contentType;
  if (r.idempotencyKey !== undefined) headers['Idempotency-Key'] = r.idempotencyKey;
  return headers;
}

/** DESIGN §7: {error, status, code} (+ details, + retry_after on 429), as JSON, with the rate-limit headers. */
function expectErrorShape(res: Sent, what: string): void {
  expect(res.headers['content-type'], what).toMatch(/^application\/json/);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  expect(body.status, what).toBe(res.status);
  expect(body.error, what).toEqual(expect.stringMatching(/\S/));
  expect(body.code, what).toEqual(expect.stringMatching(/^[a-z]+(_[a-z]+)*$/));
  if (body.details !== undefined) {
    expect(body.details, what).toEqual(expect.arrayContaining([]));
    for (const detail of body.details as unknown[]) {
      expect(detail, what).toEqual({ path: expect.any(String), message: expect.stringMatching(/\S/) });
    }
  }
  if (res.status === 429) expect(body.retry_after, what).toEqual(expect.any(Number));
  // The gateway's own answers (a body over the limit, a stalled body) come before the rate-limit window, as API
  // Gateway's gateway responses do; every answer of the API itself carries the window.
  if (![408, 413].includes(res.status)) expect(res.headers['x-ratelimit-limit'], what).toMatch(/^\d+$/);
}

describe('fuzzing every route', () => {
  it.each(routes.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s: never a 5xx; every 4xx is the JSON error shape and changes nothing',
    async (_name, route) => {
      await fc.assert(
        fc.asyncProperty(requestArbitrary(route), async (r) => {
          await rt.settle();
          const before = await snapshot();
          const query = r.query.length ? `?${new URLSearchParams(r.query)}` : '';
          const res = await send(route.method, `${r.path}${query}`, headersOf(r), r.body);
          const what = `${route.method} ${r.path}${query} (${r.auth}, ${r.contentType}) → ${res.status} ${res.body.slice(0, 300)}`;
          expect(res.status, what).toBeLessThan(500);
          if (res.status < 400) return;
          // A person follows a public link: a dead one (its contact deleted, e.g. by this fuzzer's DELETE
          // /contacts/{id}) gets a page saying so, 410 in HTML by design; it still changes nothing.
          // The dashboard is HTML for people too: without a session (the fuzzer has none) it answers its
          // sign-in-required page (401), and 400/403/404 pages; it still changes nothing.
          const html = /^text\/html/.test(String(res.headers['content-type']));
          const deadLinkPage = route.access === 'public' && res.status === 410 && html;
          const dashboardPage = (route as RouteSpec).dashboard === true && html;
          if (!deadLinkPage && !dashboardPage) expectErrorShape(res, what);
          expect(queueDepths(), what).toEqual({
            events: 0,
            deliveries: 0,
            slowDeliveries: 0,
            sends: 0,
            deliveriesDlq: 0,
          });
          expect(await snapshot(), what).toBe(before);
        }),
        { numRuns: Math.ceil((RUNS[route.id] ?? RUNS_PER_ROUTE) * SCALE) },
      );
    },
  );
});

describe('the local gateway and prototype-named request parts', () => {
  // The gateway once built its query and header maps on plain objects, so `constructor` or `__proto__` hit
  // Object.prototype and the request answered 500; they are plain data now.
  it('query parameters and request headers named __proto__, constructor, toString, hasOwnProperty: no 5xx', async () => {
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const byQuery = await send('GET', `/webhooks?${encodeURIComponent(name)}=1`, {
        Authorization: `Bearer ${keys.full}`,
      });
      expect(byQuery.status, `query ${name}`).toBeLessThan(500);
      const byHeader = await send('GET', '/webhooks', { Authorization: `Bearer ${keys.full}`, [name]: '1' });
      expect(byHeader.status, `header ${name}`).toBeLessThan(500);
    }
  });
});
