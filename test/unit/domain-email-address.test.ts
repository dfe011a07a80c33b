// Unit tests of email addresses (lambdas/domain/email/email.ts): which strings count as an address (`a@b.c` or
// `Name <a@b.c>`; no header injection through CR/LF), the bare lower-cased address, and the recipients of an
// email (to, cc, bcc in that order, each getting its own copy and events).
import { describe, expect, it } from 'vitest';
import { bareAddress, isEmailAddress, recipients } from '../../lambdas/domain/email/email';

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
