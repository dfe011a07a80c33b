// Unit tests of signed link tokens (lambdas/domain/tokens.ts): a token is a base64url JSON payload and an
// HMAC-SHA256 over `kind.payload`, recomputed here independently; anything forged, altered, of the other kind,
// malformed, or whose payload is not an object of strings verifies as null; the signature is compared in
// constant time.
import * as crypto from 'node:crypto';
import fc from 'fast-check';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { signToken, type TokenKind, verifyToken } from '../../lambdas/domain/tokens';

// Wrap timingSafeEqual so the comparison can be observed; it still compares for real.
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  return { ...real, timingSafeEqual: vi.fn(real.timingSafeEqual) };
});

const SECRET = 'link-secret-0123456789abcdef';
const CLAIMS = { a: 'acct_01', m: 'live', e: 'email_01jx', r: 'ada@example.com' };

/** A token built by hand, as the spec describes it: base64url(JSON).base64url(HMAC(kind + '.' + body)). */
function handMade(kind: TokenKind, payloadJson: string, secret = SECRET): string {
  const body = Buffer.from(payloadJson, 'utf8').toString('base64url');
  const signature = crypto.createHmac('sha256', secret).update(`${kind}.${body}`).digest('base64url');
  return `${body}.${signature}`;
}

describe('signToken', () => {
  it('produces base64url(JSON payload) and an HMAC-SHA256 over kind and body, as recomputed independently', () => {
    // Act
    const token = signToken('unsubscribe', CLAIMS, SECRET);

    // Assert
    expect(token).toBe(handMade('unsubscribe', JSON.stringify(CLAIMS)));
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  });

  it('signs the same payload differently per kind and per secret', () => {
    // Act
    const unsubscribe = signToken('unsubscribe', CLAIMS, SECRET);
    const confirm = signToken('confirm', CLAIMS, SECRET);
    const otherSecret = signToken('unsubscribe', CLAIMS, `${SECRET}x`);

    // Assert: same body, three different signatures.
    const [body, sig] = unsubscribe.split('.');
    expect(confirm.split('.')[0]).toBe(body);
    expect(new Set([sig, confirm.split('.')[1], otherSecret.split('.')[1]]).size).toBe(3);
  });
});

describe('verifyToken', () => {
  beforeEach(() => {
    vi.mocked(crypto.timingSafeEqual).mockClear();
  });

  it('returns the payload of a token it signed', () => {
    expect(verifyToken('unsubscribe', signToken('unsubscribe', CLAIMS, SECRET), SECRET)).toEqual(CLAIMS);
  });

  it('round-trips any object of strings (unicode, empty values, many keys)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.string(), { maxKeys: 8 }), (payload) => {
        const token = signToken('confirm', payload, SECRET);
        fc.pre((token.split('.')[0] ?? '').length <= 2048);
        expect(verifyToken('confirm', token, SECRET)).toEqual(payload);
      }),
    );
  });

  it('refuses a forged payload carrying a genuine signature (another recipient, another account)', () => {
    // Arrange
    const genuine = signToken('unsubscribe', CLAIMS, SECRET);
    const signature = genuine.split('.')[1];
    const forgedBody = Buffer.from(JSON.stringify({ ...CLAIMS, r: 'victim@example.com' })).toString('base64url');
    const otherAccount = Buffer.from(JSON.stringify({ ...CLAIMS, a: 'acct_02' })).toString('base64url');

    // Act / Assert
    expect(verifyToken('unsubscribe', `${forgedBody}.${signature}`, SECRET)).toBeNull();
    expect(verifyToken('unsubscribe', `${otherAccount}.${signature}`, SECRET)).toBeNull();
  });

  it('refuses a token whose signature has any one character changed', () => {
    // Arrange
    const token = signToken('unsubscribe', CLAIMS, SECRET);
    const [body, signature = ''] = token.split('.');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

    // Act / Assert: every position, flipped to another base64url character.
    for (let i = 0; i < signature.length; i++) {
      const replacement = alphabet[(alphabet.indexOf(signature[i] as string) + 1) % alphabet.length];
      const flipped = `${signature.slice(0, i)}${replacement}${signature.slice(i + 1)}`;
      expect(verifyToken('unsubscribe', `${body}.${flipped}`, SECRET), `position ${i}`).toBeNull();
    }
  });

  it('refuses a token of the other kind, and one signed with another secret', () => {
    // Arrange
    const confirm = signToken('confirm', { a: 'acct_01', m: 'test', c: 'ct_01' }, SECRET);
    const unsubscribe = signToken('unsubscribe', CLAIMS, SECRET);

    // Act / Assert
    expect(verifyToken('unsubscribe', confirm, SECRET)).toBeNull();
    expect(verifyToken('confirm', unsubscribe, SECRET)).toBeNull();
    expect(verifyToken('unsubscribe', unsubscribe, `${SECRET}-rotated`)).toBeNull();
  });

  it.each([
    ['empty', ''],
    ['no dot', 'abc'],
    ['empty body', `.${'A'.repeat(43)}`],
    ['short signature', `abc.${'A'.repeat(42)}`],
    ['long signature', `abc.${'A'.repeat(44)}`],
    ['two dots', `abc.def.${'A'.repeat(43)}`],
    ['standard base64 characters', `ab+/.${'A'.repeat(43)}`],
    ['padding', `abc=.${'A'.repeat(43)}`],
    ['whitespace around', ` ${signToken('unsubscribe', CLAIMS, SECRET)} `],
    ['trailing newline', `${signToken('unsubscribe', CLAIMS, SECRET)}\n`],
    ['body over 2048 characters', `${'A'.repeat(2049)}.${'A'.repeat(43)}`],
  ])('refuses a malformed token (%s)', (_name, token) => {
    expect(verifyToken('unsubscribe', token, SECRET)).toBeNull();
  });

  it.each([
    ['an array', '["acct_01","live"]'],
    ['null', 'null'],
    ['a string', '"acct_01"'],
    ['a number', '42'],
    ['true', 'true'],
    ['a number value', '{"a":"acct_01","n":1}'],
    ['a null value', '{"a":"acct_01","r":null}'],
    ['a nested object', '{"a":"acct_01","r":{"x":"y"}}'],
    ['an array value', '{"a":"acct_01","r":["x"]}'],
    ['not JSON', '{a:acct_01}'],
  ])('refuses a correctly signed payload that is %s', (_name, json) => {
    // Arrange: signed with the real secret, so only the payload check can refuse it.
    const token = handMade('unsubscribe', json);

    // Act / Assert
    expect(verifyToken('unsubscribe', token, SECRET)).toBeNull();
  });

  it('accepts a hand-made token with an empty object payload (the claims check is the caller’s)', () => {
    expect(verifyToken('confirm', handMade('confirm', '{}'), SECRET)).toEqual({});
  });

  it('compares the signature in constant time (crypto.timingSafeEqual over equal-length buffers)', () => {
    // Arrange
    const token = signToken('unsubscribe', CLAIMS, SECRET);
    const [body, signature = ''] = token.split('.');
    const wrong = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;

    // Act
    const good = verifyToken('unsubscribe', token, SECRET);
    const bad = verifyToken('unsubscribe', `${body}.${wrong}`, SECRET);

    // Assert
    expect(good).toEqual(CLAIMS);
    expect(bad).toBeNull();
    const calls = vi.mocked(crypto.timingSafeEqual).mock.calls;
    expect(calls).toHaveLength(2);
    for (const [a, b] of calls) expect((a as Buffer).length).toBe((b as Buffer).length);
  });
});
