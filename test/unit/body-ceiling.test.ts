// The AWS body ceiling: the WAF's "Content-Length above N" regex against a table of values, and the arithmetic
// that keeps the Lambda proxy event around any valid JSON body of that size under Lambda's 6 MB payload limit.
import { describe, expect, it } from 'vitest';
import {
  EVENT_OVERHEAD_BYTES,
  JSON_ESCAPE_FACTOR,
  LAMBDA_SYNC_PAYLOAD_BYTES,
  MAX_SEND_BODY_BYTES,
} from '../../lambdas/domain/body-ceiling';
import { integerAbovePattern } from '../../lib/constructs/content-length';

describe('integerAbovePattern', () => {
  const above = new RegExp(integerAbovePattern(3_000_000));

  it.each([
    ['3000001', true],
    ['3000010', true],
    ['3000100', true],
    ['3001000', true],
    ['3010000', true],
    ['3100000', true],
    ['3999999', true],
    ['4000000', true],
    ['5242881', true],
    ['9999999', true],
    ['10000000', true],
    ['10485760', true],
    ['99999999999999999999', true],
    ['0003000001', true],
    [' 3000001 ', true],
    ['3000001, 3000001', true],
    ['100, 3000001', true],
    ['3000000', false],
    ['2999999', false],
    ['0003000000', false],
    ['300000', false],
    ['1000000', false],
    ['0', false],
    ['1', false],
    ['', false],
    ['000000000000', false],
    ['2999999, 3000000', false],
  ])('Content-Length %j above 3,000,000: %s', (value, expected) => {
    expect(above.test(value)).toBe(expected);
  });

  it('agrees with numeric comparison for every limit shape and random values', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (const limit of [0, 1, 9, 10, 99, 100, 909, 1_048_576, 2_999_999, 3_000_000, 5_242_880, 9_999_999]) {
      const pattern = new RegExp(integerAbovePattern(limit));
      const near = [limit - 11, limit - 1, limit, limit + 1, limit + 10, limit * 10, Math.floor(limit / 10)];
      const randoms = Array.from({ length: 2000 }, () => Math.floor(random() * (limit * 3 + 20)));
      for (const value of [...near, ...randoms].filter((v) => v >= 0)) {
        expect(pattern.test(String(value)), `${value} vs ${limit}`).toBe(value > limit);
        expect(pattern.test(`00${value}`), `00${value} vs ${limit}`).toBe(value > limit);
      }
    }
  });

  it('refuses a limit that is not a non-negative integer', () => {
    expect(() => integerAbovePattern(-1)).toThrow();
    expect(() => integerAbovePattern(1.5)).toThrow();
  });
});

describe('MAX_SEND_BODY_BYTES', () => {
  it('leaves room for escaping and the event around the body within the Lambda payload limit', () => {
    expect(MAX_SEND_BODY_BYTES * JSON_ESCAPE_FACTOR + EVENT_OVERHEAD_BYTES).toBeLessThanOrEqual(
      LAMBDA_SYNC_PAYLOAD_BYTES,
    );
  });

  /** A REST proxy event as API Gateway builds it, with headers at API Gateway's 10,240-byte cap. */
  const eventBytes = (body: string) => {
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Authorization: `Bearer sf_live_${'a'.repeat(128)}`,
      'X-Padding': '"'.repeat(9_000),
    };
    const multiValueHeaders = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]]));
    const event = {
      resource: '/emails',
      path: '/emails',
      httpMethod: 'POST',
      headers,
      multiValueHeaders,
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      pathParameters: null,
      stageVariables: null,
      requestContext: { padding: 'x'.repeat(4_096) },
      body,
      isBase64Encoded: false,
    };
    return Buffer.byteLength(JSON.stringify(event));
  };
  const fill = (prefix: string, unit: string, suffix: string) => {
    const room = MAX_SEND_BODY_BYTES - Buffer.byteLength(prefix + suffix);
    return prefix + unit.repeat(Math.floor(room / Buffer.byteLength(unit))) + suffix;
  };

  it.each([
    ['escaped quotes in a string', fill('{"html":"', '\\"', '"}')],
    ['escaped backslashes in a string', fill('{"html":"', '\\\\', '"}')],
    ['newline whitespace', fill('{', '\n', '}')],
    ['tab and CR whitespace', fill('{', '\t\r', '}')],
    ['base64 attachment content', fill('{"attachments":[{"filename":"a","content":"', 'QUJD', '"}]}')],
    ['non-ASCII text', fill('{"text":"', 'é漢😀', '"}')],
  ])('keeps the event of a %s body at the ceiling under 6 MiB', (_name, body) => {
    expect(() => JSON.parse(body)).not.toThrow();
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_SEND_BODY_BYTES);
    expect(Buffer.byteLength(body)).toBeGreaterThan(MAX_SEND_BODY_BYTES - 8);
    expect(eventBytes(body)).toBeLessThanOrEqual(LAMBDA_SYNC_PAYLOAD_BYTES);
  });

  it('would not hold at the former 4 MiB default: a quote-heavy body overflows the event', () => {
    const body = `{"html":"${'\\"'.repeat(2 * 1024 * 1024 - 6)}"}`;
    expect(eventBytes(body)).toBeGreaterThan(LAMBDA_SYNC_PAYLOAD_BYTES);
  });
});
