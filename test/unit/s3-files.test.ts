// The S3 file store sends exactly one PutObject per file (its type, its expiry in metadata, the lifecycle tag
// when it expires within the retention), reads with one GetObject, and signs download links as presigned GETs
// of that key that set the download's Content-Disposition and Content-Type, valid an hour. A missing key reads as
// null whether S3 says so with 404 NoSuchKey or, to a role without s3:ListBucket, 403 AccessDenied.
import { GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, expect, it } from 'vitest';
import { S3FileStore } from '../../lambdas/adapters/aws/s3-files';

const s3 = mockClient(S3Client);
const NOW = Date.UTC(2026, 10, 26, 8);
beforeEach(() => s3.reset());
const client = () =>
  new S3Client({ region: 'eu-west-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } });

it('puts one object with its type and expiry, tagged for the retention rule when it expires within it', async () => {
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
      Key: 'emails/email_1/attachments/att_1',
      Body: bytes,
      ContentType: 'image/png',
      Metadata: { 'expires-at': String(NOW / 1000 + 86_400) },
      Tagging: 'sendflow-expiry=retention',
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

it('reads one GetObject and skips an object without an expiry (not one it wrote)', async () => {
  // Arrange
  s3.on(GetObjectCommand).resolves({ Body: { transformToByteArray: async () => new Uint8Array([9]) } as never });
  const store = new S3FileStore(client(), 'bodies-bucket', { now: () => NOW });

  // Act / Assert
  expect(await store.get('emails/email_1/attachments/att_1')).toBeNull();
  expect(s3).toHaveReceivedCommandWith(GetObjectCommand, {
    Bucket: 'bodies-bucket',
    Key: 'emails/email_1/attachments/att_1',
  });
});

it('signs a download link: a GET of that key, its name and type as response overrides, valid 3600 s', async () => {
  // Arrange
  const store = new S3FileStore(client(), 'bodies-bucket', { now: () => NOW });

  // Act
  const link = await store.downloadUrl('emails/email_1/attachments/att_1', {
    filename: 'Q3 report é.pdf',
    contentType: 'application/pdf',
  });

  // Assert
  const url = new URL(link.url);
  expect(url.hostname).toBe('bodies-bucket.s3.eu-west-1.amazonaws.com');
  expect(url.pathname).toBe('/emails/email_1/attachments/att_1');
  expect(url.searchParams.get('X-Amz-Expires')).toBe('3600');
  expect(url.searchParams.get('X-Amz-Date')).toBe('20261126T080000Z');
  expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
  expect(url.searchParams.get('response-content-type')).toBe('application/pdf');
  expect(url.searchParams.get('response-content-disposition')).toBe(
    `attachment; filename="Q3 report _.pdf"; filename*=UTF-8''Q3%20report%20%C3%A9.pdf`,
  );
  expect(link.expires_at).toBe('2026-11-26T09:00:00.000Z');
  expect(s3).toHaveReceivedCommandTimes(GetObjectCommand, 0);
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
  s3.on(GetObjectCommand, { Key: 'emails/email_1/attachments/att_404' })
    .rejects(new NoSuchKey({ $metadata: { httpStatusCode: 404 }, message: 'The specified key does not exist.' }))
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
