// The attachment fetcher (lambdas/adapters/http/attachment-fetcher.ts) against real loopback servers on port 0:
// the webhook sender's SSRF guard (https on port 443 and public addresses only unless private URLs are allowed; a
// name resolving to a private address refused before any connection; link-local and cloud metadata addresses
// refused even when private URLs are allowed), redirects never followed, non-200 refused, the size bound (declared
// and streamed), the deadline, and a failed connection: each a reason, never a throw. Reasons say nothing a
// caller could map a network with (which address a name resolves to, refused vs reset vs bad certificate).
import type { LookupAddress } from 'node:dns';
import { readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HttpAttachmentFetcher } from '../../lambdas/adapters/http/attachment-fetcher';

const dns = vi.hoisted(() => ({ answers: new Map<string, LookupAddress[]>() }));
vi.mock('node:dns', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:dns')>();
  const lookup = (hostname: string, options: unknown, callback?: unknown) => {
    const cb = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
    const opts = (typeof options === 'function' ? {} : options) as { all?: boolean };
    const scripted = dns.answers.get(hostname);
    if (scripted === undefined) return (real.lookup as (...args: unknown[]) => void)(hostname, opts, cb);
    process.nextTick(() => (opts.all ? cb(null, scripted) : cb(null, scripted[0]?.address, scripted[0]?.family)));
  };
  return { ...real, lookup, default: { ...real, lookup } };
});

let server: Server;
let base: string;
let hits = 0;
let answer: (res: ServerResponse) => void = (res) => res.end('ok');

beforeEach(async () => {
  hits = 0;
  dns.answers.clear();
  server = createServer((_req, res) => {
    hits += 1;
    answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const open = new HttpAttachmentFetcher({ allowPrivate: true });
const guarded = new HttpAttachmentFetcher({ allowPrivate: false });
const opts = (maxBytes = 1000, ms = 2000) => ({ maxBytes, signal: AbortSignal.timeout(ms) });

describe('the SSRF guard (private URLs not allowed, as on AWS)', () => {
  it('refuses http, a private address, and a name resolving to one, before any connection', async () => {
    dns.answers.set('files.sendflow.test', [{ address: '127.0.0.1', family: 4 }]);
    const port = new URL(base).port;
    const results = await Promise.all([
      guarded.fetch(`${base}/a`, opts()),
      guarded.fetch(`https://127.0.0.1:${port}/a`, opts()),
      guarded.fetch(`https://169.254.169.254/latest/meta-data`, opts()),
      guarded.fetch('https://files.sendflow.test/a', opts()),
    ]);
    expect(results).toEqual([
      { ok: false, reason: 'The URL must use https.' },
      { ok: false, reason: 'The URL must not point to a private, loopback or reserved address.' },
      { ok: false, reason: 'The URL must not point to a private, loopback or reserved address.' },
      // Not "resolves to 127.0.0.1": the caller learns nothing of what our resolver answers.
      { ok: false, reason: 'The URL must not point to a private, loopback or reserved address.' },
    ]);
    expect(hits).toBe(0);
  });

  it('refuses any port but 443, before any connection (no port scans of public hosts)', async () => {
    dns.answers.set('files.example.com', [{ address: '93.184.215.14', family: 4 }]);
    const results = await Promise.all([
      guarded.fetch('https://files.example.com:8443/a', opts()),
      guarded.fetch('https://files.example.com:22/a', opts()),
    ]);
    expect(results).toEqual([
      { ok: false, reason: 'The URL must use https on port 443 (no other port).' },
      { ok: false, reason: 'The URL must use https on port 443 (no other port).' },
    ]);
  });
});

describe('link-local and cloud metadata addresses: refused even when private URLs are allowed', () => {
  it('as literals and as what a name resolves to, before any connection', async () => {
    dns.answers.set('metadata.sendflow.test', [{ address: '169.254.169.254', family: 4 }]);
    dns.answers.set('metadata6.sendflow.test', [{ address: 'fd00:ec2::254', family: 6 }]);
    dns.answers.set('compat6.sendflow.test', [{ address: '::a9fe:a9fe', family: 6 }]);
    const urls = [
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'http://169.254.170.2/v2/credentials',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/',
      'http://[::ffff:a9fe:a9fe]/',
      // IPv4-compatible, SIIT, NAT64, 6to4, Teredo and ISATAP forms of 169.254.169.254, and AWS's IPv6 services.
      'http://[::a9fe:a9fe]/latest/meta-data/',
      'http://[::169.254.169.254]/',
      'http://[::ffff:0:a9fe:a9fe]/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://[64:ff9b:1::a9fe:a9fe]/',
      'http://[2002:a9fe:a9fe::]/',
      'http://[2001:0:a9fe:a9fe::1]/',
      'http://[fe80::5efe:a9fe:a9fe]/',
      'http://[fd00:ec2::253]/',
      'http://metadata.sendflow.test/latest/meta-data/',
      'http://metadata6.sendflow.test/latest/meta-data/',
      'http://compat6.sendflow.test/latest/meta-data/',
    ];
    const results = await Promise.all(urls.map((u) => open.fetch(u, opts(1000, 500))));
    expect(results).toEqual(
      urls.map(() => ({ ok: false, reason: 'The URL must not point to a link-local or cloud metadata address.' })),
    );
  });
});

describe('fetching (private URLs allowed, as locally)', () => {
  it('gives the bytes and the type without its parameters', async () => {
    answer = (res) => res.writeHead(200, { 'Content-Type': 'text/csv; charset=utf-8' }).end('a,b');
    expect(await open.fetch(`${base}/f`, opts())).toEqual({
      ok: true,
      bytes: new Uint8Array(Buffer.from('a,b')),
      contentType: 'text/csv',
    });
  });

  it('does not follow a redirect, and refuses any status but 200', async () => {
    answer = (res) => res.writeHead(302, { Location: 'http://169.254.169.254/' }).end();
    expect(await open.fetch(`${base}/r`, opts())).toEqual({
      ok: false,
      reason: expect.stringMatching(/302 \(a redirect\); redirects are not followed/),
    });
    answer = (res) => res.writeHead(500).end('boom');
    expect(await open.fetch(`${base}/e`, opts())).toEqual({
      ok: false,
      reason: 'The URL answered HTTP 500; 200 is needed.',
    });
    expect(hits).toBe(2);
  });

  it('refuses a body past the bound, declared or streamed', async () => {
    answer = (res) => res.writeHead(200, { 'Content-Length': '2000' }).end(Buffer.alloc(2000));
    expect(await open.fetch(`${base}/big`, opts(1000))).toEqual({
      ok: false,
      reason: expect.stringMatching(/larger than 1000 bytes/),
    });
    answer = (res) => {
      res.writeHead(200);
      res.write(Buffer.alloc(600));
      res.write(Buffer.alloc(600));
      // never ended: the read stops at the bound anyway
    };
    expect(await open.fetch(`${base}/stream`, opts(1000))).toEqual({
      ok: false,
      reason: expect.stringMatching(/larger than 1000 bytes/),
    });
  });

  it('gives up at the deadline, and reports a refused connection', async () => {
    answer = () => {}; // never answers
    expect(await open.fetch(`${base}/hang`, opts(1000, 200))).toEqual({
      ok: false,
      reason: 'Fetching the URL took too long.',
    });
    expect(await open.fetch('http://127.0.0.1:1/x', opts())).toEqual({
      ok: false,
      reason: 'The URL could not be fetched (no connection, or TLS failed).',
    });
  });
});

describe('https', () => {
  it('verifies the certificate: a self-signed one is refused, nothing read', async () => {
    const dir = new URL('../fixtures/tls/', import.meta.url);
    let served = 0;
    const tls = createHttpsServer(
      { key: readFileSync(new URL('key.pem', dir)), cert: readFileSync(new URL('cert.pem', dir)) },
      (_q, res) => {
        served += 1;
        res.end('secret');
      },
    );
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = tls.address() as AddressInfo;
      expect(await open.fetch(`https://localhost:${port}/f`, opts())).toEqual({
        ok: false,
        // The same words as a refused connection: which of the two it was tells a prober that a port is open.
        reason: 'The URL could not be fetched (no connection, or TLS failed).',
      });
      expect(served).toBe(0);
    } finally {
      await new Promise<void>((resolve) => tls.close(() => resolve()));
    }
  });
});
