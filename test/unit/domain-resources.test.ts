// Unit tests of derived identifiers and sending-domain names (lambdas/domain/resources.ts): an id is a prefix
// and 20 Crockford base32 characters of SHA-256 over the parts, so the same parts always give the same id (a
// second create collides) and different parts — including a different split — give different ids.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { derivedId, isDomainName } from '../../lambdas/domain/resources';

/** The id recomputed independently: the first 20 digest bytes, each mod 32, in lower-case Crockford base32. */
function expectedId(prefix: string, parts: string[]): string {
  const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
  const digest = createHash('sha256').update(parts.join('\n')).digest();
  return `${prefix}_${[...digest.subarray(0, 20)].map((b) => alphabet[b % 32]).join('')}`;
}

describe('derivedId', () => {
  it('is the prefix and 20 Crockford characters of SHA-256 over the newline-joined parts', () => {
    // Act
    const id = derivedId('dom', 'acct_01', 'live', 'acme.example');

    // Assert
    expect(id).toBe(expectedId('dom', ['acct_01', 'live', 'acme.example']));
    expect(id).toMatch(/^dom_[0-9a-hjkmnp-tv-z]{20}$/);
  });

  it('is deterministic: the same parts give the same id every time', () => {
    expect(derivedId('ct', 'acct_01', 'test', 'ada@example.com')).toBe(
      derivedId('ct', 'acct_01', 'test', 'ada@example.com'),
    );
  });

  it('differs per account, per mode and per name', () => {
    // Act
    const ids = [
      derivedId('dom', 'acct_01', 'live', 'acme.example'),
      derivedId('dom', 'acct_02', 'live', 'acme.example'),
      derivedId('dom', 'acct_01', 'test', 'acme.example'),
      derivedId('dom', 'acct_01', 'live', 'acme.example.org'),
    ];

    // Assert
    expect(new Set(ids).size).toBe(4);
  });

  it('keeps part boundaries: ("ab", "c") and ("a", "bc") differ', () => {
    expect(derivedId('x', 'ab', 'c')).not.toBe(derivedId('x', 'a', 'bc'));
  });

  it('keeps the prefix out of the hash: the same parts under two prefixes share the body', () => {
    // Act
    const dom = derivedId('dom', 'acct_01', 'live', 'n');
    const ct = derivedId('ct', 'acct_01', 'live', 'n');

    // Assert
    expect(dom.slice(4)).toBe(ct.slice(3));
  });
});

describe('isDomainName', () => {
  const label = (char: string, length: number) => char.repeat(length);

  it.each([
    'acme.example',
    'mail.acme.co.uk',
    'a.io',
    'xn--bcher-kva.example',
    'my-shop42.example',
    '1password.example',
    `${label('a', 63)}.example`,
    // 253 characters: 63 + 1 + 63 + 1 + 63 + 1 + 61.
    `${label('a', 63)}.${label('b', 63)}.${label('c', 63)}.${label('d', 61)}`,
  ])('accepts %s', (name) => {
    expect(isDomainName(name)).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['one label', 'localhost'],
    ['upper case', 'Acme.example'],
    ['a trailing dot', 'acme.example.'],
    ['a leading dot', '.acme.example'],
    ['an empty label', 'acme..example'],
    ['a label starting with a hyphen', '-acme.example'],
    ['a label ending with a hyphen', 'acme-.example'],
    ['an underscore', 'ac_me.example'],
    ['a one-letter TLD', 'acme.e'],
    ['a numeric TLD', 'acme.123'],
    ['an IPv4 address', '192.0.2.1'],
    ['a space', 'acme .example'],
    ['a scheme', 'https://acme.example'],
    ['a port', 'acme.example:25'],
    ['an address', 'ada@acme.example'],
    ['a 64-character label', `${label('a', 64)}.example`],
    ['254 characters', `${label('a', 63)}.${label('b', 63)}.${label('c', 63)}.${label('d', 62)}`],
    ['a newline', 'acme.example\n'],
  ])('refuses %s', (_name, name) => {
    expect(isDomainName(name)).toBe(false);
  });
});
