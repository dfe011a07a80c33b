// The signature checker's diagnosis: every problem a receiver meets, found from the headers and raw body.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signatureHeaders } from '../../lambdas/domain/webhooks/signature';
import {
  checkSignature,
  MAX_CHECKED_SIGNATURES,
  TOLERANCE_SECONDS,
} from '../../lambdas/domain/webhooks/signature-check';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const OTHER = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const NOW = 1_800_000_000_000;
const SENT = JSON.stringify({ type: 'email.delivered', created_at: '2027-01-15T08:00:00.000Z', data: { id: 'em_1' } });
const headers = (secret = SECRET, body = SENT, at = NOW) => signatureHeaders([secret], 'evt_1', body, at);

describe('checkSignature', () => {
  it('accepts what Sendflow sent, with any header casing, with or without the stored body', () => {
    const lower = Object.fromEntries(Object.entries(headers()).map(([k, v]) => [k.toLowerCase(), v]));
    expect(
      checkSignature({ headers: headers(), body: SENT, secrets: [SECRET], nowMs: NOW, sentBody: SENT }).valid,
    ).toBe(true);
    expect(checkSignature({ headers: lower, body: SENT, secrets: [SECRET], nowMs: NOW }).valid).toBe(true);
  });

  it('names a missing header', () => {
    const { 'webhook-timestamp': _t, ...rest } = headers();
    expect(checkSignature({ headers: rest, body: SENT, secrets: [SECRET], nowMs: NOW }).diagnosis).toMatch(
      /^header missing: webhook-timestamp/,
    );
    expect(checkSignature({ headers: {}, body: SENT, secrets: [SECRET], nowMs: NOW }).diagnosis).toMatch(
      /^header missing: neither webhook-signature/,
    );
  });

  it('says the body was re-serialised when it is the same JSON, pretty-printed or reordered', () => {
    const pretty = JSON.stringify(JSON.parse(SENT), null, 2);
    const reordered = JSON.stringify({
      data: { id: 'em_1' },
      created_at: '2027-01-15T08:00:00.000Z',
      type: 'email.delivered',
    });
    for (const body of [pretty, reordered]) {
      const result = checkSignature({ headers: headers(), body, secrets: [SECRET], nowMs: NOW, sentBody: SENT });
      expect(result).toEqual({ valid: false, diagnosis: expect.stringMatching(/^body changed: .*re-serialised/) });
    }
    // Without the stored body, the compact form still gives it away.
    expect(checkSignature({ headers: headers(), body: pretty, secrets: [SECRET], nowMs: NOW }).diagnosis).toMatch(
      /^body changed: it is re-serialised JSON/,
    );
  });

  it('says the body changed when it differs from what was sent', () => {
    const edited = SENT.replace('em_1', 'em_2');
    expect(
      checkSignature({ headers: headers(), body: edited, secrets: [SECRET], nowMs: NOW, sentBody: SENT }).diagnosis,
    ).toMatch(/^body changed: it differs/);
  });

  it('says the secret is wrong when the body is intact', () => {
    const result = checkSignature({
      headers: headers(OTHER),
      body: SENT,
      secrets: [SECRET],
      nowMs: NOW,
      sentBody: SENT,
    });
    expect(result).toEqual({ valid: false, diagnosis: expect.stringMatching(/^wrong secret/) });
  });

  it('accepts either live secret during a grace period, and names a rotated-out one', () => {
    const both = headers(); // signed with SECRET only
    expect(checkSignature({ headers: both, body: SENT, secrets: [OTHER, SECRET], nowMs: NOW }).valid).toBe(true);
    const result = checkSignature({ headers: both, body: SENT, secrets: [OTHER], retiredSecret: SECRET, nowMs: NOW });
    expect(result).toEqual({ valid: false, diagnosis: expect.stringMatching(/^signed with a rotated-out secret/) });
  });

  it('refuses a timestamp outside 5 minutes, either way, after the signature matched', () => {
    const old = headers(SECRET, SENT, NOW - (TOLERANCE_SECONDS + 1) * 1000);
    const ahead = headers(SECRET, SENT, NOW + (TOLERANCE_SECONDS + 60) * 1000);
    expect(checkSignature({ headers: old, body: SENT, secrets: [SECRET], nowMs: NOW }).diagnosis).toMatch(
      /^timestamp outside the 5-minute tolerance: webhook-timestamp is 301 s old/,
    );
    expect(checkSignature({ headers: ahead, body: SENT, secrets: [SECRET], nowMs: NOW }).diagnosis).toMatch(
      /360 s in the future/,
    );
    const edge = headers(SECRET, SENT, NOW - TOLERANCE_SECONDS * 1000);
    expect(checkSignature({ headers: edge, body: SENT, secrets: [SECRET], nowMs: NOW }).valid).toBe(true);
  });

  it('checks X-Service-Signature alone (the spec header: hex HMAC of the body keyed with the secret string)', () => {
    const signature = createHmac('sha256', SECRET).update(SENT).digest('hex');
    const service = { 'X-Service-Signature': signature, 'X-Service-Timestamp': String(NOW / 1000) };
    expect(checkSignature({ headers: service, body: SENT, secrets: [SECRET], nowMs: NOW }).valid).toBe(true);
    expect(checkSignature({ headers: service, body: SENT, secrets: [OTHER], nowMs: NOW }).diagnosis).toMatch(
      /^wrong secret/,
    );
    const { 'X-Service-Timestamp': _t, ...noTime } = service;
    expect(checkSignature({ headers: noTime, body: SENT, secrets: [SECRET], nowMs: NOW }).diagnosis).toMatch(
      /^header missing: X-Service-Timestamp/,
    );
  });

  it('checks at most MAX_CHECKED_SIGNATURES listed signatures: one beyond them is ignored', () => {
    const signed = headers();
    const filler = Array.from(
      { length: MAX_CHECKED_SIGNATURES },
      (_, i) => `v1,${Buffer.alloc(32, i).toString('base64')}`,
    );
    const last = { ...signed, 'webhook-signature': [...filler, signed['webhook-signature']].join(' ') };
    const tenth = { ...signed, 'webhook-signature': [...filler.slice(1), signed['webhook-signature']].join(' ') };
    expect(checkSignature({ headers: tenth, body: SENT, secrets: [SECRET], nowMs: NOW }).valid).toBe(true);
    expect(checkSignature({ headers: last, body: SENT, secrets: [SECRET], nowMs: NOW }).diagnosis).toMatch(
      /^wrong secret/,
    );
  });

  it('spends one HMAC per secret and body, not one per listed signature: 4,096 signatures over 256 KB', () => {
    // Every path of the diagnosis at once: a stored body that differs, a JSON body with a compact form, a retired
    // secret. Before the cap this took 1.5–8 s of CPU (docs/benchmarks.md); now a handful of HMACs.
    const body = JSON.stringify({ type: 'email.delivered', data: { text: 'x'.repeat(256 * 1024 - 64) } }, null, 1);
    const given = Array.from({ length: 4096 }, (_, i) => `v1,${Buffer.alloc(32, i % 251).toString('base64')}`);
    const many = { ...headers(), 'webhook-signature': given.join(' ') };
    const start = process.cpuUsage();
    const result = checkSignature({
      headers: many,
      body,
      sentBody: body.replace('delivered', 'bounced'),
      secrets: [SECRET, OTHER],
      retiredSecret: `whsec_${Buffer.alloc(32, 3).toString('base64')}`,
      nowMs: NOW,
    });
    const { user, system } = process.cpuUsage(start);
    expect(result.valid).toBe(false);
    expect((user + system) / 1000).toBeLessThan(250);
  });
});
