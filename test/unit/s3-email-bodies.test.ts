// The S3 body store sends exactly one PutObject per email to `emails/<id>/body.json` (at most 10 at once), reads
// a body back with one GetObject, and answers null for a missing object (NoSuchKey) or an expired email.
import { GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, expect, it } from 'vitest';
import { S3EmailBodyStore } from '../../lambdas/adapters/aws/s3-email-bodies';

const s3 = mockClient(S3Client);
const NOW = Date.UTC(2026, 10, 25);
beforeEach(() => s3.reset());

/** An S3 object body as the SDK returns it (the part of its stream mixin the store uses). */
const objectBody = (text: string) => ({ transformToString: async () => text }) as never;

it('puts each body once, as one JSON object under emails/<id>/body.json, and reads it back exactly', async () => {
  // Arrange: what PutObject stored is what GetObject returns.
  const stored = new Map<string, string>();
  s3.on(PutObjectCommand).callsFake((input: { Key: string; Body: string }) => {
    stored.set(input.Key, input.Body);
    return {};
  });
  s3.on(GetObjectCommand).callsFake((input: { Key: string }) => ({ Body: objectBody(stored.get(input.Key) ?? '') }));
  const store = new S3EmailBodyStore(new S3Client({ region: 'eu-west-1' }), 'bodies-bucket', () => NOW);
  const headers = JSON.parse('{"X-A":"1","__proto__":"p"}');
  const bodies = Array.from({ length: 25 }, (_, i) => ({
    emailId: `email_${i}`,
    body: { html: `<p>${i}</p>`, headers },
    expiresAt: NOW / 1000 + 60,
  }));

  // Act
  await store.putMany(bodies);
  const read = await store.get('email_7');

  // Assert
  expect(s3).toHaveReceivedCommandTimes(PutObjectCommand, 25);
  expect(s3).toHaveReceivedCommandWith(PutObjectCommand, {
    Bucket: 'bodies-bucket',
    Key: 'emails/email_7/body.json',
    ContentType: 'application/json',
  });
  expect(s3).toHaveReceivedCommandWith(GetObjectCommand, { Bucket: 'bodies-bucket', Key: 'emails/email_7/body.json' });
  expect(read).toEqual({ html: '<p>7</p>', headers });
  expect(Object.getPrototypeOf(read?.headers)).toBeNull();
  expect(Object.keys(read?.headers ?? {})).toEqual(['X-A', '__proto__']);
});

it('answers null for an email without a body (NoSuchKey) and for one whose retention has passed', async () => {
  // Arrange
  s3.on(GetObjectCommand, { Key: 'emails/email_gone/body.json' })
    .rejects(new NoSuchKey({ message: 'The specified key does not exist.', $metadata: {} }))
    .on(GetObjectCommand, { Key: 'emails/email_old/body.json' })
    .resolves({ Body: objectBody(JSON.stringify({ text: 'x', headers: [], expiresAt: NOW / 1000 })) });
  const store = new S3EmailBodyStore(new S3Client({ region: 'eu-west-1' }), 'bodies-bucket', () => NOW);

  // Act / Assert
  expect(await store.get('email_gone')).toBeNull();
  expect(await store.get('email_old')).toBeNull();
});

it('lets any other S3 error through (the request fails, 5xx)', async () => {
  s3.on(GetObjectCommand).rejects(new Error('SlowDown'));
  const store = new S3EmailBodyStore(new S3Client({ region: 'eu-west-1' }), 'bodies-bucket', () => NOW);
  await expect(store.get('email_1')).rejects.toThrow('SlowDown');
});
