// Unit tests of email addresses (lambdas/domain/email/email.ts): which strings count as an address (`a@b.c` or
// `Name <a@b.c>`; no header injection through CR/LF), the bare lower-cased address, and the recipients of an
// email (to, cc, bcc in that order, each getting its own copy and events).
import { describe, expect, it } from 'vitest';
import { addressProblem, bareAddress, isEmailAddress, recipients } from '../../lambdas/domain/email/email';

describe('isEmailAddress', () => {
  it.each([
    'ada@example.com',
    'Ada.Lovelace+billing@mail.example.co.uk',
    'Ada Lovelace <ada@example.com>',
    '"Lovelace, Ada" <ada@example.com>',
    '<ada@example.com>',
    'Acme Billing <billing@acme.example>',
    '  ada@example.com  ',
    'bounce+1@simulator.amazonses.com',
  ])('accepts %j', (value) => {
    expect(isEmailAddress(value)).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['no @', 'ada.example.com'],
    ['no domain dot', 'ada@localhost'],
    ['two @', 'ada@@example.com'],
    ['@ in the domain', 'ada@exa@mple.com'],
    ['a space in the address', 'ada lovelace@example.com'],
    ['a name without brackets', 'Ada ada@example.com'],
    ['an unclosed bracket', 'Ada <ada@example.com'],
    ['a closing bracket only', 'ada@example.com>'],
    ['text after the bracket', 'Ada <ada@example.com> x'],
    ['nested brackets', 'Ada <<ada@example.com>>'],
    ['@ in the display name', 'ada@home <ada@example.com>'],
    ['CRLF header injection in the display name', 'Ada\r\nBcc: eve@example.com <ada@example.com>'],
    ['LF in the display name', 'Ada\nX <ada@example.com>'],
    ['CRLF inside the address', 'ada@example.com\r\nBcc: eve@example.com'],
    ['a list', 'ada@example.com, bob@example.com'],
  ])('refuses %s', (_name, value) => {
    expect(isEmailAddress(value)).toBe(false);
  });
});

describe('addressProblem: addresses as SES v2 takes them', () => {
  it.each([
    'info@bücher.example',
    'Bücher Ünïcödé <info@bücher.example>',
    "o'brien+tag@example.com",
    '!#$%&*+/=?^_`{|}~-@example.com',
    'a@xn--bcher-kva.example',
    'a@b.co',
    `${'l'.repeat(64)}@example.com`,
    `Ada <${'a'.repeat(64)}@${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(50)}.com>`,
  ])('accepts %j', (value) => {
    expect(addressProblem(value)).toBeNull();
  });

  it.each([
    ['NUL in the address', 'ada\u0000@example.com', /Control characters/],
    ['NUL in the display name', 'Ada\u0000 <ada@example.com>', /Control characters/],
    ['a bell in the display name', 'Ada\u0007 <ada@example.com>', /Control characters/],
    ['a C1 control in the display name', 'Ada\u0085 <ada@example.com>', /Control characters/],
    ['a lone surrogate in the display name', 'Ada \ud800 <ada@example.com>', /surrogate/],
    ['a comma in the domain', 'ada@exa,mple.com', /domain name/],
    ['a domain label starting with a hyphen', 'ada@-example.com', /domain name/],
    ['a domain label of 64 characters', `ada@${'d'.repeat(64)}.com`, /domain name/],
    ['a numeric top-level label', 'ada@example.123', /domain name/],
    ['an empty domain label', 'ada@example..com', /domain name/],
    ['a trailing dot in the domain', 'ada@example.com.', /domain name/],
    ['an IP literal', 'ada@[127.0.0.1]', /domain name/],
    ['a non-ASCII local part', 'adé@example.com', /before @/],
    ['a quoted local part', '"ada lovelace"@example.com', /before @/],
    ['a leading dot', '.ada@example.com', /before @/],
    ['two dots in a row', 'a..da@example.com', /before @/],
    ['a 65-character local part', `${'l'.repeat(65)}@example.com`, /before @/],
    [
      'an address of 255 characters',
      `${'a'.repeat(64)}@${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(59)}.com`,
      /254/,
    ],
    ['a display name of 257 characters', `${'n'.repeat(257)} <ada@example.com>`, /256/],
    ['no @', 'ada.example.com', /@/],
  ])('refuses %s', (_name, value, reason) => {
    expect(addressProblem(value)).toMatch(reason);
  });
});

describe('bareAddress', () => {
  it.each([
    ['ada@example.com', 'ada@example.com'],
    ['Ada@Example.COM', 'ada@example.com'],
    ['Ada Lovelace <Ada@Example.com>', 'ada@example.com'],
    ['<ada@example.com>', 'ada@example.com'],
    ['  Ada@Example.com ', 'ada@example.com'],
    ['Ada < Ada@Example.com >', 'ada@example.com'],
    ['Bounce <BOUNCE+2@simulator.amazonses.com>', 'bounce+2@simulator.amazonses.com'],
  ])('%j → %j', (value, bare) => {
    expect(bareAddress(value)).toBe(bare);
  });
});

describe('recipients', () => {
  it('lists to, then cc, then bcc, as given (display names kept, repeats kept)', () => {
    // Act
    const all = recipients({
      to: ['Ada <ada@example.com>', 'bob@example.com'],
      cc: ['carol@example.com'],
      bcc: ['audit@acme.example', 'bob@example.com'],
    });

    // Assert
    expect(all).toEqual([
      'Ada <ada@example.com>',
      'bob@example.com',
      'carol@example.com',
      'audit@acme.example',
      'bob@example.com',
    ]);
  });

  it('is empty for no recipients, and does not share the input arrays', () => {
    // Arrange
    const email = { to: ['ada@example.com'], cc: [], bcc: [] };

    // Act
    const all = recipients(email);
    all.push('eve@example.com');

    // Assert
    expect(recipients({ to: [], cc: [], bcc: [] })).toEqual([]);
    expect(email.to).toEqual(['ada@example.com']);
  });
});
