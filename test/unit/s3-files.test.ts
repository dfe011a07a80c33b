// The S3 file store sends exactly one PutObject per file (its type, its expiry in metadata, no tag but on a
// short-lived test-mode file's, for the bucket's one-day rule), under
// `retention/<key>` when it expires within the retention (the lifecycle's prefix rule) and at `<key>` otherwise;
// reads the retention key first and the plain one after a miss there; and signs download links as presigned GETs
// of the key a HeadObject found (the retention one, else the plain one) that set the download's Content-Disposition
// and Content-Type, valid an hour. A missing key reads as null whether S3 says so with 404 NoSuchKey or, to a role
// without s3:ListBucket, 403 AccessDenied (a HEAD's: 404 NotFound, or a bare 403).
import {
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, expect, it } from 'vitest';
import { S3FileStore } from '../../lambdas/adapters/aws/s3-files';

const s3 = mockClient(S3Client);
const NOW = Date.UTC(2026, 10, 26, 8);
beforeEach(() => s3.reset());
const client = () =>
  new S3Client({ region: 'eu-west-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } });

it('puts one object with its type and expiry, untagged, under retention/ when it expires within the retention', async () => {
  // Arrange
  s3.on(PutObjectCommand).resolves({});
  const store = new S3FileStore(client(), 'bodies-bucket', { now: () => NOW, retentionSeconds: 30 * 86_400 });
  const bytes = new Uint8Array([1, 2, 3]);

  // Act
  await store.put('emails/email_1/attachments/att_1', bytes, {
    contentType: 'image/png',
    expiresAt: NOW / 1000 + 86_400,
  });
  await store.put('emails/email_2/attachments/att_2', bytes, {
    contentType: 'text/plain',
    expiresAt: NOW / 1000 + 90 * 86_400,
  });

  // Assert
  expect(s3).toHaveReceivedCommandTimes(PutObjectCommand, 2);
  expect(s3.commandCalls(PutObjectCommand).map((c) => c.args[0].input)).toEqual([
    {
      Bucket: 'bodies-bucket',
      Key: 'retention/emails/email_1/attachments/att_1',
      Body: bytes,
      ContentType: 'image/png',
      Metadata: { 'expires-at': String(NOW / 1000 + 86_400) },
    },
    {
      Bucket: 'bodies-bucket',
      Key: 'emails/email_2/attachments/att_2',
      Body: bytes,
      ContentType: 'text/plain',
      Metadata: { 'expires-at': String(NOW / 1000 + 90 * 86_400) },
    },
  ]);
});

it("tags a short-lived file (a test-mode email's, kept a day) for the bucket's one-day rule; only that one", async () => {
  // Arrange
  s3.on(PutObjectCommand).resolves({});
  const store = new S3FileStore(client(), 'bodies-bucket', { now: () => NOW, retentionSeconds: 30 * 86_400 });
  const bytes = new Uint8Array([1]);

  // Act
  await store.put('emails/email_1/attachments/att_1', bytes, {
    contentType: 'image/png',
    expiresAt: NOW / 1000 + 86_400,
    shortLived: true,
  });

  // Assert: the same key as any file expiring within the retention (readers unchanged), plus the tag.
  expect(s3.commandCalls(PutObjectCommand).map((c) => c.args[0].input)).toEqual([
    {
      Bucket: 'bodies-bucket',
      Key: 'retention/emails/email_1/attachments/att_1',
      Body: bytes,
      ContentType: 'image/png',
      Metadata: { 'expires-at': String(NOW / 1000 + 86_400) },
      Tagging: 'sendflow-expiry=short',
    },
  ]);
});

it('reads one GetObject and skips an object without an expiry (not one it wrote)', async () => {
  // Arrange
  s3.on(GetObjectCommand).resolves({ Body: { transformToByteArray: async () => new Uint8Array([9]) } as never });
  const store = new S3FileStore(client(), 'bodies-bucket', { now: () => NOW });

  // Act / Assert
  expect(await store.get('emails/email_1/attachments/att_1')).toBeNull();
  expect(s3.commandCalls(GetObjectCommand).map((c) => c.args[0].input)).toEqual([
    { Bucket: 'bodies-bucket', Key: 'retention/emails/email_1/attachments/att_1' },
  ]);
});

it('reads the retention key first, the plain key only after a miss there (a scheduled email, or a file from before)', async () => {
  // Arrange: one file sent at once, one scheduled, one at the plain key as the tagging code left it.
  const stored = new Map<string, { Body: Uint8Array; Metadata: Record<string, string>; ContentType: string }>();
  s3.on(PutObjectCommand).callsFake((input) => {
    stored.set(input.Key, input);
    return {};
  });
  s3.on(GetObjectCommand).callsFake((input: { Key: string }) => {
    const object = stored.get(input.Key);
    if (!object) throw accessDenied();
    return { ...object, Body: { transformToByteArray: async () => object.Body } };
  });
  const store = new S3FileStore(client(), 'bodies-bucket', { now: () => NOW, retentionSeconds: 30 * 86_400 });
  const options = { contentType: 'text/plain', expiresAt: NOW / 1000 + 86_400 };
  await store.put('emails/email_1/attachments/att_1', new Uint8Array([1]), options);
  await store.put('emails/email_2/attachments/att_2', new Uint8Array([2]), {
    ...options,
    expiresAt: NOW / 1000 + 40 * 86_400,
  });
  stored.set('emails/email_3/attachments/att_3', {
    Body: new Uint8Array([3]),
    Metadata: { 'expires-at': String(options.expiresAt) },
    ContentType: 'text/plain',
  });
  const gets = () => s3.commandCalls(GetObjectCommand).map((c) => c.args[0].input.Key);

  // Act / Assert
  expect((await store.get('emails/email_1/attachments/att_1'))?.bytes).toEqual(new Uint8Array([1]));
  expect(gets()).toEqual(['retention/emails/email_1/attachments/att_1']);
  s3.resetHistory();
  expect((await store.get('emails/email_2/attachments/att_2'))?.bytes).toEqual(new Uint8Array([2]));
  expect(gets()).toEqual(['retention/emails/email_2/attachments/att_2', 'emails/email_2/attachments/att_2']);
  s3.resetHistory();
  expect((await store.get('emails/email_3/attachments/att_3'))?.bytes).toEqual(new Uint8Array([3]));
  expect(gets()).toEqual(['retention/emails/email_3/attachments/att_3', 'emails/email_3/attachments/att_3']);
});

it('signs a download link: a GET of the retention key a HEAD found, its name and type as response overrides, valid 3600 s', async () => {
  // Arrange
  s3.on(HeadObjectCommand).resolves({});
  const store = new S3FileStore(client(), 'bodies-bucket', { now: () => NOW });

  // Act
  const link = await store.downloadUrl('emails/email_1/attachments/att_1', {
    filename: 'Q3 report é.pdf',
    contentType: 'application/pdf',
  });

  // Assert
  const url = new URL(link.url);
  expect(url.hostname).toBe('bodies-bucket.s3.eu-west-1.amazonaws.com');
  expect(url.pathname).toBe('/retention/emails/email_1/attachments/att_1');
  expect(url.searchParams.get('X-Amz-Expires')).toBe('3600');
  expect(url.searchParams.get('X-Amz-Date')).toBe('20261126T080000Z');
  expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
  expect(url.searchParams.get('response-content-type')).toBe('application/pdf');
  expect(url.searchParams.get('response-content-disposition')).toBe(
    `attachment; filename="Q3 report _.pdf"; filename*=UTF-8''Q3%20report%20%C3%A9.pdf`,
  );
  expect(link.expires_at).toBe('2026-11-26T09:00:00.000Z');
  expect(s3.commandCalls(HeadObjectCommand).map((c) => c.args[0].input)).toEqual([
    { Bucket: 'bodies-bucket', Key: 'retention/emails/email_1/attachments/att_1' },
  ]);
  expect(s3).toHaveReceivedCommandTimes(GetObjectCommand, 0);
});

it('signs the plain key when the HEAD of the retention key misses (404 NotFound, or a bare 403 without s3:ListBucket)', async () => {
  // Arrange
  s3.on(HeadObjectCommand, { Key: 'retention/emails/email_1/attachments/att_1' })
    .rejects(new NotFound({ $metadata: { httpStatusCode: 404 }, message: 'UnknownError' }))
    .on(HeadObjectCommand, { Key: 'retention/emails/email_2/attachments/att_2' })
    .rejects(
      // What the SDK makes of S3's 403 to a HEAD: no body, so no code.
      new S3ServiceException({ name: 'Unknown', $fault: 'client', $metadata: { httpStatusCode: 403 }, message: '' }),
    );
  const store = new S3FileStore(client(), 'bodies-bucket', { now: () => NOW });
  const options = { filename: 'a.pdf', contentType: 'application/pdf' };

  // Act
  const first = await store.downloadUrl('emails/email_1/attachments/att_1', options);
  const second = await store.downloadUrl('emails/email_2/attachments/att_2', options);

  // Assert
  expect(new URL(first.url).pathname).toBe('/emails/email_1/attachments/att_1');
  expect(new URL(second.url).pathname).toBe('/emails/email_2/attachments/att_2');
  expect(s3).toHaveReceivedCommandTimes(HeadObjectCommand, 2);
});

it('lets another failure of that HEAD through (a throttle is no miss)', async () => {
  s3.on(HeadObjectCommand).rejects(
    new S3ServiceException({ name: 'Unknown', $fault: 'server', $metadata: { httpStatusCode: 503 }, message: '' }),
  );
  const store = new S3FileStore(client(), 'bodies-bucket', { now: () => NOW });
  await expect(
    store.downloadUrl('emails/email_1/attachments/att_1', { filename: 'a.pdf', contentType: 'application/pdf' }),
  ).rejects.toThrow(S3ServiceException);
});

/** What S3 answers a GET of a missing key when the caller may not list the bucket (the SDK's error as thrown). */
const accessDenied = () =>
  new S3ServiceException({
    name: 'AccessDenied',
    $fault: 'client',
    $metadata: { httpStatusCode: 403 },
    message: 'Access Denied',
  });

it('reads a missing key as null: 404 NoSuchKey, and 403 AccessDenied (no s3:ListBucket) alike', async () => {
  // Arrange
  const store = new S3FileStore(client(), 'bodies-bucket', { now: () => NOW });
  s3.on(GetObjectCommand, { Key: 'retention/emails/email_1/attachments/att_404' })
    .rejects(new NoSuchKey({ $metadata: { httpStatusCode: 404 }, message: 'The specified key does not exist.' }))
    .on(GetObjectCommand, { Key: 'emails/email_1/attachments/att_404' })
    .rejects(new NoSuchKey({ $metadata: { httpStatusCode: 404 }, message: 'The specified key does not exist.' }))
    .on(GetObjectCommand, { Key: 'retention/emails/email_1/attachments/att_403' })
    .rejects(accessDenied())
    .on(GetObjectCommand, { Key: 'emails/email_1/attachments/att_403' })
    .rejects(accessDenied());

  // Act / Assert
  expect(await store.get('emails/email_1/attachments/att_404')).toBeNull();
  expect(await store.get('emails/email_1/attachments/att_403')).toBeNull();
});

it('still throws other failures (a throttle, a 5xx): the send worker retries those', async () => {
  // Arrange
  const store = new S3FileStore(client(), 'bodies-bucket', { now: () => NOW });
  s3.on(GetObjectCommand).rejects(
    new S3ServiceException({ name: 'SlowDown', $fault: 'server', $metadata: { httpStatusCode: 503 }, message: 'Slow' }),
  );

  // Act / Assert
  await expect(store.get('emails/email_1/attachments/att_1')).rejects.toThrow(/Slow/);
});
