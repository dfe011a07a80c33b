// Tests of the webhook sender (lambdas/adapters/http/webhook-sender.ts, DESIGN §4) against real loopback
// servers on port 0: success only on 2xx, redirects never followed, a bounded read and a 500-character excerpt,
// the time-out, refused connections, TLS failures (a self-signed certificate, a port that does not speak TLS), the
// error class and phase timings of each outcome, and the SSRF guard (https only, and every resolved address
// public, checked before any connection). Also the guarded DNS lookup itself (lambdas/adapters/http/guarded-lookup.ts).
// DNS answers for the `*.sendflow.test` names are scripted through a mock of node:dns; every other name goes
// to the real resolver.
import type { LookupAddress } from 'node:dns';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer, type IncomingHttpHeaders } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, LookupFunction, Server as NetServer } from 'node:net';
import { createServer as createNetServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AddressNotAllowedError, guardedLookup, refusedAddress } from '../../lambdas/adapters/http/guarded-lookup';
import { HttpWebhookSender } from '../../lambdas/adapters/http/webhook-sender';

const dns = vi.hoisted(() => ({
  answers: new Map<string, LookupAddress[] | NodeJS.ErrnoException>(),
  calls: [] as { hostname: string; options: unknown }[],
}));

vi.mock('node:dns', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:dns')>();
  const lookup = (hostname: string, options: unknown, callback?: unknown) => {
    const cb = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
    const opts = (typeof options === 'function' ? {} : options) as { all?: boolean };
    dns.calls.push({ hostname, options: opts });
    const scripted = dns.answers.get(hostname);
    if (scripted === undefined) return (real.lookup as (...args: unknown[]) => void)(hostname, opts, cb);
    process.nextTick(() => {
      if (scripted instanceof Error) return cb(scripted);
      if (opts.all) return cb(null, scripted);
      cb(null, scripted[0]?.address, scripted[0]?.family);
    });
  };
  return { ...real, lookup, default: { ...real, lookup } };
});

const v4 = (address: string): LookupAddress => ({ address, family: 4 });
const v6 = (address: string): LookupAddress => ({ address, family: 6 });
const notFound = (hostname: string) =>
  Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });

beforeEach(() => {
  dns.answers.clear();
  dns.calls.length = 0;
});

// --- loopback servers ----------------------------------------------------------------------------------------

interface Got {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

type Answer = (req: Got, res: import('node:http').ServerResponse) => void;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** An HTTP server on 127.0.0.1:0 that records each request (after its body) and answers with `answer`. */
async function httpServer(answer: Answer = (_req, res) => res.writeHead(200).end('ok')) {
  const got: Got[] = [];
  const server: HttpServer = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      got.push(request);
      answer(request, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { got, port, url: `http://127.0.0.1:${port}` };
}

/** A bare TCP listener that only counts connections: proof that nothing reached the port. */
async function tcpListener() {
  let connections = 0;
  const server: NetServer = createNetServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port, connections: () => connections };
}

function newSender(options: { timeoutMs?: number; allowPrivate?: boolean; now?: () => number } = {}) {
  const sender = new HttpWebhookSender({ timeoutMs: 2_000, allowPrivate: true, ...options });
  closers.push(() => sender.close());
  return sender;
}

const request = (url: string, body = '{"type":"email.sent"}', headers: Record<string, string> = {}) => ({
  url,
  body,
  headers: { 'Content-Type': 'application/json', ...headers },
});

// --- outcomes ------------------------------------------------------------------------------------------------

describe('HttpWebhookSender: outcomes', () => {
  it('records a 2xx as success: status, no error, the response text, at from the clock', async () => {
    // Arrange
    const server = await httpServer((_req, res) => res.writeHead(201, { 'Content-Type': 'text/plain' }).end('created'));
    const sender = newSender({ now: () => 1_700_000_000_123 });

    // Act
    const outcome = await sender.send(request(`${server.url}/hook`));

    // Assert
    expect(outcome).toEqual({
      at: 1_700_000_000_123,
      statusCode: 201,
      error: null,
      errorClass: null,
      response: 'created',
      // The answer's headers as received, bounded (lower-case names).
      responseHeaders: expect.objectContaining({ 'content-type': 'text/plain', connection: 'keep-alive' }),
      durationMs: expect.any(Number),
      timings: { dnsMs: null, connectMs: expect.any(Number), tlsMs: null, ttfbMs: expect.any(Number) },
    });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(0);
    expect(outcome.durationMs).toBeLessThan(2_000);
  });

  it('sends a POST with the exact body bytes and headers given', async () => {
    // Arrange
    const server = await httpServer((_req, res) => res.writeHead(204).end());
    const body = '{"id":"evt_1","data":{"subject":"Grüße ✉️ — \\"quoted\\"","n":1.5}}';
    const headers = {
      'X-Service-Signature': 'a'.repeat(64),
      'X-Service-Timestamp': '1700000000',
      'webhook-id': 'evt_1',
      'webhook-signature': 'v1,c2lnbmF0dXJl',
      'User-Agent': 'Sendflow-Webhooks/1.0 (+https://sendflow.dev/docs/webhooks)',
    };

    // Act
    const outcome = await newSender().send(request(`${server.url}/path?q=1`, body, headers));

    // Assert
    expect(outcome.statusCode).toBe(204);
    expect(server.got).toHaveLength(1);
    const [got] = server.got;
    expect(got?.method).toBe('POST');
    expect(got?.url).toBe('/path?q=1');
    expect(got?.body.equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(got?.headers).toMatchObject({
      'content-type': 'application/json',
      'x-service-signature': 'a'.repeat(64),
      'x-service-timestamp': '1700000000',
      'webhook-id': 'evt_1',
      'webhook-signature': 'v1,c2lnbmF0dXJl',
      'user-agent': 'Sendflow-Webhooks/1.0 (+https://sendflow.dev/docs/webhooks)',
      'content-length': String(Buffer.byteLength(body)),
    });
  });

  it.each([400, 404, 429, 500, 503])(
    'records HTTP %i as a failure with error "HTTP %i" and the response',
    async (status) => {
      // Arrange
      const server = await httpServer((_req, res) => res.writeHead(status).end(`failure ${status}`));

      // Act
      const outcome = await newSender().send(request(server.url));

      // Assert
      expect(outcome).toMatchObject({ statusCode: status, error: `HTTP ${status}`, response: `failure ${status}` });
      expect(outcome.errorClass).toBe(status < 500 ? 'http_4xx' : 'http_5xx');
    },
  );

  it.each([301, 302, 307, 308])('does not follow a %i: the Location target receives nothing', async (status) => {
    // Arrange
    const target = await httpServer();
    const redirecting = await httpServer((_req, res) =>
      res.writeHead(status, { Location: `${target.url}/moved` }).end(),
    );

    // Act
    const outcome = await newSender().send(request(redirecting.url));
    await new Promise((resolve) => setTimeout(resolve, 20));

    // Assert
    expect(outcome.statusCode).toBe(status);
    expect(outcome.error).toBe(`redirect not followed (HTTP ${status} to ${target.url}/moved)`);
    expect(outcome.errorClass).toBe('redirect');
    expect(redirecting.got).toHaveLength(1);
    expect(target.got).toHaveLength(0);
  });

  it('keeps the first 500 characters of a 1 MB response', async () => {
    // Arrange
    const big = Array.from({ length: 1024 * 1024 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    const server = await httpServer((_req, res) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(big));

    // Act
    const outcome = await newSender().send(request(server.url));

    // Assert
    expect(outcome.error).toBe('HTTP 500');
    expect(outcome.response).toBe(big.slice(0, 500));
  });

  it('counts characters, not bytes, in the excerpt', async () => {
    // Arrange
    const text = 'é✉'.repeat(400);
    const server = await httpServer((_req, res) => res.writeHead(200).end(text));

    // Act
    const outcome = await newSender().send(request(server.url));

    // Assert
    expect(outcome.response).toBe(text.slice(0, 500));
    expect([...outcome.response]).toHaveLength(500);
  });

  it('bounds the read: an endless 2xx body ends the attempt long before the time-out', async () => {
    // Arrange: the server streams 16 KB chunks forever.
    const server = await httpServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      const chunk = 'x'.repeat(16 * 1024);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });

    // Act
    const outcome = await newSender({ timeoutMs: 5_000 }).send(request(server.url));

    // Assert
    expect(outcome).toMatchObject({ statusCode: 200, error: null, response: 'x'.repeat(500) });
    expect(outcome.durationMs).toBeLessThan(2_500);
  });

  it('times out a server that never answers: no status, "timed out after 300 ms", duration ≈ 300 ms', async () => {
    // Arrange
    const server = await httpServer(() => {});

    // Act
    const outcome = await newSender({ timeoutMs: 300 }).send(request(server.url));

    // Assert
    expect(outcome).toMatchObject({ statusCode: null, error: 'timed out after 300 ms', response: '' });
    expect(outcome.errorClass).toBe('timeout');
    expect(outcome.durationMs).toBeGreaterThanOrEqual(290);
    expect(outcome.durationMs).toBeLessThan(900);
    expect(server.got).toHaveLength(1);
  });

  it('times out a body that stalls after the headers, within the same overall deadline', async () => {
    // Arrange
    const server = await httpServer((_req, res) => {
      res.writeHead(200);
      res.write('partial');
    });

    // Act
    const outcome = await newSender({ timeoutMs: 300 }).send(request(server.url));

    // Assert
    expect(outcome).toMatchObject({ statusCode: null, error: 'timed out after 300 ms' });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(290);
    expect(outcome.durationMs).toBeLessThan(900);
  });

  it('reports a refused connection as "connection refused"', async () => {
    // Arrange: a port that was just free.
    const listener = await tcpListener();
    const port = listener.port;
    await closers.pop()?.();

    // Act
    const outcome = await newSender().send(request(`http://127.0.0.1:${port}/`));

    // Assert
    expect(outcome).toMatchObject({ statusCode: null, error: 'connection refused', response: '' });
    expect(outcome.errorClass).toBe('connection_refused');
  });

  it('reports a name that does not resolve as a DNS failure', async () => {
    // Arrange
    dns.answers.set('gone.sendflow.test', notFound('gone.sendflow.test'));

    // Act
    const outcome = await newSender({ allowPrivate: false }).send(request('https://gone.sendflow.test/hook'));

    // Assert
    expect(outcome).toMatchObject({ statusCode: null, error: 'DNS lookup failed (ENOTFOUND)' });
    expect(outcome.errorClass).toBe('dns_error');
  });

  it('reuses one kept-alive connection for consecutive attempts to the same endpoint', async () => {
    // Arrange
    const sockets = new Set<string>();
    const sender = newSender();
    const seen = await httpServer((_req, res) => {
      sockets.add(`${res.socket?.remotePort}`);
      res.writeHead(200).end('ok');
    });

    // Act
    await sender.send(request(seen.url));
    await sender.send(request(seen.url));
    await sender.send(request(seen.url));

    // Assert
    expect(seen.got).toHaveLength(3);
    expect(sockets.size).toBe(1);
  });

  it('connects to the address its own lookup returned (one resolution, Host header kept)', async () => {
    // Arrange
    const server = await httpServer();
    dns.answers.set('pinned.sendflow.test', [v4('127.0.0.1')]);

    // Act
    const outcome = await newSender().send(request(`http://pinned.sendflow.test:${server.port}/hook`));

    // Assert
    expect(outcome).toMatchObject({ statusCode: 200, error: null });
    expect(server.got[0]?.headers.host).toBe(`pinned.sendflow.test:${server.port}`);
    expect(dns.calls.filter((c) => c.hostname === 'pinned.sendflow.test')).toHaveLength(1);
  });
});

// --- SSRF guard ----------------------------------------------------------------------------------------------

describe('HttpWebhookSender: with allowPrivate false (AWS)', () => {
  it('refuses http:// without making a request', async () => {
    // Arrange
    const server = await httpServer();

    // Act
    const outcome = await newSender({ allowPrivate: false }).send(request(server.url));

    // Assert
    expect(outcome).toMatchObject({ statusCode: null, error: 'URL must use https', response: '' });
    expect(outcome.errorClass).toBe('blocked_address');
    expect(server.got).toHaveLength(0);
  });

  it('refuses https://localhost:PORT/ without connecting', async () => {
    // Arrange
    const listener = await tcpListener();

    // Act
    const outcome = await newSender({ allowPrivate: false }).send(request(`https://localhost:${listener.port}/`));

    // Assert
    expect(outcome.statusCode).toBeNull();
    // Refused by the static check before any lookup (the guarded lookup would refuse it too, see below).
    expect(outcome.error).toBe('URL must not point to a local host name');
    expect(outcome.errorClass).toBe('blocked_address');
    expect(listener.connections()).toBe(0);
  });

  it.each([
    ['loopback', [v4('127.0.0.1')], '127.0.0.1'],
    ['one private answer among public ones', [v4('93.184.216.34'), v4('10.0.0.7')], '10.0.0.7'],
    ['IPv4-mapped loopback', [v6('::ffff:127.0.0.1')], '::ffff:127.0.0.1'],
    ['cloud metadata', [v4('169.254.169.254')], '169.254.169.254'],
  ])(
    'refuses a name resolving to %s in the guarded lookup, with no connection made',
    async (_case, answers, refused) => {
      // Arrange
      const listener = await tcpListener();
      dns.answers.set('inside.sendflow.test', answers);

      // Act
      const outcome = await newSender({ allowPrivate: false }).send(
        request(`https://inside.sendflow.test:${listener.port}/hook`),
      );

      // Assert
      expect(outcome).toMatchObject({
        statusCode: null,
        error: `address not allowed: inside.sendflow.test resolves to ${refused}`,
        response: '',
      });
      expect(outcome.errorClass).toBe('blocked_address');
      expect(listener.connections()).toBe(0);
    },
  );

  it("refuses this machine's own host name when the resolver maps it to a non-public address", async (ctx) => {
    // Arrange: the real resolver; skipped where the host name resolves to a public address or not at all.
    const { hostname } = await import('node:os');
    const { lookup } = await import('node:dns/promises');
    const name = hostname();
    const addresses = await lookup(name, { all: true }).catch(() => []);
    if (addresses.length === 0 || refusedAddress(addresses) === null) ctx.skip();
    const listener = await tcpListener();

    // Act
    const outcome = await newSender({ allowPrivate: false }).send(request(`https://${name}:${listener.port}/`));

    // Assert
    expect(outcome.statusCode).toBeNull();
    expect(outcome.error).toMatch(/address not allowed|must not point to a local host name/);
    expect(outcome.errorClass).toBe('blocked_address');
    expect(listener.connections()).toBe(0);
  });
});

// --- guardedLookup -------------------------------------------------------------------------------------------

/** Calls a LookupFunction and collects what its callback received. */
function callLookup(lookup: LookupFunction, hostname: string, options: { all?: boolean; family?: number } = {}) {
  return new Promise<{ error: (Error & { code?: string }) | null; address: unknown; family: unknown }>((resolve) => {
    lookup(
      hostname,
      options as never,
      ((error: Error | null, address: unknown, family: unknown) => resolve({ error, address, family })) as never,
    );
  });
}

describe('guardedLookup', () => {
  it('refuses a host when ANY of its addresses is not public, naming that address', async () => {
    // Arrange
    dns.answers.set('mixed.sendflow.test', [v4('93.184.216.34'), v6('2606:4700::1111'), v6('fd00::1')]);

    // Act
    const result = await callLookup(guardedLookup(false), 'mixed.sendflow.test');

    // Assert
    expect(result.error).toBeInstanceOf(AddressNotAllowedError);
    expect(result.error?.code).toBe('EADDRNOTALLOWED');
    expect(result.error?.message).toBe('address not allowed: mixed.sendflow.test resolves to fd00::1');
  });

  it('asks the resolver for every address, whatever the caller asked', async () => {
    // Arrange
    dns.answers.set('public.sendflow.test', [v4('93.184.216.34')]);

    // Act
    await callLookup(guardedLookup(false), 'public.sendflow.test', { family: 4 });

    // Assert
    expect(dns.calls).toEqual([{ hostname: 'public.sendflow.test', options: { family: 4, all: true } }]);
  });

  it('returns the first address and its family when options.all is not set', async () => {
    // Arrange
    dns.answers.set('public.sendflow.test', [v6('2606:4700::1111'), v4('93.184.216.34')]);

    // Act
    const result = await callLookup(guardedLookup(false), 'public.sendflow.test');

    // Assert
    expect(result).toEqual({ error: null, address: '2606:4700::1111', family: 6 });
  });

  it('returns every address when options.all is set (as net.connect with autoSelectFamily asks)', async () => {
    // Arrange
    const answers = [v4('93.184.216.34'), v6('2606:4700::1111')];
    dns.answers.set('public.sendflow.test', answers);

    // Act
    const result = await callLookup(guardedLookup(false), 'public.sendflow.test', { all: true });

    // Assert
    expect(result.error).toBeNull();
    expect(result.address).toEqual(answers);
  });

  it('lets private addresses through when allowPrivate is true (the local runtime)', async () => {
    // Arrange
    dns.answers.set('lan.sendflow.test', [v4('192.168.1.20')]);

    // Act
    const result = await callLookup(guardedLookup(true), 'lan.sendflow.test');

    // Assert
    expect(result).toEqual({ error: null, address: '192.168.1.20', family: 4 });
  });

  it('passes a resolver error through unchanged', async () => {
    // Arrange
    const error = notFound('gone.sendflow.test');
    dns.answers.set('gone.sendflow.test', error);

    // Act
    const result = await callLookup(guardedLookup(false), 'gone.sendflow.test');

    // Assert
    expect(result.error).toBe(error);
  });

  it('fails with ENOTFOUND when the resolver returns no address', async () => {
    // Arrange
    dns.answers.set('empty.sendflow.test', []);

    // Act
    const result = await callLookup(guardedLookup(false), 'empty.sendflow.test');

    // Assert
    expect(result.error?.code).toBe('ENOTFOUND');
    expect(result.error?.message).toBe('no address for empty.sendflow.test');
  });

  it('refusedAddress: null when all are public, else the first non-public one', () => {
    expect(refusedAddress([v4('93.184.216.34'), v6('2606:4700::1111')])).toBeNull();
    expect(refusedAddress([v4('93.184.216.34'), v4('100.64.0.1'), v4('10.0.0.1')])).toBe('100.64.0.1');
    expect(refusedAddress([])).toBeNull();
  });
});

// --- error classes and phase timings -------------------------------------------------------------------------

/** An https server on 127.0.0.1:0 with the self-signed test certificate (test/fixtures/tls, CN=localhost). */
async function httpsServer() {
  const dir = new URL('../fixtures/tls/', import.meta.url);
  const server = createHttpsServer(
    { key: readFileSync(new URL('key.pem', dir)), cert: readFileSync(new URL('cert.pem', dir)) },
    (_req, res) => res.writeHead(200).end('ok'),
  );
  let handshakes = 0;
  server.on('secureConnection', () => {
    handshakes += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port, handshakes: () => handshakes };
}

describe('HttpWebhookSender: error classes and timings', () => {
  it('times an answered http attempt to an IP literal: no DNS, a connect, no TLS, a ttfb', async () => {
    // Arrange
    const server = await httpServer((_req, res) => res.writeHead(500).end('boom'));

    // Act
    const outcome = await newSender().send(request(server.url));

    // Assert
    expect(outcome).toMatchObject({ statusCode: 500, error: 'HTTP 500', errorClass: 'http_5xx' });
    expect(outcome.timings).toEqual({
      dnsMs: null,
      connectMs: expect.any(Number),
      tlsMs: null,
      ttfbMs: expect.any(Number),
    });
  });

  it('times the DNS lookup of a host name', async () => {
    // Arrange
    const server = await httpServer();
    dns.answers.set('timed.sendflow.test', [v4('127.0.0.1')]);

    // Act
    const outcome = await newSender().send(request(`http://timed.sendflow.test:${server.port}/hook`));

    // Assert
    expect(outcome).toMatchObject({ statusCode: 200, errorClass: null });
    expect(outcome.timings.dnsMs).toEqual(expect.any(Number));
    expect(outcome.timings.connectMs).toEqual(expect.any(Number));
  });

  it("counts ttfb from the request written to the headers: the server's think time", async () => {
    // Arrange
    const server = await httpServer((_req, res) => setTimeout(() => res.writeHead(200).end('ok'), 150));

    // Act
    const outcome = await newSender().send(request(server.url));

    // Assert
    expect(outcome.timings.ttfbMs).toBeGreaterThanOrEqual(140);
    expect(outcome.timings.ttfbMs).toBeLessThanOrEqual(outcome.durationMs);
  });

  it('has no DNS, connect or TLS phase on a reused keep-alive socket', async () => {
    // Arrange
    const sender = newSender();
    const server = await httpServer();
    await sender.send(request(server.url));

    // Act
    const second = await sender.send(request(server.url));

    // Assert
    expect(second.timings).toEqual({ dnsMs: null, connectMs: null, tlsMs: null, ttfbMs: expect.any(Number) });
  });

  it('has no connect time and no ttfb for a refused connection', async () => {
    // Arrange
    const listener = await tcpListener();
    await closers.pop()?.();

    // Act
    const outcome = await newSender().send(request(`http://127.0.0.1:${listener.port}/`));

    // Assert
    expect(outcome).toMatchObject({ errorClass: 'connection_refused', error: 'connection refused' });
    expect(outcome.timings).toEqual({ dnsMs: null, connectMs: null, tlsMs: null, ttfbMs: null });
  });

  it('classes a refused URL as blocked_address with no phase at all', async () => {
    const outcome = await newSender({ allowPrivate: false }).send(request('http://example.com/'));
    expect(outcome).toMatchObject({ errorClass: 'blocked_address' });
    expect(outcome.timings).toEqual({ dnsMs: null, connectMs: null, tlsMs: null, ttfbMs: null });
  });

  it('fails https to a self-signed certificate as tls_error with a readable text, after the TCP connect', async () => {
    // Arrange
    const server = await httpsServer();

    // Act
    const outcome = await newSender().send(request(`https://127.0.0.1:${server.port}/hook`));

    // Assert
    expect(outcome).toMatchObject({
      statusCode: null,
      errorClass: 'tls_error',
      error: 'TLS handshake failed: the certificate is self-signed',
    });
    expect(outcome.timings).toEqual({ dnsMs: null, connectMs: expect.any(Number), tlsMs: null, ttfbMs: null });
    expect(server.handshakes()).toBe(0);
  });

  it('fails https to a port that speaks plain http as tls_error, without OpenSSL text', async () => {
    // Arrange
    const server = await httpServer();

    // Act
    const outcome = await newSender().send(request(`https://127.0.0.1:${server.port}/hook`));

    // Assert
    expect(outcome).toMatchObject({
      statusCode: null,
      errorClass: 'tls_error',
      error: 'TLS handshake failed: the endpoint does not speak TLS on this port',
    });
    expect(server.got).toHaveLength(0);
  });
});
