// Email bodies are stored gzip-compressed, in whichever store holds them (DynamoDB's `body` item, S3, the local
// data directory): DynamoDB bills a write and storage by the item's size and S3 storage by the object's, and
// HTML compresses several times over. Bodies stored before, as JSON text or as attributes, read as they were.
import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { S3EmailBodyStore } from '../../lambdas/adapters/aws/s3-email-bodies';
import { DynamoEmailBodyStore } from '../../lambdas/adapters/dynamodb/email-bodies';
import { decodeBody, encodeBody } from '../../lambdas/adapters/email-body-object';
import { INLINE_BODY_MAX_BYTES, TieredEmailBodyStore } from '../../lambdas/adapters/tiered-email-bodies';
import { InMemoryEmailBodyStore } from '../support/fakes';

const NOW = Date.UTC(2026, 10, 26);
const LATER = NOW / 1000 + 3600;
/** A receipt's worth of HTML: markup and styles repeat, as they do in real emails. */
const receipt = (rows: number) =>
  `<table style="width:100%;font-family:Arial,sans-serif">${Array.from(
    { length: rows },
    (_, i) =>
      `<tr><td style="padding:8px;border-bottom:1px solid #eee">Item ${i} — ${randomBytes(6).toString('hex')}</td><td style="padding:8px;text-align:right">$${(i * 7.31).toFixed(2)}</td></tr>`,
  ).join('')}</table>`;

const s3 = mockClient(S3Client);
const dynamo = mockClient(DynamoDBDocumentClient);
beforeEach(() => {
  s3.reset();
  dynamo.reset();
});

describe('the stored body object', () => {
  it('is gzip of the body JSON, several times smaller than an HTML body, and decodes exactly', () => {
    // Arrange
    const body = { html: receipt(60), text: 'Thanks', headers: JSON.parse('{"X-A":"1","__proto__":"p"}') };

    // Act
    const stored = encodeBody(body, LATER);
    const read = decodeBody(stored, NOW);

    // Assert
    expect(stored.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(JSON.parse(gunzipSync(stored).toString('utf8'))).toMatchObject({ html: body.html, expiresAt: LATER });
    expect(stored.length * 3).toBeLessThan(Buffer.byteLength(body.html));
    expect(read).toEqual(body);
    expect(Object.keys(read?.headers ?? {})).toEqual(['X-A', '__proto__']);
  });

  it('refuses to inflate an object past 2 MB (a gzip bomb in the store), whatever its compressed size', () => {
    const bomb = gzipSync(`{"text":"${'0'.repeat(8 * 1024 * 1024)}","headers":[],"expiresAt":${LATER}}`);
    expect(bomb.length).toBeLessThan(64 * 1024);
    expect(() => decodeBody(bomb, NOW)).toThrow(RangeError);
  });

  it('reads a body stored before compression (JSON text) as it was, and none past its retention', () => {
    const legacy = JSON.stringify({ html: '<p>old</p>', headers: [['X-B', '2']], expiresAt: LATER });
    expect(decodeBody(legacy, NOW)).toEqual({ html: '<p>old</p>', headers: { 'X-B': '2' } });
    expect(decodeBody(Buffer.from(legacy), NOW)).toEqual({ html: '<p>old</p>', headers: { 'X-B': '2' } });
    expect(decodeBody(encodeBody({ text: 'x', headers: {} }, NOW / 1000), NOW)).toBeNull();
  });
});

describe('DynamoEmailBodyStore', () => {
  const store = () =>
    new DynamoEmailBodyStore(DynamoDBDocumentClient.from(new DynamoDBClient({})), 'emailParts', () => NOW);

  it('puts the compressed object as one binary attribute, nothing of the body in the clear', async () => {
    // Arrange
    dynamo.on(BatchWriteCommand).resolves({});
    const body = { html: receipt(20), headers: {} };

    // Act
    await store().putMany([{ emailId: 'email_z', body, expiresAt: LATER }]);

    // Assert
    const [call] = dynamo.commandCalls(BatchWriteCommand);
    const item = call?.args[0].input.RequestItems?.emailParts?.[0]?.PutRequest?.Item as Record<string, unknown>;
    expect(Object.keys(item).sort()).toEqual(['emailId', 'expiresAt', 'object', 'part']);
    expect(item.object).toBeInstanceOf(Uint8Array);
    expect(decodeBody(item.object as Uint8Array, NOW)).toEqual(body);
  });

  it('reads a compressed item, and an item stored before compression (html, text, headers attributes)', async () => {
    // Arrange
    dynamo
      .on(GetCommand, { Key: { emailId: 'email_new', part: 'body' } })
      .resolves({ Item: { object: new Uint8Array(encodeBody({ text: 'new', headers: {} }, LATER)), expiresAt: LATER } })
      .on(GetCommand, { Key: { emailId: 'email_old', part: 'body' } })
      .resolves({ Item: { html: '<p>old</p>', headers: [['X-C', '3']], expiresAt: LATER } });

    // Act / Assert
    expect(await store().get('email_new')).toEqual({ text: 'new', headers: {} });
    expect(await store().get('email_old')).toEqual({ html: '<p>old</p>', headers: { 'X-C': '3' } });
    // Strongly consistent: the send worker reads a body a moment after its write, and a lagging replica's miss
    // would send the copy without it.
    expect(dynamo.commandCalls(GetCommand).map((c) => c.args[0].input.ConsistentRead)).toEqual([true, true]);
  });
});

describe('S3EmailBodyStore', () => {
  it('puts the compressed object (Content-Encoding gzip) and reads it, and reads an object stored before as JSON', async () => {
    // Arrange
    const stored = new Map<string, Uint8Array>();
    s3.on(PutObjectCommand).callsFake((input: { Key: string; Body: Uint8Array }) => {
      stored.set(input.Key, input.Body);
      return {};
    });
    stored.set(
      'emails/email_old/body.json',
      Buffer.from(JSON.stringify({ text: 'old', headers: [], expiresAt: LATER })),
    );
    // A missing key is NoSuchKey, as S3 says it: a read tries the retention key first, then the plain one.
    s3.on(GetObjectCommand).callsFake((input: { Key: string }) => {
      const bytes = stored.get(input.Key);
      if (!bytes) throw new NoSuchKey({ message: 'The specified key does not exist.', $metadata: {} });
      return { Body: { transformToByteArray: async () => bytes } };
    });
    const store = new S3EmailBodyStore(new S3Client({ region: 'eu-west-1' }), 'bodies', { now: () => NOW });
    const body = { html: receipt(200), headers: {} };

    // Act
    await store.putMany([{ emailId: 'email_new', body, expiresAt: LATER }]);

    // Assert
    expect(s3).toHaveReceivedCommandWith(PutObjectCommand, {
      Key: 'emails/email_new/body.json',
      ContentType: 'application/json',
      ContentEncoding: 'gzip',
    });
    expect(stored.get('emails/email_new/body.json')?.length).toBeLessThan(Buffer.byteLength(body.html) / 3);
    expect(await store.get('email_new')).toEqual(body);
    expect(await store.get('email_old')).toEqual({ text: 'old', headers: {} });
  });
});

describe('TieredEmailBodyStore', () => {
  it('chooses by the stored (compressed) size: compressible HTML past the limit stays inline, incompressible goes to S3', async () => {
    // Arrange
    s3.on(PutObjectCommand).resolves({});
    const inline = new InMemoryEmailBodyStore(() => NOW);
    const store = new TieredEmailBodyStore(
      inline,
      new S3EmailBodyStore(new S3Client({ region: 'eu-west-1' }), 'bodies', { now: () => NOW }),
    );
    const compressible = { html: receipt(60), headers: {} };
    const random = { text: randomBytes(INLINE_BODY_MAX_BYTES).toString('base64'), headers: {} };
    expect(Buffer.byteLength(compressible.html)).toBeGreaterThan(INLINE_BODY_MAX_BYTES);

    // Act
    await store.putMany([
      { emailId: 'email_html', body: compressible, expiresAt: LATER },
      { emailId: 'email_random', body: random, expiresAt: LATER },
    ]);

    // Assert
    expect(await inline.get('email_html')).toEqual(compressible);
    expect(await inline.get('email_random')).toBeNull();
    expect(s3).toHaveReceivedCommandTimes(PutObjectCommand, 1);
    expect(s3).toHaveReceivedCommandWith(PutObjectCommand, { Key: 'emails/email_random/body.json' });
  });
});
