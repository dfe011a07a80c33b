// The FileStore contract (suites/file-store.ts) against each adapter: the in-memory store (SF_DATA_DIR=:memory:
// and the tests' fake), the data directory's files (downloads fetched over HTTP from the runtime's download route
// on a loopback server) and S3 (aws-sdk-client-mock holding the objects; links checked by their signed shape in
// test/unit/s3-files.test.ts). The local download route streams the file (never reads it whole) and answers it
// with headers that keep a hostile file (HTML, SVG) inert if a browser opens it.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { S3FileStore } from '../../lambdas/adapters/aws/s3-files';
import { DiskFileStore, type LocalFileStore, MemoryFileStore } from '../../lambdas/adapters/local/file-store';
import { createDownloadRoute } from '../../lambdas/runtime/local/file-downloads';
import { fileStoreContract } from './suites/file-store';

const SECRET = 'contract-secret';

/** One store whose clock each call of the factory sets; the download route reads the same clock. */
function localHarness(
  build: (links: { secret: () => Promise<string>; baseUrl: () => string }, now: () => number) => LocalFileStore,
) {
  let current = () => Date.now();
  let server: Server | undefined;
  let base = '';
  const store = build({ secret: async () => SECRET, baseUrl: () => base }, () => current());
  beforeAll(async () => {
    const route = createDownloadRoute({
      files: store,
      secret: async () => SECRET,
      now: () => current(),
      stagePrefix: '/v1',
    });
    server = createServer((req, res) => {
      void route(req, res).then((served) => {
        if (!served) res.writeHead(418).end();
      });
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server?.close(() => resolve())));
  return {
    make: (now: () => number) => {
      current = now;
      return store;
    },
    download: (url: string) => fetch(url),
    store,
  };
}

describe('MemoryFileStore (SF_DATA_DIR=:memory:, the fake)', () => {
  const { make, download } = localHarness((links, now) => new MemoryFileStore(links, now));
  fileStoreContract(make, { download });
});

describe('DiskFileStore (the data directory)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sendflow-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const { make, download } = localHarness((links, now) => new DiskFileStore(dir, links, now));
  fileStoreContract(make, { download });
});

describe('S3FileStore (aws-sdk-client-mock holding the objects)', () => {
  const s3 = mockClient(S3Client);
  const objects = new Map<string, { Body: Uint8Array; ContentType?: string; Metadata?: Record<string, string> }>();
  beforeAll(() => {
    s3.on(PutObjectCommand).callsFake(
      (input: { Key: string; Body: Uint8Array; ContentType?: string; Metadata?: Record<string, string> }) => {
        objects.set(input.Key, {
          Body: Uint8Array.from(input.Body),
          ContentType: input.ContentType,
          Metadata: input.Metadata,
        });
        return {};
      },
    );
    s3.on(GetObjectCommand).callsFake((input: { Key: string }) => {
      const object = objects.get(input.Key);
      if (!object) throw new NoSuchKey({ message: 'The specified key does not exist.', $metadata: {} });
      return { ...object, Body: { transformToByteArray: async () => Uint8Array.from(object.Body) } };
    });
    // A HEAD of a missing key: 404 with no body, which the SDK names NotFound.
    s3.on(HeadObjectCommand).callsFake((input: { Key: string }) => {
      const object = objects.get(input.Key);
      if (!object) throw new NotFound({ message: 'UnknownError', $metadata: { httpStatusCode: 404 } });
      return { ContentType: object.ContentType, Metadata: object.Metadata, ContentLength: object.Body.byteLength };
    });
  });
  afterAll(() => s3.restore());
  let current = () => Date.now();
  const client = new S3Client({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
  });
  // A 30-day retention: the suite's files expire within it, so they take the retention prefix's keys.
  const store = new S3FileStore(client, 'files-bucket', { now: () => current(), retentionSeconds: 30 * 86_400 });
  fileStoreContract((now) => {
    current = now;
    return store;
  });
});

describe('DiskFileStore keeps files owner-only', () => {
  it('writes the file and its sidecar 0600 in 0700 folders', async () => {
    // Arrange
    const dir = mkdtempSync(join(tmpdir(), 'sendflow-files-mode-'));
    const store = new DiskFileStore(dir, { secret: async () => SECRET, baseUrl: () => 'http://127.0.0.1/v1' });

    // Act
    await store.put('emails/email_1/attachments/att_1', new Uint8Array([1]), {
      contentType: 'text/plain',
      expiresAt: 2e9,
    });

    // Assert
    const mode = (path: string) => statSync(join(dir, path)).mode & 0o777;
    expect([mode('emails/email_1/attachments/att_1'), mode('emails/email_1/attachments/.att_1.meta')]).toEqual([
      0o600, 0o600,
    ]);
    expect(mode('emails/email_1/attachments')).toBe(0o700);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('the local download route', () => {
  const dlDir = mkdtempSync(join(tmpdir(), 'sendflow-files-dl-'));
  afterAll(() => rmSync(dlDir, { recursive: true, force: true }));
  type Links = { secret: () => Promise<string>; baseUrl: () => string };
  for (const [name, build] of [
    ['DiskFileStore', (links: Links) => new DiskFileStore(dlDir, links, () => Date.now())],
    ['MemoryFileStore', (links: Links) => new MemoryFileStore(links, () => Date.now())],
  ] as const) {
    describe(name, () => {
      const { store, download } = localHarness((links) => build(links));

      it('streams the file (never read whole) with inert-content headers; HEAD gives its length only', async () => {
        // Arrange
        const bytes = new Uint8Array(3 * 1024 * 1024).map((_, i) => i % 251);
        const key = 'emails/email_dl/attachments/att_1';
        await store.put(key, bytes, { contentType: 'text/html', expiresAt: Math.floor(Date.now() / 1000) + 600 });
        const link = await store.downloadUrl(key, { filename: 'evil.html', contentType: 'text/html' });
        const wholeReads = vi.spyOn(store, 'get');

        // Act
        const got = await download(link.url);
        const body = new Uint8Array(await got.arrayBuffer());
        const head = await fetch(link.url, { method: 'HEAD' });

        // Assert
        expect(got.status).toBe(200);
        expect(Buffer.from(body).equals(Buffer.from(bytes))).toBe(true);
        for (const res of [got, head]) {
          expect({
            type: res.headers.get('content-type'),
            length: res.headers.get('content-length'),
            csp: res.headers.get('content-security-policy'),
            corp: res.headers.get('cross-origin-resource-policy'),
            nosniff: res.headers.get('x-content-type-options'),
            disposition: res.headers.get('content-disposition'),
          }).toEqual({
            type: 'text/html',
            length: String(bytes.byteLength),
            csp: "default-src 'none'; sandbox",
            corp: 'same-origin',
            nosniff: 'nosniff',
            disposition: 'attachment; filename="evil.html"; filename*=UTF-8\'\'evil.html',
          });
        }
        expect((await head.arrayBuffer()).byteLength).toBe(0);
        expect(wholeReads).not.toHaveBeenCalled();
      });
    });
  }
});
