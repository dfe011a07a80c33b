// Unit tests for the API key rules (lambdas/domain/api-keys.ts): format, parsing, hashing, bearer tokens, hints.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  base62,
  bearerToken,
  generateApiKey,
  hashApiKey,
  hashesEqual,
  keyHint,
  MODES,
  parseApiKey,
  SECRET_LENGTH,
} from '../../lambdas/domain/api-keys';
import { seededRandom } from '../support/fakes';

const BASE62_CHARS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const FORTY = 'aB3'.repeat(13).concat('Z'); // 40 base62 characters

/** A randomBytes source that hands out the given bytes in order, cycling. */
function bytesFrom(values: readonly number[]): (size: number) => Uint8Array {
  let i = 0;
  return (size) => {
    const out = new Uint8Array(size);
    for (let j = 0; j < size; j++) out[j] = values[i++ % values.length] ?? 0;
    return out;
  };
}

describe('generateApiKey', () => {
  it.each(MODES)('makes a %s key: sf_<mode>_ followed by exactly 40 base62 characters', (mode) => {
    // Arrange
    const random = seededRandom(mode);

    // Act
    const key = generateApiKey(mode, random);

    // Assert
    expect(SECRET_LENGTH).toBe(40);
    expect(key).toMatch(new RegExp(`^sf_${mode}_[0-9A-Za-z]{40}$`));
  });

  it('produces keys that parseApiKey accepts, with the mode they were made for', () => {
    fc.assert(
      fc.property(fc.constantFrom(...MODES), fc.uint8Array({ minLength: 1, maxLength: 64 }), (mode, seedBytes) => {
        // Arrange: random bytes that are not all >= 248 (base62 would wait for a usable byte forever).
        const source = bytesFrom([...seedBytes, 7]);

        // Act
        const key = generateApiKey(mode, source);

        // Assert
        expect(parseApiKey(key)).toEqual({ mode });
      }),
    );
  });

  it('gives different keys for different random bytes', () => {
    // Arrange
    const random = seededRandom();

    // Act
    const keys = new Set(Array.from({ length: 50 }, () => generateApiKey('live', random)));

    // Assert
    expect(keys.size).toBe(50);
  });
});

describe('base62', () => {
  it('returns exactly the requested length, every character base62 (property)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 300 }),
        fc.integer({ min: 0, max: 200 }),
        (bytes, length) => {
          // Arrange
          const source = bytesFrom([...bytes, 0]);

          // Act
          const text = base62(source, length);

          // Assert
          expect(text).toHaveLength(length);
          for (const char of text) expect(BASE62_CHARS).toContain(char);
        },
      ),
    );
  });

  it('has no modulo bias: one pass over all 256 byte values yields each of the 62 characters exactly 4 times', () => {
    // Arrange: bytes 0..255 in order. 248 = 4 × 62, so an unbiased mapping uses 0..247 and skips 248..255;
    // a plain `byte % 62` would give the first eight characters a fifth occurrence.
    const source = bytesFrom(Array.from({ length: 256 }, (_, i) => i));

    // Act
    const text = base62(source, 248);

    // Assert
    const counts = new Map<string, number>();
    for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(counts.size).toBe(62);
    expect([...counts.values()].every((n) => n === 4)).toBe(true);
  });

  it('skips bytes 248..255 instead of folding them onto the alphabet', () => {
    // Arrange: unusable bytes first, then 0 ('0'), 61 ('z'), 62 ('0' again), 247 ('z').
    const source = bytesFrom([248, 249, 250, 251, 252, 253, 254, 255, 0, 61, 62, 247]);

    // Act
    const text = base62(source, 4);

    // Assert
    expect(text).toBe('0z0z');
  });
});

describe('parseApiKey', () => {
  it.each([
    ['sf_live_', 'live'],
    ['sf_test_', 'test'],
  ] as const)('reads the mode from a %s key', (prefix, mode) => {
    // Arrange
    const key = `${prefix}${FORTY}`;

    // Act
    const parsed = parseApiKey(key);

    // Assert
    expect(parsed).toEqual({ mode });
  });

  it('accepts the 32-character minimum of DESIGN §3', () => {
    expect(parseApiKey(`sf_test_${'a'.repeat(32)}`)).toEqual({ mode: 'test' });
  });

  it.each([
    ['wrong prefix', `sk_live_${FORTY}`],
    ['unknown mode', `sf_prod_${FORTY}`],
    ['upper-case prefix', `SF_LIVE_${FORTY}`],
    ['missing underscore', `sf_live${FORTY}`],
    ['prefix only', 'sf_live_'],
    ['too short (31 chars)', `sf_live_${'a'.repeat(31)}`],
    ['non-base62 character', `sf_live_${FORTY.slice(0, 39)}-`],
    ['underscore in the secret', `sf_live_${FORTY.slice(0, 39)}_`],
    ['non-ASCII letter', `sf_live_${FORTY.slice(0, 39)}é`],
    ['leading space', ` sf_live_${FORTY}`],
    ['trailing space', `sf_live_${FORTY} `],
    ['trailing newline', `sf_live_${FORTY}\n`],
    ['inner space', `sf_live_${FORTY.slice(0, 20)} ${FORTY.slice(20)}`],
    ['empty string', ''],
  ])('rejects a malformed key: %s', (_, key) => {
    expect(parseApiKey(key)).toBeNull();
  });
});

describe('hashApiKey', () => {
  it('is the lower-case hex SHA-256 of the UTF-8 secret, computed independently', () => {
    // Arrange
    const secret = `sf_live_${FORTY}`;
    const expected = createHash('sha256').update(Buffer.from(secret, 'utf8')).digest('hex');

    // Act
    const hash = hashApiKey(secret);

    // Assert
    expect(hash).toBe(expected);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('matches a known SHA-256 test vector', () => {
    // "abc" is the FIPS 180-2 example message.
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('differs for keys that differ in one character', () => {
    expect(hashApiKey(`sf_live_${FORTY}`)).not.toBe(hashApiKey(`sf_live_${FORTY.slice(0, 39)}Y`));
  });
});

describe('hashesEqual', () => {
  it('is true for the same digest', () => {
    const digest = hashApiKey('one');
    expect(hashesEqual(digest, `${digest}`)).toBe(true);
  });

  it('is false for different digests of equal length (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        fc.pre(a !== b);
        expect(hashesEqual(hashApiKey(a), hashApiKey(b))).toBe(false);
      }),
    );
  });

  it('is false when the digests differ only in the last byte', () => {
    // Arrange
    const digest = hashApiKey('x');
    const last = digest.slice(-2) === 'ff' ? '00' : 'ff';

    // Act / Assert
    expect(hashesEqual(digest, digest.slice(0, -2) + last)).toBe(false);
  });

  it('is false for different strings that are not well-formed hex digests', () => {
    expect(hashesEqual(`ab${'x'.repeat(62)}`, `ab${'y'.repeat(62)}`)).toBe(false);
    expect(hashesEqual('abc', 'abd')).toBe(false);
    expect(hashesEqual('zz', 'yy')).toBe(false);
  });

  it('is false (and does not throw) for digests of different lengths', () => {
    const digest = hashApiKey('x');
    expect(() => hashesEqual(digest, digest.slice(0, 62))).not.toThrow();
    expect(hashesEqual(digest, digest.slice(0, 62))).toBe(false);
    expect(hashesEqual(digest, '')).toBe(false);
  });
});

describe('bearerToken', () => {
  const key = `sf_test_${FORTY}`;

  it.each([
    ['Bearer', `Bearer ${key}`],
    ['lower-case scheme', `bearer ${key}`],
    ['upper-case scheme', `BEARER ${key}`],
    ['several spaces', `Bearer    ${key}`],
    ['trailing whitespace', `Bearer ${key}  `],
  ])('extracts the token: %s', (_, header) => {
    expect(bearerToken(header)).toBe(key);
  });

  it.each([
    ['missing header', undefined],
    ['empty header', ''],
    ['scheme only', 'Bearer'],
    ['scheme and space only', 'Bearer '],
    ['Basic scheme', `Basic ${Buffer.from(`${key}:`).toString('base64')}`],
    ['Token scheme', `Token ${key}`],
    ['no scheme', key],
    ['two tokens', `Bearer ${key} other`],
    ['scheme glued to token', `Bearer${key}`],
  ])('returns null: %s', (_, header) => {
    expect(bearerToken(header)).toBeNull();
  });
});

describe('keyHint', () => {
  it('shows the prefix and the last four characters only', () => {
    // Arrange
    const secret = `sf_live_${FORTY}`;

    // Act
    const hint = keyHint(secret);

    // Assert
    expect(hint).toBe(`sf_live_…${secret.slice(-4)}`);
  });

  it('never reveals more than prefix + 4 characters of a generated secret (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...MODES), fc.uint8Array({ minLength: 1, maxLength: 64 }), (mode, bytes) => {
        // Arrange
        const secret = generateApiKey(mode, bytesFrom([...bytes, 1]));
        const body = secret.slice(`sf_${mode}_`.length);

        // Act
        const hint = keyHint(secret);

        // Assert: the only secret characters shown are the last four.
        const shown = hint.replace(`sf_${mode}_`, '').replace('…', '');
        expect(shown).toBe(body.slice(-4));
        expect(hint).not.toContain(body.slice(0, 5));
      }),
    );
  });
});
