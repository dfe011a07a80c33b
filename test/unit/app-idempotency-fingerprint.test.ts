// Unit tests of the Idempotency-Key request fingerprint (lambdas/app/idempotency.ts): SHA-256 over the route and
// the body with object keys sorted (recomputed here), so key order never matters while route, values and array
// order do.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { requestFingerprint, stableJson } from '../../lambdas/app/idempotency';

const EMAIL = {
  from: 'Acme <billing@acme.example>',
  to: ['ada@example.com', 'bob@example.com'],
  subject: 'Invoice',
  text: 'Hello',
  tags: [{ name: 'category', value: 'invoice' }],
};

/** Reverses the key order of every object, at every depth. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([k, v]) => [k, reversedKeys(v)]),
    );
  }
  return value;
}

describe('requestFingerprint', () => {
  it('is SHA-256 hex of "route\\n" and the JSON with keys sorted at every depth', () => {
    // Arrange
    const body = { b: 1, a: [2, { d: true, c: null }], e: { g: 'x', f: 'y' } };
    const canonical = '{"a":[2,{"c":null,"d":true}],"b":1,"e":{"f":"y","g":"x"}}';

    // Act
    const fingerprint = requestFingerprint('sendEmail', body);

    // Assert
    expect(fingerprint).toBe(createHash('sha256').update(`sendEmail\n${canonical}`).digest('hex'));
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  it('ignores key order, at the top and nested (tags inside an email, emails inside a batch)', () => {
    // Arrange
    const reordered = {
      tags: [{ value: 'invoice', name: 'category' }],
      text: 'Hello',
      subject: 'Invoice',
      to: ['ada@example.com', 'bob@example.com'],
      from: 'Acme <billing@acme.example>',
    };

    // Act / Assert
    expect(requestFingerprint('sendEmail', reordered)).toBe(requestFingerprint('sendEmail', EMAIL));
    expect(requestFingerprint('sendEmailBatch', [reordered, EMAIL])).toBe(
      requestFingerprint('sendEmailBatch', [EMAIL, reordered]),
    );
  });

  it('ignores key order for any JSON body', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (body) => {
        expect(requestFingerprint('sendEmail', reversedKeys(body))).toBe(requestFingerprint('sendEmail', body));
      }),
    );
  });

  it('depends on the route: the same body on /emails and /emails/batch differs', () => {
    expect(requestFingerprint('sendEmail', EMAIL)).not.toBe(requestFingerprint('sendEmailBatch', EMAIL));
  });

  it('depends on array order: recipients or batch emails in another order are another request', () => {
    // Arrange
    const swapped = { ...EMAIL, to: ['bob@example.com', 'ada@example.com'] };
    const second = { ...EMAIL, subject: 'Receipt' };

    // Act / Assert
    expect(requestFingerprint('sendEmail', swapped)).not.toBe(requestFingerprint('sendEmail', EMAIL));
    expect(requestFingerprint('sendEmailBatch', [EMAIL, second])).not.toBe(
      requestFingerprint('sendEmailBatch', [second, EMAIL]),
    );
  });

  it.each([
    ['a changed value', { ...EMAIL, subject: 'Invoice!' }],
    ['an added field', { ...EMAIL, html: '<p>Hello</p>' }],
    ['a removed field', { from: EMAIL.from, to: EMAIL.to, subject: EMAIL.subject, tags: EMAIL.tags }],
    ['a number for a string', { ...EMAIL, subject: 1 }],
    ['a nested change', { ...EMAIL, tags: [{ name: 'category', value: 'receipt' }] }],
    ['a string that looks like the JSON of the rest', JSON.stringify(EMAIL)],
  ])('depends on the body: %s is another request', (_name, body) => {
    expect(requestFingerprint('sendEmail', body)).not.toBe(requestFingerprint('sendEmail', EMAIL));
  });

  it('keeps key and value apart: {"a":"b","c":"d"} and {"a":"b\\",\\"c\\":\\"d"} differ', () => {
    expect(requestFingerprint('r', { a: 'b', c: 'd' })).not.toBe(requestFingerprint('r', { a: 'b","c":"d' }));
  });

  it('treats a missing body like null', () => {
    expect(requestFingerprint('sendEmail', undefined)).toBe(requestFingerprint('sendEmail', null));
  });

  it('fingerprints 100,000 levels of nesting and 200,000 siblings without overflowing the stack', () => {
    // Arrange
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    const wide = Array.from({ length: 200_000 }, (_, i) => ({ [`k${i}`]: i }));

    // Act / Assert
    expect(requestFingerprint('sendEmail', deep)).toMatch(/^[0-9a-f]{64}$/);
    expect(stableJson(wide).length).toBe(JSON.stringify(wide).length);
  });
});

describe('stableJson', () => {
  it('is JSON.stringify with keys sorted, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(JSON.parse(stableJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
        expect(stableJson(reversedKeys(value))).toBe(stableJson(value));
      }),
    );
  });

  it('keeps prototype-named keys as data: {"__proto__":1} is not {}', () => {
    const proto = JSON.parse('{"__proto__":{"a":1},"constructor":2}');
    expect(stableJson(proto)).toBe('{"__proto__":{"a":1},"constructor":2}');
    expect(requestFingerprint('r', proto)).not.toBe(requestFingerprint('r', {}));
  });
});
