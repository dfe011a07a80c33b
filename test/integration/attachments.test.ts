// Attachments over real HTTP against the local runtime: sent with content (base64) and with a path fetched from a
// loopback server, shown as metadata by GET /v1/emails/:id, listed and read with download links that download the
// bytes as sent; every bad attachment a 422 invalid_attachment (never a 5xx); the send routes' larger body limit;
// scopes and tenants; an Idempotency-Key replay stores nothing twice.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryFileStore } from '../../lambdas/adapters/local/file-store';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let files: Server;
let filesUrl: string;
const served = new Map<string, { status: number; body?: Buffer; type?: string; location?: string }>();
const fetched: string[] = [];

beforeAll(async () => {
  // `path`s are fetched from the loopback file server below: private attachment URLs allowed (off by default).
  rt = await startTestRuntime({
    SF_MAX_SEND_BODY_BYTES: String(3 * 1024 * 1024),
    SF_ALLOW_PRIVATE_ATTACHMENT_URLS: 'true',
  });
  files = createServer((req, res) => {
    fetched.push(req.url ?? '');
    const answer = served.get(req.url ?? '') ?? { status: 404 };
    res.writeHead(answer.status, {
      ...(answer.type ? { 'Content-Type': answer.type } : {}),
      ...(answer.location ? { Location: answer.location } : {}),
    });
    res.end(answer.body);
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => files.close(() => resolve()));
  await rt.stop();
});

const email = (attachments: unknown, extra: Record<string, unknown> = {}) => ({
  from: 'Acme <hi@acme.test>',
  to: 'bob@example.com',
  subject: 'Invoice',
  html: '<p><img src="cid:logo"></p>',
  attachments,
  ...extra,
});
const post = (key: string, body: unknown, path = '/emails', headers: Record<string, string> = {}) =>
  rt.call(path, { method: 'POST', key, body: JSON.stringify(body), headers });
const storedFiles = () => (rt.services.files as MemoryFileStore).size;

interface Link {
  id: string;
  filename: string;
  size: number;
  content_type: string;
  content_disposition: string;
  content_id: string | null;
  download_url: string;
  expires_at: string;
}

describe('sending with attachments', () => {
  it('content and path alike: GET shows metadata, list/get give links that download the bytes as sent', async () => {
    // Arrange
    const { key } = await rt.newKey();
    const pdf = randomBytes(200_000);
    const logo = randomBytes(300);
    served.set('/report.csv', { status: 200, body: Buffer.from('a,b\n1,2\n'), type: 'text/csv; charset=utf-8' });

    // Act
    const res = await post(
      key,
      email([
        { filename: 'invoice.pdf', content: pdf.toString('base64') },
        { filename: 'logo.png', content: logo.toString('base64'), content_id: 'logo' },
        { filename: 'report.csv', path: `${filesUrl}/report.csv` },
      ]),
    );
    const { id } = (await res.json()) as { id: string };
    await rt.settle();
    const got = (await (await rt.call(`/emails/${id}`, { key })).json()) as { attachments: Link[]; status: string };
    const list = (await (await rt.call(`/emails/${id}/attachments`, { key })).json()) as {
      object: string;
      has_more: boolean;
      data: Link[];
    };
    const one = (await (await rt.call(`/emails/${id}/attachments/${got.attachments[1]?.id}`, { key })).json()) as Link;
    const downloads = await Promise.all(list.data.map((a) => fetch(a.download_url)));

    // Assert
    expect(res.status).toBe(200);
    expect(got.status).toBe('delivered');
    expect(got.attachments).toEqual([
      {
        id: expect.stringMatching(/^att_/),
        filename: 'invoice.pdf',
        size: 200_000,
        content_type: 'application/pdf',
        content_disposition: 'attachment',
        content_id: null,
      },
      {
        id: expect.stringMatching(/^att_/),
        filename: 'logo.png',
        size: 300,
        content_type: 'image/png',
        content_disposition: 'inline',
        content_id: 'logo',
      },
      {
        id: expect.stringMatching(/^att_/),
        filename: 'report.csv',
        size: 8,
        content_type: 'text/csv',
        content_disposition: 'attachment',
        content_id: null,
      },
    ]);
    expect(list).toMatchObject({ object: 'list', has_more: false });
    // The download routes leave content_id out when there is none, as Resend's answers do (GET shows it null).
    expect(list.data.map(({ download_url: _u, expires_at: _e, ...meta }) => ({ ...meta }))).toEqual(
      got.attachments.map(({ content_id, ...a }) => ({
        object: 'attachment',
        ...a,
        ...(content_id !== null ? { content_id } : {}),
      })),
    );
    expect(one).toMatchObject({ object: 'attachment', ...got.attachments[1] });
    expect(Date.parse(one.expires_at) - Date.now()).toBeGreaterThan(3500_000);
    expect(downloads.map((d) => d.status)).toEqual([200, 200, 200]);
    expect(downloads.map((d) => d.headers.get('content-disposition'))).toEqual([
      `attachment; filename="invoice.pdf"; filename*=UTF-8''invoice.pdf`,
      `attachment; filename="logo.png"; filename*=UTF-8''logo.png`,
      `attachment; filename="report.csv"; filename*=UTF-8''report.csv`,
    ]);
    expect(downloads.map((d) => d.headers.get('content-type'))).toEqual(['application/pdf', 'image/png', 'text/csv']);
    const bodies = await Promise.all(downloads.map(async (d) => Buffer.from(await d.arrayBuffer())));
    expect(bodies[0]?.equals(pdf)).toBe(true);
    expect(bodies[1]?.equals(logo)).toBe(true);
    expect(bodies[2]?.toString()).toBe('a,b\n1,2\n');
  });

  it('a batch carries each email’s own attachments', async () => {
    // Arrange
    const { key } = await rt.newKey();

    // Act
    const res = await post(
      key,
      [
        email([{ filename: 'a.txt', content: Buffer.from('A').toString('base64') }]),
        email(undefined),
        email([{ filename: 'b.txt', content: Buffer.from('BB').toString('base64') }]),
      ],
      '/emails/batch',
    );
    const { data } = (await res.json()) as { data: { id: string }[] };
    const shown = await Promise.all(
      data.map(
        async ({ id }) =>
          ((await (await rt.call(`/emails/${id}`, { key })).json()) as { attachments: Link[] }).attachments,
      ),
    );

    // Assert
    expect(res.status).toBe(200);
    expect(shown.map((list) => list.map((a) => [a.filename, a.size]))).toEqual([[['a.txt', 1]], [], [['b.txt', 2]]]);
  });

  it('an Idempotency-Key replay answers the same id and stores nothing twice', async () => {
    // Arrange
    const { key } = await rt.newKey();
    const body = email([{ filename: 'a.txt', content: Buffer.from('once').toString('base64') }]);
    const before = storedFiles();

    // Act
    const first = await post(key, body, '/emails', { 'Idempotency-Key': 'attach-1' });
    const again = await post(key, body, '/emails', { 'Idempotency-Key': 'attach-1' });

    // Assert
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(await first.json());
    expect(storedFiles() - before).toBe(1);
  });
});

describe('bad attachments are 422 invalid_attachment, never a 5xx, and nothing is stored', () => {
  it.each([
    [
      'both content and path',
      { filename: 'a.txt', content: 'QQ==', path: 'https://example.com/a' },
      'attachments.0',
      /exactly one/,
    ],
    ['neither', { filename: 'a.txt' }, 'attachments.0', /exactly one/],
    ['not base64', { filename: 'a.txt', content: '%%%' }, 'attachments.0.content', /base64/],
    [
      'a type SES refuses',
      { filename: 'setup.exe', content: 'QQ==' },
      'attachments.0.filename',
      /\.exe cannot be sent/,
    ],
    ['a path separator', { filename: '../a.txt', content: 'QQ==' }, 'attachments.0.filename', /separator/],
    ['no filename', { content: 'QQ==' }, 'attachments.0.filename', /^`attachments\[0\]\.filename` is required/],
    [
      'a bad content id',
      { filename: 'a.png', content: 'QQ==', content_id: '<x>' },
      'attachments.0.content_id',
      /content_id/,
    ],
    ['a non-URL path', { filename: 'a.txt', path: 'file:///etc/passwd' }, 'attachments.0.path', /URL/],
  ])('%s', async (_name, attachment, path, message) => {
    const { key } = await rt.newKey();
    const before = storedFiles();
    const res = await post(key, email([attachment]));
    expect(res.status).toBe(422);
    const body = (await res.json()) as { code: string; details: { path: string; message: string }[] };
    expect(body.code).toBe('invalid_attachment');
    expect(body.details).toEqual(expect.arrayContaining([{ path, message: expect.stringMatching(message) }]));
    expect(storedFiles()).toBe(before);
  });

  it('a path that answers 404, redirects or is too large', async () => {
    // Arrange
    const { key } = await rt.newKey();
    served.set('/moved', { status: 302, location: 'http://169.254.169.254/latest/meta-data' });
    served.set('/huge', { status: 200, body: Buffer.alloc(10 * 1024 * 1024 + 1) });

    // Act
    const answers = await Promise.all(
      ['/nothing', '/moved', '/huge'].map((p) => post(key, email([{ filename: 'f.bin', path: `${filesUrl}${p}` }]))),
    );

    // Assert
    expect(answers.map((a) => a.status)).toEqual([422, 422, 422]);
    const messages = await Promise.all(
      answers.map(async (a) => ((await a.json()) as { details: { message: string }[] }).details[0]?.message),
    );
    expect(messages).toEqual([
      expect.stringMatching(/HTTP 404/),
      expect.stringMatching(/redirect/),
      expect.stringMatching(/larger than 10485760 bytes/),
    ]);
  });

  it('more than 20, or more than 10 MB together', async () => {
    const { key } = await rt.newKey();
    const many = Array.from({ length: 21 }, (_, i) => ({ filename: `${i}.txt`, content: 'QQ==' }));
    const res = await post(key, email(many));
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({
      code: 'invalid_attachment',
      message: '`attachments` must list at most 20 attachments.',
      details: [{ path: 'attachments', message: '`attachments` must list at most 20 attachments.' }],
    });
  });

  it('the send routes take bodies up to SF_MAX_SEND_BODY_BYTES; past it 413, as other routes past SF_MAX_BODY_BYTES', async () => {
    const { key } = await rt.newKey();
    const two = randomBytes(2 * 1024 * 1024)
      .toString('base64')
      .slice(0, 2_500_000);
    const fits = await post(key, email([{ filename: 'big.bin', content: two }]));
    const tooBig = await post(key, email([{ filename: 'big.bin', content: `${two}${two}` }]));
    const webhook = await rt.call('/webhooks', {
      method: 'POST',
      key,
      body: JSON.stringify({ url: 'x'.repeat(1_100_000) }),
    });
    expect(fits.status).toBe(200);
    expect(tooBig.status).toBe(413);
    expect(await tooBig.json()).toMatchObject({ code: 'payload_too_large' });
    expect(webhook.status).toBe(413);
  });
});

describe('reading attachments', () => {
  it('needs email:read, and another account’s email or an unknown attachment is 404', async () => {
    // Arrange
    const owner = await rt.newKey();
    const other = await rt.newKey();
    const sender = await rt.newKey({ scopes: ['email:send'] });
    const { id } = (await (await post(owner.key, email([{ filename: 'a.txt', content: 'QQ==' }]))).json()) as {
      id: string;
    };

    // Act
    const answers = await Promise.all([
      rt.call(`/emails/${id}/attachments`, { key: other.key }),
      rt.call(`/emails/${id}/attachments`, { key: sender.key }),
      rt.call(`/emails/${id}/attachments/att_unknown`, { key: owner.key }),
      rt.call(`/emails/${id}/attachments?limit=10`, { key: owner.key }),
    ]);

    // Assert
    expect(answers.map((a) => a.status)).toEqual([404, 403, 404, 200]);
  });

  it('a forged download link is 404, an unknown path below /v1/files too', async () => {
    const forged = await fetch(`${rt.url}/files/e30.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`);
    expect(forged.status).toBe(404);
    expect(await forged.json()).toMatchObject({ status: 404, code: 'not_found' });
    const posted = await fetch(`${rt.url}/files/anything`, { method: 'POST', body: 'x' });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET, HEAD');
  });

  it('HEAD on a link answers the headers without the bytes', async () => {
    const { key } = await rt.newKey();
    const { id } = (await (await post(key, email([{ filename: 'a.txt', content: 'QUJD' }]))).json()) as { id: string };
    const { data } = (await (await rt.call(`/emails/${id}/attachments`, { key })).json()) as { data: Link[] };
    const head = await fetch(data[0]?.download_url ?? '', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('3');
    expect(head.headers.get('content-type')).toBe('text/plain');
    expect(await head.text()).toBe('');
  });
});

describe('fuzzed attachments (fast-check)', () => {
  const hostileString = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.constantFrom('', ' ', '..', '/', 'a\r\nX: y', '\u0000', '\ud800', 'x'.repeat(300), 'a.EXE', 'é.pdf', 'cid:x'),
  );
  const content = fc.oneof(
    fc.uint8Array({ maxLength: 2000 }).map((b) => Buffer.from(b).toString('base64')),
    hostileString,
    fc.constantFrom('====', 'QQ', 'Q', 'QQ==\r\n', '-_-_'),
  );
  const path = fc.oneof(
    fc.constantFrom('/ok', '/nothing', '/moved', '/slow-type').map((p) => `${filesUrl}${p}`),
    fc.constantFrom(
      'https://127.0.0.1:1/x',
      'ftp://x.example/a',
      'http://[::1',
      'javascript:alert(1)',
      'https://user:pw@x.example/',
    ),
    hostileString,
  );
  const value = fc.oneof(
    hostileString,
    fc.integer(),
    fc.constant(null),
    fc.boolean(),
    fc.array(fc.string(), { maxLength: 2 }),
  );
  const attachment = fc.record(
    {
      filename: fc.oneof(fc.constantFrom('a.txt', 'logo.png', 'r.csv', 'noext'), hostileString, value),
      content: fc.oneof(content, value),
      path: fc.oneof(path, value),
      content_type: fc.oneof(fc.constantFrom('text/plain', 'image/png', 'bad'), value),
      content_id: fc.oneof(fc.constantFrom('logo', 'a@b', '<x>'), value),
      __proto__: value,
      extra: value,
    },
    { requiredKeys: [] },
  );
  const attachments = fc.oneof(fc.array(attachment, { maxLength: 4 }), value, fc.constant({}));

  it('never a 5xx; a refusal has the error shape and stores nothing; an accepted email shows what it stored', async () => {
    const { key } = await rt.newKey();
    served.set('/ok', { status: 200, body: Buffer.from('ok'), type: 'text/plain' });
    served.set('/slow-type', { status: 200, body: Buffer.from('x'), type: ';;;' });
    await fc.assert(
      fc.asyncProperty(attachments, fc.boolean(), async (list, batch) => {
        const before = storedFiles();
        const body = batch ? [email(list), email(undefined)] : email(list);
        const res = await post(key, body, batch ? '/emails/batch' : '/emails');
        const answer = (await res.json()) as Record<string, unknown>;
        expect(res.status).toBeLessThan(500);
        if (res.status >= 400) {
          expect(answer).toMatchObject({ status: res.status, code: expect.any(String), error: expect.any(String) });
          expect(storedFiles()).toBe(before);
          return;
        }
        const id = batch ? (answer.data as { id: string }[])[0]?.id : (answer.id as string);
        const shown = (await (await rt.call(`/emails/${id}`, { key })).json()) as { attachments: unknown[] };
        expect(shown.attachments).toHaveLength((list as unknown[]).length);
        expect(storedFiles() - before).toBe((list as unknown[]).length);
      }),
      { numRuns: Math.ceil(60 * Number(process.env.SF_FUZZ_SCALE ?? 1)) },
    );
  });
});

describe('on a data directory', () => {
  it('files are 0600 beside the body, and a link made before a restart still downloads after it', async () => {
    // Arrange
    const dataDir = mkdtempSync(join(tmpdir(), 'sendflow-attach-'));
    const pdf = randomBytes(5000);
    let disk = await startTestRuntime({ SF_DATA_DIR: dataDir });
    try {
      const { key } = await disk.newKey();
      const sent = await disk.call('/emails', {
        method: 'POST',
        key,
        body: JSON.stringify(email([{ filename: 'a.pdf', content: pdf.toString('base64') }])),
      });
      const { id } = (await sent.json()) as { id: string };
      const { data } = (await (await disk.call(`/emails/${id}/attachments`, { key })).json()) as { data: Link[] };
      const link = data[0] as Link;

      // Act
      await disk.stop();
      disk = await startTestRuntime({ SF_DATA_DIR: dataDir });
      const download = await fetch(link.download_url.replace(/:\d+\//, `:${disk.port}/`));

      // Assert
      const folder = join(dataDir, 'emails', id, 'attachments');
      expect(readdirSync(join(dataDir, 'emails', id)).sort()).toEqual(['attachments', 'body.json']);
      expect(readdirSync(folder).sort()).toEqual([`.${link.id}.meta`, link.id].sort());
      expect(statSync(join(folder, link.id)).mode & 0o777).toBe(0o600);
      expect(download.status).toBe(200);
      expect(Buffer.from(await download.arrayBuffer()).equals(pdf)).toBe(true);
    } finally {
      await disk.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
