// The API request log's redaction and bounding rule (lambdas/domain/request-log-bodies.ts): a denylist of field
// names and a pattern check of every value remove secrets; email bodies and attachment content are cut; a body is
// fitted into its byte budget as valid JSON, whatever its size.
import { describe, expect, it } from 'vitest';
import { REDACTED, redactQuery, redactText, redactValue, storedBody } from '../../lambdas/domain/request-log-bodies';

const apiKey = 'sf_test_Z9x8Y7w6V5u4T3s2R1q0P9o8N7m6L5k4';
const whsec = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('redactValue', () => {
  it('replaces the value of every denylisted field, whatever its casing, separator or depth', () => {
    const body = {
      name: 'ci',
      key: 'anything',
      token: 'anything',
      signing_secret: 'anything',
      Password: 'hunter2',
      smtpPassword: 'hunter2',
      'api-key': 'x',
      apiKey: 'x',
      client_secret: 'x',
      access_token: 'x',
      headers: { Authorization: 'Basic dXNlcjpwYXNz', 'X-Custom': 'kept' },
      nested: [{ secret: { deep: 'x' } }],
    };

    expect(redactValue(body)).toEqual({
      name: 'ci',
      key: REDACTED,
      token: REDACTED,
      signing_secret: REDACTED,
      Password: REDACTED,
      smtpPassword: REDACTED,
      'api-key': REDACTED,
      apiKey: REDACTED,
      client_secret: REDACTED,
      access_token: REDACTED,
      headers: { Authorization: REDACTED, 'X-Custom': 'kept' },
      nested: [{ secret: REDACTED }],
    });
  });

  it('keeps fields that only resemble the denylist (ids, counts, idempotency keys)', () => {
    const body = { api_key_id: 'key_1', tokens_used: 3, idempotency_key: 'k-1', keyword: 'x', secret_rotated: true };

    expect(redactValue(body)).toEqual(body);
  });

  it('removes secret-looking values under any field name: keys, signing secrets, bearer tokens, JWTs, signed URLs', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
    const body = {
      description: `rotate ${whsec} and ${apiKey} soon`,
      note: `Bearer abc.def-123 and ${jwt}`,
      live: 'sf_live_AbCdEfGhIjKlMnOpQrStUvWx',
      aws: 'AKIAIOSFODNN7EXAMPLE',
      download_url: 'https://s3.example.com/a?X-Amz-Credential=AKIA%2F1&X-Amz-Signature=deadbeef&x=1',
      link: 'https://app.example.com/dashboard/sign-in?token=abcdef123456',
      pem: '-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----',
      list: [whsec],
    };

    const out = JSON.stringify(redactValue(body));

    for (const secret of [
      whsec,
      apiKey,
      'abc.def-123',
      jwt,
      'sf_live_',
      'AKIAIOSFODNN7EXAMPLE',
      'deadbeef',
      'abcdef123456',
      'MIIB',
    ])
      expect(out).not.toContain(secret);
    expect(out).toContain('rotate [redacted] and [redacted] soon');
    expect(out).toContain('&x=1');
  });

  it('cuts email bodies and removes attachment content, saying how much', () => {
    const html = `<p>${'a'.repeat(5_000)}</p>`;
    const body = {
      to: ['a@example.com'],
      html,
      text: 'short',
      attachments: [{ filename: 'a.pdf', content: 'QUJD'.repeat(1_000) }],
    };

    const out = redactValue(body) as typeof body;

    expect(out.to).toEqual(['a@example.com']);
    expect(out.html.length).toBeLessThan(200);
    expect(out.html).toContain(`(${html.length - 100} more characters)`);
    expect(out.text).toBe('short');
    expect(out.attachments[0]).toEqual({ filename: 'a.pdf', content: '[4000 characters removed]' });
  });

  it('replaces what is nested deeper than it keeps, however deep a body goes', () => {
    let deep: unknown = { token: 'x' };
    for (let i = 0; i < 50_000; i++) deep = [deep];

    expect(JSON.stringify(redactValue(deep))).toContain('[nested too deep]');
  });
});

describe('redactText and redactQuery', () => {
  it('removes secret-looking values from text that is not JSON', () => {
    expect(redactText(`{"key": "${apiKey}"`)).toBe('{"key": "[redacted]"');
  });

  it('removes denylisted query parameters and secret-looking values, keeping the rest', () => {
    expect(redactQuery({ limit: '10', token: 'abc', q: whsec })).toBe('limit=10&token=%5Bredacted%5D&q=%5Bredacted%5D');
    expect(redactQuery({})).toBeUndefined();
  });
});

describe('storedBody', () => {
  it('stores a small JSON body whole, redacted, as JSON text', () => {
    expect(storedBody({ name: 'ci', key: apiKey }, 500)).toBe('{"name":"ci","key":"[redacted]"}');
  });

  it('is absent for no body', () => {
    expect(storedBody(undefined, 500)).toBeUndefined();
    expect(storedBody(null, 500)).toBeUndefined();
    expect(storedBody('', 500)).toBeUndefined();
  });

  it('fits a big body into its budget as valid JSON, cutting long strings and long lists', () => {
    const big = {
      object: 'list',
      data: Array.from({ length: 100 }, (_, i) => ({ id: `em_${i}`, subject: 'x'.repeat(300), tags: ['a', 'b'] })),
    };

    for (const budget of [4_000, 600, 200, 60]) {
      const stored = storedBody(big, budget) as string;
      expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(budget);
      expect(() => JSON.parse(stored)).not.toThrow();
    }
    expect(storedBody(big, 4_000)).toContain('more items');
  });

  it('keeps a body that is not JSON as redacted text, cut to its budget', () => {
    const stored = storedBody(`not json ${apiKey} ${'z'.repeat(1_000)}`, 300) as string;

    expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(300);
    expect(JSON.parse(stored)).toMatch(/^not json \[redacted\] z+/);
  });
});
