// Unit tests for time-ordered ids (lambdas/domain/ids.ts): prefix, charset, and lexical order = creation order.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { timeOfId, timeOrderedId } from '../../lambdas/domain/ids';
import { seededRandom } from '../support/fakes';

/** Lower-case Crockford base32: digits and letters without i, l, o, u. */
const ID_BODY = /^[0-9a-hjkmnp-tv-z]{26}$/;
const MAX_TIME = 2 ** 48 - 1; // ULID's time range; ten base32 characters hold 2^50.

const bytes16 = fc.uint8Array({ minLength: 16, maxLength: 16 });
const fixed = (bytes: Uint8Array) => () => bytes;

describe('timeOrderedId', () => {
  it('is the prefix, an underscore and 26 lower-case Crockford characters', () => {
    // Act
    const id = timeOrderedId('key', Date.UTC(2025, 0, 1), seededRandom());

    // Assert
    expect(id).toMatch(/^key_/);
    expect(id.slice('key_'.length)).toMatch(ID_BODY);
  });

  it('has the right prefix and charset for any time and randomness (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('acct', 'key', 'wh', 'dlv'),
        fc.integer({ min: 0, max: MAX_TIME }),
        bytes16,
        (prefix, now, bytes) => {
          const id = timeOrderedId(prefix, now, fixed(bytes));
          expect(id.startsWith(`${prefix}_`)).toBe(true);
          expect(id.slice(prefix.length + 1)).toMatch(ID_BODY);
        },
      ),
    );
  });

  it('encodes the time in the first ten characters: 0 ms is all zeros', () => {
    const id = timeOrderedId('x', 0, fixed(new Uint8Array(16)));
    expect(id).toBe(`x_${'0'.repeat(26)}`);
  });

  it('encodes a known instant as ULID does', () => {
    // 1469918176385 ms is the ULID spec's example time, "01ARYZ6S41".
    const id = timeOrderedId('x', 1_469_918_176_385, fixed(new Uint8Array(16)));
    expect(id.slice(2, 12)).toBe('01aryz6s41');
  });

  it('sorts later ids after earlier ones, whatever their randomness (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: MAX_TIME - 1 }),
        fc.integer({ min: 1, max: 10 ** 12 }),
        bytes16,
        bytes16,
        (earlier, gap, randomA, randomB) => {
          // Arrange
          const later = Math.min(earlier + gap, MAX_TIME);

          // Act
          const first = timeOrderedId('dlv', earlier, fixed(randomA));
          const second = timeOrderedId('dlv', later, fixed(randomB));

          // Assert
          expect(first < second).toBe(true);
        },
      ),
    );
  });

  it('sorts a millisecond-by-millisecond sequence in creation order', () => {
    // Arrange
    const random = seededRandom();
    const start = Date.UTC(2025, 5, 30, 23, 59, 59, 990);

    // Act
    const ids = Array.from({ length: 40 }, (_, i) => timeOrderedId('dlv', start + i, random));

    // Assert
    expect([...ids].sort()).toEqual(ids);
  });

  it('gives different ids in the same millisecond when the randomness differs', () => {
    const random = seededRandom();
    const now = Date.UTC(2025, 0, 1);
    const ids = new Set(Array.from({ length: 100 }, () => timeOrderedId('key', now, random)));
    expect(ids.size).toBe(100);
  });
});

describe('timeOfId', () => {
  it('reads back the time an id was made at, for its prefix only', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_TIME }), bytes16, (ms, bytes) => {
        expect(timeOfId(timeOrderedId('email', ms, fixed(bytes)), 'email')).toBe(ms);
      }),
    );
    expect(timeOfId(timeOrderedId('evt', 5, fixed(new Uint8Array(16))), 'email')).toBeNull();
    expect(timeOfId('email_01', 'email')).toBeNull();
  });
});
