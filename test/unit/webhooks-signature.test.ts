// Unit tests for delivery signatures (lambdas/domain/webhooks/signature.ts, spec §6.4, DESIGN §4): every
// expected value is recomputed here with node:crypto over the exact bytes, or taken from the Standard Webhooks
// published test vector.
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import {
  generateSigningSecret,
  serviceSignature,
  signatureHeaders,
  standardWebhookSignature,
} from '../../lambdas/domain/webhooks/signature';

/** The Standard Webhooks specification's test vector. */
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
} as const;

const SECRET = 'whsec_c2VjcmV0LWtleS1mb3ItdGVzdHMtb25seS0xMjM0NTY3OA==';
/** Non-ASCII on purpose: 2-, 3- and 4-byte UTF-8 sequences. Signing its UTF-16 or Latin-1 form would differ. */
const BODY =
  '{"id":"evt_1","type":"email.bounced","data":{"from":"Zoë Ölçer <zoe@example.com>","subject":"Über — 日本 😀"}}';

/** What a receiver does: hex HMAC-SHA256 keyed with the secret string's UTF-8 bytes over the raw body's bytes. */
function receiverServiceSignature(secret: string, rawBody: Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(rawBody).digest('hex');
}

/** What a Standard Webhooks receiver does: key = base64-decoded secret without `whsec_`, over `id.ts.body`. */
function receiverStandardSignature(secret: string, id: string, timestamp: string, rawBody: Buffer): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), rawBody]);
  return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
}

describe('serviceSignature (X-Service-Signature)', () => {
  it('is the hex HMAC-SHA256 of the raw UTF-8 body keyed with the secret string', () => {
    // Arrange
    const rawBody = Buffer.from(BODY, 'utf8');

    // Act
    const signature = serviceSignature(SECRET, BODY);

    // Assert
    expect(signature).toMatch(/^[0-9a-f]{64}$/);
    expect(signature).toBe(receiverServiceSignature(SECRET, rawBody));
  });

  it('matches a hard-coded value for the non-ASCII body (guards against a shared bug in both computations)', () => {
    expect(serviceSignature('k', 'é')).toBe(
      createHmac('sha256', 'k')
        .update(Buffer.from([0xc3, 0xa9]))
        .digest('hex'),
    );
    expect(serviceSignature('k', 'é')).not.toBe(
      createHmac('sha256', 'k')
        .update(Buffer.from([0xe9]))
        .digest('hex'), // Latin-1 bytes
    );
  });

  it('keys with the whole secret string, prefix included, not the decoded secret', () => {
    const decodedKey = Buffer.from(SECRET.slice('whsec_'.length), 'base64');

    expect(serviceSignature(SECRET, BODY)).not.toBe(createHmac('sha256', decodedKey).update(BODY).digest('hex'));
  });

  it('changes when one character of the body or the secret changes', () => {
    const original = serviceSignature(SECRET, BODY);

    expect(serviceSignature(SECRET, BODY.replace('😀', '😁'))).not.toBe(original);
    expect(serviceSignature(`${SECRET.slice(0, -3)}x==`, BODY)).not.toBe(original);
  });
});

describe('standardWebhookSignature (webhook-signature)', () => {
  it('reproduces the Standard Webhooks published test vector', () => {
    expect(standardWebhookSignature(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
  });

  it('matches an independent computation over a non-ASCII body', () => {
    const signature = standardWebhookSignature(SECRET, 'evt_1', 1700000000, BODY);

    expect(signature).toBe(receiverStandardSignature(SECRET, 'evt_1', '1700000000', Buffer.from(BODY, 'utf8')));
  });

  it('binds the id and the timestamp (replay protection)', () => {
    const original = standardWebhookSignature(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body);

    expect(standardWebhookSignature(VECTOR.secret, 'msg_other', VECTOR.timestamp, VECTOR.body)).not.toBe(original);
    expect(standardWebhookSignature(VECTOR.secret, VECTOR.id, VECTOR.timestamp + 1, VECTOR.body)).not.toBe(original);
  });
});

describe('signatureHeaders', () => {
  it('gives both signature schemes, the Unix-seconds timestamp of nowMs and webhook-id = event id', () => {
    // Arrange: 999 ms into the vector's second; the timestamp is the floor, not a rounding.
    const nowMs = VECTOR.timestamp * 1000 + 999;

    // Act
    const headers = signatureHeaders([VECTOR.secret], VECTOR.id, VECTOR.body, nowMs);

    // Assert
    expect(headers).toEqual({
      'X-Service-Signature': receiverServiceSignature(VECTOR.secret, Buffer.from(VECTOR.body)),
      'X-Service-Timestamp': '1614265330',
      'webhook-id': VECTOR.id,
      'webhook-timestamp': '1614265330',
      'webhook-signature': VECTOR.signature,
    });
  });

  it('is fresh per attempt: a later attempt has a new timestamp and webhook-signature, same body signature and id', () => {
    // Arrange
    const first = signatureHeaders([SECRET], 'evt_1', BODY, Date.UTC(2026, 0, 1, 12, 0, 0));

    // Act: the 2nd automatic attempt, one second later (spec §6.2.4).
    const second = signatureHeaders([SECRET], 'evt_1', BODY, Date.UTC(2026, 0, 1, 12, 0, 1));

    // Assert
    expect(first['X-Service-Timestamp']).toBe(String(Date.UTC(2026, 0, 1, 12, 0, 0) / 1000));
    expect(second['X-Service-Timestamp']).toBe(String(Date.UTC(2026, 0, 1, 12, 0, 1) / 1000));
    expect(second['webhook-timestamp']).toBe(second['X-Service-Timestamp']);
    expect(second['X-Service-Signature']).toBe(first['X-Service-Signature']);
    expect(second['webhook-id']).toBe(first['webhook-id']);
    expect(second['webhook-signature']).not.toBe(first['webhook-signature']);
    expect(second['webhook-signature']).toBe(
      receiverStandardSignature(SECRET, 'evt_1', second['webhook-timestamp'] ?? '', Buffer.from(BODY)),
    );
  });
});

describe('generateSigningSecret', () => {
  it('is whsec_ followed by the base64 of 32 bytes from the given source', () => {
    // Arrange
    const bytes = Uint8Array.from({ length: 32 }, (_, i) => i * 7 + 1);
    const source = vi.fn((size: number) => bytes.slice(0, size));

    // Act
    const secret = generateSigningSecret(source);

    // Assert
    expect(source).toHaveBeenCalledWith(32);
    expect(secret).toBe(`whsec_${Buffer.from(bytes).toString('base64')}`);
  });

  it('gives distinct 32-byte secrets from real randomness, usable as Standard Webhooks keys', () => {
    // Act
    const secrets = Array.from({ length: 20 }, () => generateSigningSecret(randomBytes));

    // Assert
    expect(new Set(secrets).size).toBe(20);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
      expect(standardWebhookSignature(secret, 'evt_1', 1, BODY)).toBe(
        receiverStandardSignature(secret, 'evt_1', '1', Buffer.from(BODY)),
      );
    }
  });
});
