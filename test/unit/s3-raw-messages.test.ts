// The S3 raw-message source reads what SES's S3 action wrote (`<prefix><SES messageId>`) with exactly one
// GetObject, refuses an object above the bound before and while reading it, and names a missing object, which S3
// answers 403 AccessDenied to a role without s3:ListBucket (the inbound function's) and 404 NoSuchKey otherwise.
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, expect, it } from 'vitest';
import { S3RawMessageSource } from '../../lambdas/adapters/aws/s3-raw-messages';
import { RawMessageMissingError, RawMessageTooLargeError } from '../../lambdas/app/inbound/raw-messages';

const s3 = mockClient(S3Client);
beforeEach(() => s3.reset());

const MESSAGE_ID = 'o3vrnil0e2ic28trm7dfhrc2v0cnbeccl4nbp0g1';
const RAW = 'From: Ada <ada@sender.example>\r\nTo: support@acme.example\r\nSubject: hi\r\n\r\nHello\r\n';

/** An S3 object body as the SDK's Node stream: an async-iterable Readable, here in chunks. */
const body = (...chunks: string[]) => Readable.from(chunks.map((chunk) => Buffer.from(chunk)));

function source(maxBytes = 1024) {
  return new S3RawMessageSource(new S3Client({ region: 'eu-west-1' }), {
    bucket: 'inbound-bucket',
    prefix: 'inbound/',
    maxBytes,
  });
}

it('reads the message SES stored under the prefix and its messageId, byte for byte, with one GetObject', async () => {
  // Arrange
  s3.on(GetObjectCommand).resolves({ Body: body(RAW.slice(0, 20), RAW.slice(20)) as never, ContentLength: RAW.length });

  // Act
  const raw = await source().read(MESSAGE_ID);

  // Assert
  expect(s3.commandCalls(GetObjectCommand)).toHaveLength(1);
  expect(s3).toHaveReceivedCommandWith(GetObjectCommand, { Bucket: 'inbound-bucket', Key: `inbound/${MESSAGE_ID}` });
  expect(raw).toBeInstanceOf(Uint8Array);
  expect(Buffer.from(raw).toString('utf8')).toBe(RAW);
});

it('refuses an object whose ContentLength is above the bound, without reading its body', async () => {
  // Arrange
  const stream = body('x'.repeat(10));
  s3.on(GetObjectCommand).resolves({ Body: stream as never, ContentLength: 2048 });

  // Act & Assert
  await expect(source(1024).read(MESSAGE_ID)).rejects.toBeInstanceOf(RawMessageTooLargeError);
  expect(stream.destroyed).toBe(true);
});

it('stops reading a body that grows past the bound although its length was not announced', async () => {
  // Arrange
  s3.on(GetObjectCommand).resolves({ Body: body('a'.repeat(600), 'b'.repeat(600), 'c'.repeat(600)) as never });

  // Act & Assert
  await expect(source(1024).read(MESSAGE_ID)).rejects.toThrow(/above 1024 bytes/);
});

it('names a message whose object is missing (NoSuchKey), so the failure says which one', async () => {
  // Arrange
  s3.on(GetObjectCommand).rejects(new NoSuchKey({ message: 'The specified key does not exist.', $metadata: {} }));

  // Act
  const read = source().read(MESSAGE_ID);

  // Assert
  await expect(read).rejects.toBeInstanceOf(RawMessageMissingError);
  await expect(read).rejects.toThrow(`inbound/${MESSAGE_ID}`);
});

it('names a missing message when S3 answers 403 AccessDenied, as it does to a role without s3:ListBucket', async () => {
  // Arrange
  s3.on(GetObjectCommand).rejects(
    new S3ServiceException({
      name: 'AccessDenied',
      $fault: 'client',
      $metadata: { httpStatusCode: 403 },
      message: 'Access Denied',
    }),
  );

  // Act
  const read = source().read(MESSAGE_ID);

  // Assert
  await expect(read).rejects.toBeInstanceOf(RawMessageMissingError);
  await expect(read).rejects.toThrow(`inbound/${MESSAGE_ID}`);
});

it('leaves another 403 (not AccessDenied) as it is', async () => {
  // Arrange
  s3.on(GetObjectCommand).rejects(
    new S3ServiceException({
      name: 'InvalidObjectState',
      $fault: 'client',
      $metadata: { httpStatusCode: 403 },
      message: 'The operation is not valid for the object storage class',
    }),
  );

  // Act & Assert
  await expect(source().read(MESSAGE_ID)).rejects.toThrow(/storage class/);
  await expect(source().read(MESSAGE_ID)).rejects.not.toBeInstanceOf(RawMessageMissingError);
});

it('refuses a messageId that is not a plain SES id (no path may be read outside the prefix)', async () => {
  // Act & Assert
  await expect(source().read('../emails/x/body.json')).rejects.toThrow(/not an SES message id/);
  expect(s3.commandCalls(GetObjectCommand)).toHaveLength(0);
});

it('discards an arrival with exactly one DeleteObject of its key under the prefix', async () => {
  // Arrange
  s3.on(DeleteObjectCommand).resolves({});

  // Act
  await source().discard(MESSAGE_ID);

  // Assert
  expect(s3.calls()).toHaveLength(1);
  expect(s3).toHaveReceivedCommandWith(DeleteObjectCommand, { Bucket: 'inbound-bucket', Key: `inbound/${MESSAGE_ID}` });
});

it('refuses to discard by an id that is not a plain SES id (nothing outside the prefix is deleted)', async () => {
  // Act & Assert
  await expect(source().discard('../emails/x/raw')).rejects.toThrow(/not an SES message id/);
  expect(s3.calls()).toHaveLength(0);
});

it('keeps the SES event of an arrival every try failed on beside the messages, under inbound-failures/<id>.json', async () => {
  // Arrange
  s3.on(PutObjectCommand).resolves({});
  const sesEvent = JSON.stringify({ Records: [{ eventSource: 'aws:ses' }] });

  // Act
  await source().keepFailure(MESSAGE_ID, sesEvent);

  // Assert
  expect(s3.calls()).toHaveLength(1);
  expect(s3).toHaveReceivedCommandWith(PutObjectCommand, {
    Bucket: 'inbound-bucket',
    Key: `inbound-failures/${MESSAGE_ID}.json`,
    Body: sesEvent,
    ContentType: 'application/json',
  });
  await expect(source().keepFailure('../x', sesEvent)).rejects.toThrow(/not an SES message id/);
});
