// Transformations' sandbox and rules (issue 32): hostile handlers each fail within their limit (CPU, memory, stack,
// output) and leave nothing for the next run; nothing of the host is reachable; the clock is the one passed in and
// Math.random throws; the output rules (signature and hop-by-hop headers, methods, URL, cancel); the request
// prepareAttempt makes is signed over the transformed body; simulate applies the SSRF guard to a new URL.
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { DnsUrlVerifier } from '../../lambdas/adapters/http/url-verifier';
import { QuickJsTransformRunner } from '../../lambdas/adapters/sandbox/quickjs-sandbox';
import type { Webhook } from '../../lambdas/app/webhooks/ports';
import { simulateTransformation } from '../../lambdas/app/webhooks/simulate-transformation';
import { prepareAttempt } from '../../lambdas/app/webhooks/transform';
import { checkOutput, TransformationError, type TransformInput } from '../../lambdas/domain/webhooks/transformation';
import { InMemoryWebhookRepository } from '../support/fakes';

const runner = new QuickJsTransformRunner();
const input: TransformInput = {
  eventType: 'email.sent',
  payload: { type: 'email.sent', data: { to: ['a@example.com'] } },
  url: 'https://hooks.example.com/in',
  method: 'POST',
  headers: {},
};
const NOW = Date.UTC(2026, 11, 8, 1, 2, 3);
const run = (source: string) => runner.run(source, input, NOW);
const timed = async (source: string) => {
  const started = performance.now();
  const result = await run(source);
  return { result, ms: performance.now() - started };
};

describe('hostile handlers fail within their limit', () => {
  // Generous bounds: 50 ms of CPU, plus a fresh runtime, on a machine shared by many agents.
  const cases: [string, string, RegExp, number][] = [
    ['an infinite loop', 'function handler(w) { while (true) {} }', /^CPU time limit exceeded \(50 ms\)$/, 400],
    [
      'a getter that loops, read when the result is serialized',
      'function handler(w) { return { get payload() { while (true) {} } } }',
      /^CPU time limit exceeded/,
      400,
    ],
    ['a loop at the top level', 'while (true) {} function handler(w) { return w }', /^CPU time limit exceeded/, 400],
    [
      'a 100 MB string',
      'function handler(w) { w.payload = "x".repeat(100 * 1024 * 1024); return w }',
      /out of memory/,
      400,
    ],
    [
      'an array grown without end',
      'function handler(w) { const a = []; for (;;) a.push({ i: a.length, s: "0123456789" }); }',
      /out of memory|CPU time limit exceeded/,
      400,
    ],
    ['deep recursion', 'function handler(w) { const f = (n) => f(n + 1) + 1; return f(0) }', /stack overflow/i, 400],
    [
      'catastrophic regular expression backtracking',
      'function handler(w) { /^(a+)+$/.test("a".repeat(40) + "!"); return w }',
      /^CPU time limit exceeded/,
      400,
    ],
    [
      'a huge output under the memory limit',
      'function handler(w) { w.payload = "y".repeat(300 * 1024); return w }',
      /^output too large/,
      400,
    ],
    ['a throw', 'function handler(w) { throw new RangeError("no") }', /^RangeError: no$/, 400],
    ['no handler', 'const x = 1', /must define function handler/, 400],
    ['a non-object result', 'function handler(w) { return undefined }', /must return the webhook object/, 400],
    [
      'a JSON.stringify replaced with a non-string',
      'JSON.stringify = () => 42; function handler(w) { return w }',
      /must return the webhook object/,
      400,
    ],
  ];
  it.each(cases)('%s', async (_name, source, message, boundMs) => {
    const { result, ms } = await timed(source);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.error).toMatch(message);
    expect(ms).toBeLessThan(boundMs);
  });

  it('runs normally right after each of them (the module survives)', async () => {
    for (const [, source] of cases) await run(source);
    const after = await run('function handler(w) { w.payload = 1; return w }');
    expect(after).toMatchObject({ ok: true });
  });
});

describe('nothing of the host, nothing of another run', () => {
  it('has no require, process, module loader or host globals; import() never runs', async () => {
    const probe = await run(`function handler(w) {
      let imported = 'pending';
      import('node:fs').then(() => { imported = 'loaded'; }, () => { imported = 'refused'; });
      w.payload = {
        require: typeof require, process: typeof process, module: typeof module, fetch: typeof fetch,
        setTimeout: typeof setTimeout, os: typeof os, std: typeof std, console: typeof console,
        globals: Object.getOwnPropertyNames(globalThis).filter((k) => !/^[A-Z]/.test(k)).sort(),
        imported,
      };
      return w;
    }`);
    expect(probe.ok).toBe(true);
    const payload = probe.ok ? (JSON.parse(probe.output) as { payload: Record<string, unknown> }).payload : {};
    expect(payload).toMatchObject({
      require: 'undefined',
      process: 'undefined',
      module: 'undefined',
      fetch: 'undefined',
      setTimeout: 'undefined',
      os: 'undefined',
      std: 'undefined',
      console: 'undefined',
      imported: 'pending',
    });
    // The language's own globals only (the capitalized ones are constructors and namespaces: Math, JSON, …).
    expect(payload.globals).toEqual([
      'decodeURI',
      'decodeURIComponent',
      'encodeURI',
      'encodeURIComponent',
      'escape',
      // QuickJS's own eval: it compiles in the same sandbox, under the same limits.
      'eval',
      'globalThis',
      'handler',
      'isFinite',
      'isNaN',
      'parseFloat',
      'parseInt',
      'undefined',
      'unescape',
    ]);
  });

  it('prototype pollution and globals of one run are gone in the next', async () => {
    const polluter = await run(`Object.prototype.polluted = 'yes'; Array.prototype.map = null;
      globalThis.leak = 'tenant A'; JSON.parse = () => ({}); function handler(w) { return w }`);
    expect(polluter.ok).toBe(true);
    const next = await run(`function handler(w) {
      w.payload = [({}).polluted ?? 'clean', typeof [].map, typeof leak, JSON.parse('{"a":1}').a];
      return w;
    }`);
    expect(next.ok && JSON.parse(next.output).payload).toEqual(['clean', 'function', 'undefined', 1]);
  });

  it('reads the clock passed in, and refuses Math.random', async () => {
    const clock = await run(`function handler(w) {
      w.payload = [Date.now(), new Date().toISOString(), new Date(0).toISOString(), Date() === new Date(${NOW}).toString()];
      return w;
    }`);
    expect(clock.ok && JSON.parse(clock.output).payload).toEqual([
      NOW,
      new Date(NOW).toISOString(),
      '1970-01-01T00:00:00.000Z',
      true,
    ]);
    const random = await run('function handler(w) { w.payload = Math.random(); return w }');
    expect(random).toMatchObject({ ok: false, error: expect.stringMatching(/Math.random is not available/) });
  });

  it('checks a source: null when it loads and defines handler, else the reason', async () => {
    expect(await runner.check('function handler(w) { return w }')).toBeNull();
    expect(await runner.check('function handler(w) {')).toMatch(/SyntaxError/);
    expect(await runner.check('var handler = 3')).toMatch(/must define function handler/);
  });
});

describe('output rules', () => {
  const base = { url: 'https://hooks.example.com/x', method: 'POST', headers: {}, payload: { a: 1 } };
  const bytes = 100;
  it.each([
    'webhook-signature',
    'Webhook-Id',
    'webhook-timestamp',
    'svix-signature',
    'svix-id',
    'Connection',
    'transfer-encoding',
    'Host',
    'content-length',
    'upgrade',
  ])('refuses the header %s', (name) => {
    expect(() => checkOutput({ ...base, headers: { [name]: 'x' } }, bytes)).toThrow(/may not be set/);
  });
  it('refuses bad names, values with line breaks, non-strings, bad methods and URLs, a missing payload', () => {
    expect(() => checkOutput({ ...base, headers: { 'a b': 'x' } }, bytes)).toThrow(/not a valid header name/);
    expect(() => checkOutput({ ...base, headers: { 'x-a': 'a\r\nb: c' } }, bytes)).toThrow(/without line breaks/);
    expect(() => checkOutput({ ...base, headers: { 'x-a': 1 } }, bytes)).toThrow(TransformationError);
    expect(() => checkOutput({ ...base, method: 'DELETE' }, bytes)).toThrow(/method must be one of/);
    expect(() => checkOutput({ ...base, url: 'ftp://x.example' }, bytes)).toThrow(/http or https/);
    expect(() => checkOutput({ ...base, url: 'not a url' }, bytes)).toThrow(/absolute URL/);
    expect(() => checkOutput({ ...base, payload: undefined }, bytes)).toThrow(/payload must be set/);
    expect(() => checkOutput(base, 300 * 1024)).toThrow(/output too large/);
    expect(() => checkOutput({ ...base, cancel: 'yes' }, bytes)).toThrow(/cancel must be/);
  });
  it('keeps the rest: lower-case header names, the method upper-cased, the body as JSON; or a cancel', () => {
    expect(checkOutput({ ...base, method: 'put', headers: { 'X-Card': 'teams' } }, bytes)).toEqual({
      cancel: false,
      url: base.url,
      method: 'PUT',
      headers: { 'x-card': 'teams' },
      body: '{"a":1}',
    });
    expect(checkOutput({ ...base, cancel: true }, bytes)).toEqual({ cancel: true });
  });
});

const SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
const webhook = (transformation: string | null): Webhook => ({
  accountId: 'acc_1',
  mode: 'test',
  id: 'wh_1',
  url: 'https://hooks.example.com/in',
  events: ['email.sent'],
  format: 'standard',
  secret: SECRET,
  active: true,
  createdAt: '2026-12-01T00:00:00.000Z',
  updatedAt: '2026-12-01T00:00:00.000Z',
  transformation,
});

describe('prepareAttempt', () => {
  const delivery = {
    format: 'standard' as const,
    eventId: 'evt_1',
    event: 'email.sent',
    payload: '{"type":"email.sent","data":{"n":1}}',
    createdAt: NOW,
  };
  it('signs the transformed body; a header the handler sets cannot replace the signature or content type', async () => {
    const source = `function handler(w) { w.payload = { n: w.payload.data.n + 1 }; w.headers['X-Tenant'] = 'a'; return w }`;
    const prepared = await prepareAttempt({ transforms: runner }, webhook(source), delivery, Date.now());
    expect(prepared.kind).toBe('send');
    if (prepared.kind !== 'send') return;
    expect(prepared.request.body).toBe('{"n":2}');
    expect(prepared.request.headers['x-tenant']).toBe('a');
    expect(prepared.request.headers['Content-Type']).toBe('application/json');
    expect(new StandardWebhook(SECRET).verify(prepared.request.body, prepared.request.headers)).toEqual({ n: 2 });
  });
  it('sends the stored body untouched without a transformation; fails, never sends untransformed, without a sandbox', async () => {
    const plain = await prepareAttempt({}, webhook(null), delivery, Date.now());
    expect(plain.kind === 'send' && plain.request.body).toBe(delivery.payload);
    const noSandbox = await prepareAttempt({}, webhook('function handler(w) { return w }'), delivery, Date.now());
    expect(noSandbox).toMatchObject({
      kind: 'failed',
      outcome: { errorClass: 'transformation_error', error: 'transformation failed: no sandbox in this runtime' },
    });
  });
});

describe('simulate applies the SSRF guard to a URL the transformation chose', () => {
  it('reports a metadata address as the attempt would fail (blocked_address), sending nothing', async () => {
    const webhooks = new InMemoryWebhookRepository();
    await webhooks.create(
      webhook('function handler(w) { w.url = "https://169.254.169.254/latest/meta-data"; return w }'),
    );
    const deps = {
      webhooks,
      urlVerifier: new DnsUrlVerifier({ allowPrivate: false }),
      clock: { now: () => NOW },
      random: (n: number) => new Uint8Array(n),
      transforms: runner,
    };
    const result = await simulateTransformation(deps, { accountId: 'acc_1', mode: 'test' }, 'wh_1', {
      eventType: 'email.sent',
      payload: { a: 1 },
    });
    expect(result).toEqual({
      outcome: 'error',
      error: expect.stringMatching(/^URL must not point to .*blocked_address/),
    });
  });
});
