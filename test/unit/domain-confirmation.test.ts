// Unit tests of the contact confirmation link rule (lambdas/domain/contacts/confirmation.ts): claims name the
// contact and its creation and expire 7 days after issue; reading them is invalid without a contact, expired at
// or after the expiry or without one, valid otherwise.
import { describe, expect, it } from 'vitest';
import {
  CONFIRMATION_TTL_SECONDS,
  confirmationClaims,
  readConfirmation,
} from '../../lambdas/domain/contacts/confirmation';

const T0 = Date.UTC(2025, 5, 10, 9, 0, 0, 250);
const CONTACT = { accountId: 'acct_1', mode: 'test', id: 'ct_1', createdAt: '2025-06-10T08:00:00.000Z' };

describe('confirmation links', () => {
  it('issue claims naming account, mode, contact, its creation, and an expiry 7 days out (epoch seconds)', () => {
    expect(CONFIRMATION_TTL_SECONDS).toBe(604_800);
    expect(confirmationClaims(CONTACT, T0)).toEqual({
      a: 'acct_1',
      m: 'test',
      c: 'ct_1',
      i: CONTACT.createdAt,
      x: String(Math.floor(T0 / 1000) + 604_800),
    });
  });

  it('are valid until the expiry second, expired from it on', () => {
    const claims = confirmationClaims(CONTACT, T0);
    const expiry = Number(claims.x) * 1000;
    expect(readConfirmation(claims, expiry - 1)).toEqual({ kind: 'valid', ...CONTACT });
    expect(readConfirmation(claims, expiry)).toEqual({ kind: 'expired' });
  });

  it('are expired without an expiry or a creation (links issued before links expired), invalid without a contact', () => {
    const { x: _x, ...noExpiry } = confirmationClaims(CONTACT, T0);
    const { i: _i, ...noCreation } = confirmationClaims(CONTACT, T0);
    const { c: _c, ...noContact } = confirmationClaims(CONTACT, T0);
    expect(readConfirmation(noExpiry, T0)).toEqual({ kind: 'expired' });
    expect(readConfirmation(noCreation, T0)).toEqual({ kind: 'expired' });
    expect(readConfirmation({ ...confirmationClaims(CONTACT, T0), x: 'soon' }, T0)).toEqual({ kind: 'expired' });
    expect(readConfirmation(noContact, T0)).toEqual({ kind: 'invalid' });
    expect(readConfirmation(null, T0)).toEqual({ kind: 'invalid' });
  });
});
