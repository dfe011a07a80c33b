// The S3 body store sends exactly one PutObject per email (at most 10 at once), untagged, keyed by the lifecycle
// rule that deletes it: `retention/emails/<id>/body.json` when its email expires within the retention, else
// `emails/<id>/body.json`. It reads the retention key first and the other on a miss, and answers null for a missing
// object (NoSuchKey, or AccessDenied without s3:ListBucket) or an expired email.
import { randomBytes } from 'node:crypto';
import { GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { S3EmailBodyStore } from '../../lambdas/adapters/aws/s3-email-bodies';
import { encodeBody } from '../../lambdas/adapters/email-body-object';
import { INLINE_BODY_MAX_BYTES, TieredEmailBodyStore } from '../../lambdas/adapters/tiered-email-bodies';
import { InMemoryEmailBodyStore } from '../support/fakes';

const s3 = mockClient(S3Client);
const NOW = Date.UTC(2026, 10, 25);
beforeEach(() => s3.reset());

/** An S3 object body as the SDK returns it (the part of its stream mixin the store uses). */
const objectBody = (stored: string | Uint8Array) =>
  ({ transformToByteArray: async () => (typeof stored === 'string' ? Buffer.from(stored) : stored) }) as never;

/** The SDK's error for a GET of a key that is not there (to a role that may list the bucket). */
const noSuchKey = () => new NoSuchKey({ message: 'The specified key does not exist.', $metadata: {} });

/** S3 as a map: what PutObject stored is what GetObject returns; a missing key is NoSuchKey. */
function storedObjects(): Map<string, Uint8Array> {
  const stored = new Map<string, Uint8Array>();
  s3.on(PutObjectCommand).callsFake((input: { Key: string; Body: Uint8Array }) => {
    stored.set(input.Key, input.Body);
    return {};
  });
  s3.on(GetObjectCommand).callsFake((input: { Key: string }) => {
    const body = stored.get(input.Key);
    if (!body) throw noSuchKey();
    return { Body: objectBody(body) };
  });
  return stored;
}

it('puts each body once, as one object under emails/<id>/body.json, and reads it back exactly', async () => {
  // Arrange: no retention configured, so every body takes the long rule's key.
  storedObjects();
  const store = new S3EmailBodyStore(new S3Client({ region: 'eu-west-1' }), 'bodies-bucket', { now: () => NOW });
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
  expect(s3.commandCalls(GetObjectCommand).map((c) => c.args[0].input)).toEqual([
    { Bucket: 'bodies-bucket', Key: 'retention/emails/email_7/body.json' },
    { Bucket: 'bodies-bucket', Key: 'emails/email_7/body.json' },
  ]);
  expect(read).toEqual({ html: '<p>7</p>', headers });
  expect(Object.getPrototypeOf(read?.headers)).toBeNull();
  expect(Object.keys(read?.headers ?? {})).toEqual(['X-A', '__proto__']);
});

it('answers null for an email without a body (NoSuchKey, or AccessDenied to a role that may not list) and for one whose retention has passed', async () => {
  // Arrange: nothing under the retention keys, so each read falls back to the long key.
  s3.on(GetObjectCommand)
    .rejects(noSuchKey())
    .on(GetObjectCommand, { Key: 'emails/email_gone/body.json' })
    .rejects(noSuchKey())
    .on(GetObjectCommand, { Key: 'emails/email_denied/body.json' })
    .rejects(
      new S3ServiceException({
        name: 'AccessDenied',
        $fault: 'client',
        $metadata: { httpStatusCode: 403 },
        message: 'Access Denied',
      }),
    )
    .on(GetObjectCommand, { Key: 'emails/email_old/body.json' })
    .resolves({ Body: objectBody(JSON.stringify({ text: 'x', headers: [], expiresAt: NOW / 1000 })) });
  const store = new S3EmailBodyStore(new S3Client({ region: 'eu-west-1' }), 'bodies-bucket', { now: () => NOW });

  // Act / Assert
  expect(await store.get('email_gone')).toBeNull();
  expect(await store.get('email_denied')).toBeNull();
  expect(await store.get('email_old')).toBeNull();
});

it('lets any other S3 error through (the request fails, 5xx), without trying the long key: a throttle is no miss', async () => {
  s3.on(GetObjectCommand).rejects(new Error('SlowDown'));
  const store = new S3EmailBodyStore(new S3Client({ region: 'eu-west-1' }), 'bodies-bucket', { now: () => NOW });
  await expect(store.get('email_1')).rejects.toThrow('SlowDown');
  expect(s3).toHaveReceivedCommandTimes(GetObjectCommand, 1);
});

it('keys a body under retention/ when its email expires within the retention, under emails/ when scheduled past it; no tag', async () => {
  // Arrange: a 30-day retention; one email sent now, one scheduled 10 days out (it expires 40 days from now).
  s3.on(PutObjectCommand).resolves({});
  const retention = 30 * 86_400;
  const store = new S3EmailBodyStore(new S3Client({ region: 'eu-west-1' }), 'bodies-bucket', {
    now: () => NOW,
    retentionSeconds: retention,
  });
  const now = { text: 'a', headers: {} };
  const later = { text: 'b', headers: {} };

  // Act
  await store.putMany([
    { emailId: 'email_now', body: now, expiresAt: NOW / 1000 + retention },
    { emailId: 'email_later', body: later, expiresAt: NOW / 1000 + 10 * 86_400 + retention },
  ]);

  // Assert: exactly these inputs, no Tagging (a tag is billed every month the object is kept).
  expect(s3.commandCalls(PutObjectCommand).map((call) => call.args[0].input)).toEqual([
    {
      Bucket: 'bodies-bucket',
      Key: 'retention/emails/email_now/body.json',
      Body: encodeBody(now, NOW / 1000 + retention),
      ContentType: 'application/json',
      ContentEncoding: 'gzip',
    },
    {
      Bucket: 'bodies-bucket',
      Key: 'emails/email_later/body.json',
      Body: encodeBody(later, NOW / 1000 + 10 * 86_400 + retention),
      ContentType: 'application/json',
      ContentEncoding: 'gzip',
    },
  ]);
});

it('reads the retention key first (one GET for a body sent at once), the long key only after a miss there (scheduled, or written before)', async () => {
  // Arrange: a body sent now and one scheduled, both written by the store; one left by the tagging code at the old key.
  const stored = storedObjects();
  const retention = 30 * 86_400;
  const store = new S3EmailBodyStore(new S3Client({ region: 'eu-west-1' }), 'bodies-bucket', {
    now: () => NOW,
    retentionSeconds: retention,
  });
  await store.putMany([
    { emailId: 'email_now', body: { text: 'now', headers: {} }, expiresAt: NOW / 1000 + retention },
    { emailId: 'email_later', body: { text: 'later', headers: {} }, expiresAt: NOW / 1000 + 40 * 86_400 },
  ]);
  stored.set('emails/email_old/body.json', encodeBody({ text: 'old', headers: {} }, NOW / 1000 + 86_400));
  const gets = () => s3.commandCalls(GetObjectCommand).map((c) => c.args[0].input.Key);

  // Act / Assert
  expect(await store.get('email_now')).toEqual({ text: 'now', headers: {} });
  expect(gets()).toEqual(['retention/emails/email_now/body.json']);
  s3.resetHistory();
  expect(await store.get('email_later')).toEqual({ text: 'later', headers: {} });
  expect(gets()).toEqual(['retention/emails/email_later/body.json', 'emails/email_later/body.json']);
  s3.resetHistory();
  expect(await store.get('email_old')).toEqual({ text: 'old', headers: {} });
  expect(gets()).toEqual(['retention/emails/email_old/body.json', 'emails/email_old/body.json']);
  s3.resetHistory();
  expect(await store.get('email_none')).toBeNull();
  expect(gets()).toEqual(['retention/emails/email_none/body.json', 'emails/email_none/body.json']);
});

describe('TieredEmailBodyStore over DynamoDB and S3', () => {
  const small = { text: 'Thanks for your order.', headers: {} };
  // Random text: it does not compress, so it is past the limit as stored too.
  const large = { html: `<p>${randomBytes(INLINE_BODY_MAX_BYTES).toString('base64')}</p>`, headers: {} };

  it('puts a body up to INLINE_BODY_MAX_BYTES in the inline store only, a larger one as one S3 PUT only', async () => {
    // Arrange
    s3.on(PutObjectCommand).resolves({});
    const inline = new InMemoryEmailBodyStore(() => NOW);
    const store = new TieredEmailBodyStore(
      inline,
      new S3EmailBodyStore(new S3Client({ region: 'eu-west-1' }), 'bodies-bucket', { now: () => NOW }),
    );
    const expiresAt = NOW / 1000 + 60;

    // Act
    await store.putMany([
      { emailId: 'email_small', body: small, expiresAt },
      { emailId: 'email_large', body: large, expiresAt },
    ]);

    // Assert
    expect(s3).toHaveReceivedCommandTimes(PutObjectCommand, 1);
    expect(s3).toHaveReceivedCommandWith(PutObjectCommand, { Key: 'emails/email_large/body.json' });
    expect(await inline.get('email_small')).toEqual(small);
    expect(await inline.get('email_large')).toBeNull();
  });

  it('reads an inline body without calling S3, and a large one sent at once with one GetObject after the inline miss', async () => {
    // Arrange
    s3.on(GetObjectCommand, { Key: 'retention/emails/email_large/body.json' }).resolves({
      Body: objectBody(JSON.stringify({ html: large.html, headers: [], expiresAt: NOW / 1000 + 60 })),
    });
    const inline = new InMemoryEmailBodyStore(() => NOW);
    await inline.putMany([{ emailId: 'email_small', body: small, expiresAt: NOW / 1000 + 60 }]);
    const store = new TieredEmailBodyStore(
      inline,
      new S3EmailBodyStore(new S3Client({ region: 'eu-west-1' }), 'bodies-bucket', { now: () => NOW }),
    );

    // Act
    const first = await store.get('email_small');
    const calls = s3.commandCalls(GetObjectCommand).length;
    const second = await store.get('email_large');

    // Assert
    expect(first).toEqual(small);
    expect(calls).toBe(0);
    expect(second).toEqual(large);
    expect(s3).toHaveReceivedCommandTimes(GetObjectCommand, 1);
  });
});
