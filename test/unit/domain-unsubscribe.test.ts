// Unit tests of the one-click unsubscribe rules (lambdas/domain/email/unsubscribe.ts, RFC 8058): the two headers
// every copy carries, and which POST bodies count as a one-click unsubscribe (form-encoded, or a multipart field
// with CRLF or bare LF line ends); anything else, including the wrong value or an empty body, does not.
import { describe, expect, it } from 'vitest';
import {
  ATTRIBUTION_WINDOW_MS,
  isOneClickBody,
  listUnsubscribeHeaders,
  ONE_CLICK,
} from '../../lambdas/domain/email/unsubscribe';

const multipart = (value: string, eol: string, extraHeaders: string[] = [], name = 'List-Unsubscribe') =>
  ['--b0undary', `Content-Disposition: form-data; name="${name}"`, ...extraHeaders, '', value, '--b0undary--', ''].join(
    eol,
  );

describe('listUnsubscribeHeaders', () => {
  it('gives List-Unsubscribe with the URL in angle brackets and List-Unsubscribe-Post for one click', () => {
    // Act
    const headers = listUnsubscribeHeaders('https://api.sendflow.test/v1/unsubscribe/abc.def');

    // Assert
    expect(headers).toEqual({
      'List-Unsubscribe': '<https://api.sendflow.test/v1/unsubscribe/abc.def>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
    expect(ONE_CLICK).toBe('List-Unsubscribe=One-Click');
  });

  it('attributes an unsubscribe to emails sent within 30 days', () => {
    expect(ATTRIBUTION_WINDOW_MS).toBe(30 * 24 * 3600 * 1000);
  });
});

describe('isOneClickBody', () => {
  it.each([
    ['the exact form-encoded body', 'List-Unsubscribe=One-Click'],
    ['form-encoded with a trailing CRLF', 'List-Unsubscribe=One-Click\r\n'],
    ['form-encoded with extra fields after', 'List-Unsubscribe=One-Click&utm_source=gmail'],
    ['form-encoded with extra fields before', 'source=mail&List-Unsubscribe=One-Click'],
    ['form-encoded with percent-encoding', 'List%2DUnsubscribe=One%2DClick'],
    ['multipart with CRLF line ends', multipart('One-Click', '\r\n')],
    ['multipart with bare LF line ends', multipart('One-Click', '\n')],
    ['multipart with a Content-Type line in the part', multipart('One-Click', '\r\n', ['Content-Type: text/plain'])],
  ])('accepts %s', (_name, body) => {
    expect(isOneClickBody(body)).toBe(true);
  });

  it('accepts a multipart body whose one-click field follows another field', () => {
    // Arrange
    const body = [
      '--xyz',
      'Content-Disposition: form-data; name="source"',
      '',
      'mail',
      '--xyz',
      'Content-Disposition: form-data; name="List-Unsubscribe"',
      '',
      'One-Click',
      '--xyz--',
      '',
    ].join('\r\n');

    // Act / Assert
    expect(isOneClickBody(body)).toBe(true);
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['empty', ''],
    ['whitespace', '  \r\n'],
    ['the field without a value', 'List-Unsubscribe='],
    ['the wrong value', 'List-Unsubscribe=Two-Clicks'],
    ['the value in another case', 'List-Unsubscribe=one-click'],
    ['a value with a suffix', 'List-Unsubscribe=One-Click-Please'],
    ['another field name', 'Unsubscribe=One-Click'],
    ['the header value as a field name', 'List-Unsubscribe-Post=One-Click'],
    ['JSON', '{"List-Unsubscribe":"One-Click"}'],
    ['multipart with the wrong value', multipart('Yes', '\r\n')],
    ['multipart with a value that has a suffix', multipart('One-Click-Please', '\r\n')],
    ['multipart with another field name', multipart('One-Click', '\r\n', [], 'List-Unsubscribe-Post')],
    ['multipart with an empty value', multipart('', '\r\n')],
  ])('refuses %s', (_name, body) => {
    expect(isOneClickBody(body)).toBe(false);
  });
});
