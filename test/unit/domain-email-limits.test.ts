// Unit tests of the input limits (lambdas/domain/email/limits.ts), which mirror SES v2 SendEmail: header names
// ^[!-9;-@A-~]{1,126}$ and not restricted (case-insensitive, X-SES-* included), values 1 to 870 printable ASCII,
// at most 50 headers, prototype-named headers kept as plain data, no control characters or lone surrogates in
// text, and the stored size measured on the JSON of the record.
import { describe, expect, it } from 'vitest';
import {
  EMAIL_LIMITS,
  headerNameProblem,
  headerValueProblem,
  parseHeaders,
  RESTRICTED_HEADERS,
  storedBytes,
  unsafeTextProblem,
} from '../../lambdas/domain/email/limits';

describe('headerNameProblem', () => {
  it.each(['X-Campaign', 'x', 'X-'.padEnd(126, 'n'), '!#$%&*+.^_`|~', 'X;@[]', 'constructor', '__proto__'])(
    'accepts %j',
    (name) => {
      expect(headerNameProblem(name)).toBeNull();
    },
  );

  it.each([
    ['empty', ''],
    ['127 characters', 'X-'.padEnd(127, 'n')],
    ['5,000 characters', 'X-'.padEnd(5000, 'n')],
    ['a colon', 'X-A:B'],
    ['a space', 'X A'],
    ['a tab', 'X\tA'],
    ['CR/LF', 'X-A\r\nBcc'],
    ['NUL', 'X\u0000'],
    ['DEL', 'X\u007f'],
    ['non-ASCII', 'X-Café'],
  ])('refuses %s', (_name, name) => {
    expect(headerNameProblem(name)).toMatch(/printable ASCII/);
  });

  it('refuses every restricted name in any case, and any X-SES- header', () => {
    const names = [
      ...RESTRICTED_HEADERS,
      ...RESTRICTED_HEADERS.map((n) => n.toUpperCase()),
      ...RESTRICTED_HEADERS.map((n) => n.toLowerCase()),
      'X-SES-CONFIGURATION-SET',
      'x-ses-message-tags',
      'X-Ses-Source-Arn',
    ];
    for (const name of names) expect(headerNameProblem(name), name).toMatch(/set by Sendflow or SES/);
  });

  it('restricts what SES sets or refuses twice, and our List-Unsubscribe pair', () => {
    expect([...RESTRICTED_HEADERS].sort()).toEqual(
      [
        'From',
        'To',
        'Cc',
        'Bcc',
        'Subject',
        'Reply-To',
        'Return-Path',
        'Sender',
        'Date',
        'Message-ID',
        'MIME-Version',
        'Content-Type',
        'Content-Transfer-Encoding',
        'DKIM-Signature',
        'List-Unsubscribe',
        'List-Unsubscribe-Post',
      ].sort(),
    );
    expect(headerNameProblem('X-Sesame')).toBeNull();
    expect(headerNameProblem('List-Id')).toBeNull();
  });
});

describe('headerValueProblem', () => {
  it.each(['v', ' spaced out ', 'v'.repeat(870), '<https://example.com/u>, <mailto:u@example.com>'])(
    'accepts %j',
    (value) => {
      expect(headerValueProblem(value)).toBeNull();
    },
  );

  it.each([
    ['empty', ''],
    ['871 characters', 'v'.repeat(871)],
    ['CR/LF', 'a\r\nBcc: eve@example.com'],
    ['LF', 'a\nb'],
    ['a tab', 'a\tb'],
    ['NUL', 'a\u0000'],
    ['non-ASCII', 'café'],
    ['a number', 1],
    ['null', null],
    ['an object', { a: 1 }],
  ])('refuses %s', (_name, value) => {
    expect(headerValueProblem(value)).not.toBeNull();
  });
});

describe('parseHeaders', () => {
  it('keeps prototype-named headers as own data, in a record without a prototype', () => {
    // Arrange: JSON.parse makes "__proto__" an own property, as a request body would.
    const input = JSON.parse('{"__proto__":"a","constructor":"b","toString":"c","hasOwnProperty":"d"}');

    // Act
    const { headers, problems } = parseHeaders(input);

    // Assert
    expect(problems).toEqual([]);
    expect(Object.getPrototypeOf(headers)).toBeNull();
    expect(Object.entries(headers)).toEqual([
      ['__proto__', 'a'],
      ['constructor', 'b'],
      ['toString', 'c'],
      ['hasOwnProperty', 'd'],
    ]);
    expect(({} as Record<string, unknown>).constructor).toBe(Object);
  });

  it('takes exactly 50 headers and refuses 51 as a whole', () => {
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`X-${i}`, 'v']));
    expect(parseHeaders(fifty).problems).toEqual([]);
    const problems = parseHeaders({ ...fifty, 'X-50': 'v' }).problems;
    expect(problems).toEqual([{ name: null, message: `must hold at most ${EMAIL_LIMITS.headers} headers.` }]);
  });

  it('names each bad header: by name when the name is well formed, quoted and cut short when not', () => {
    // Act
    const { headers, problems } = parseHeaders({
      'X-Good': 'ok',
      From: 'eve@example.com',
      'X-Bad-Value': 'a\r\nb',
      [`X-${'n'.repeat(4998)}`]: 'v',
    });

    // Assert
    expect(Object.entries(headers)).toEqual([['X-Good', 'ok']]);
    expect(problems.map((p) => p.name)).toEqual(['From', 'X-Bad-Value', null]);
    expect(problems[2]?.message).toMatch(/^"X-n+"… \(5000 characters\): Header names are 1 to 126/);
    expect(problems[2]?.message.length).toBeLessThan(300);
  });

  it.each([
    ['an array', ['X-A', 'v']],
    ['a string', 'X-A: v'],
    ['null', null],
  ])('refuses %s', (_name, input) => {
    expect(parseHeaders(input).problems).toEqual([{ name: null, message: expect.stringMatching(/object/) }]);
  });
});

describe('unsafeTextProblem', () => {
  it.each(['Hello', 'Ünïcödé ✓ 😀', '"quoted" <angle> (paren)'])('accepts %j', (text) => {
    expect(unsafeTextProblem(text)).toBeNull();
  });

  it.each([
    ['CR/LF', 'Hi\r\nBcc: eve@example.com'],
    ['NUL', 'Hi\u0000'],
    ['a tab', 'Hi\tthere'],
    ['DEL', 'Hi\u007f'],
    ['a C1 control', 'Hi\u0085'],
    ['a lone high surrogate', 'Hi \ud800'],
    ['a lone low surrogate', '\udc00 Hi'],
  ])('refuses %s', (_name, text) => {
    expect(unsafeTextProblem(text)).not.toBeNull();
  });
});

describe('storedBytes', () => {
  it('is the UTF-8 length of the JSON of the record', () => {
    const record = { subject: 'Ünï', headers: { 'X-A': 'v' } };
    expect(storedBytes(record)).toBe(Buffer.byteLength(JSON.stringify(record), 'utf8'));
    expect(storedBytes({ subject: 'é' })).toBe('{"subject":"é"}'.length + 1);
  });

  it('leaves far more than a third of a DynamoDB item free', () => {
    expect(EMAIL_LIMITS.storedBytes).toBe(256 * 1024);
    expect(EMAIL_LIMITS.storedBytes).toBeLessThan((400 * 1024 * 2) / 3);
  });
});
