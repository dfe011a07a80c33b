// The FileStore contract (suites/file-store.ts) against each adapter: the in-memory store (SF_DATA_DIR=:memory:
// and the tests' fake), the data directory's files (downloads fetched over HTTP from the runtime's download route
// on a loopback server) and S3 (aws-sdk-client-mock holding the objects; links checked by their signed shape in
// test/unit/s3-files.test.ts).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3FileStore } from '../../lambdas/adapters/aws/s3-files';
import { DiskFileStore, MemoryFileStore } from '../../lambdas/adapters/local/file-store';
import type { FileStore } from '../../lambdas/app/files/ports';
import { createDownloadRoute } from '../../lambdas/runtime/local/file-downloads';
import { fileStoreContract } from './suites/file-store';

const SECRET = 'contract-secret';

/** One store whose clock each call of the factory sets; the download route reads the same clock. */
function localHarness(
  build: (links: { secret: () => Promise<string>; baseUrl: () => string }, now: () => number) => FileStore,
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
  });
  afterAll(() => s3.restore());
  let current = () => Date.now();
  const client = new S3Client({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
  });
  const store = new S3FileStore(client, 'files-bucket', { now: () => current() });
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
