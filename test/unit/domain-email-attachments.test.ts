// The attachment rules (domain/email/attachments.ts): filenames safe in a MIME header and on disk, SES's refused
// file types, Content-IDs as HTML references them, strict base64, and types derived from the name.
import { describe, expect, it } from 'vitest';
import {
  ATTACHMENT_LIMITS,
  contentIdProblem,
  contentTypeFor,
  contentTypeProblem,
  decodeBase64,
  extensionOf,
  filenameProblem,
  SES_BLOCKED_EXTENSIONS,
} from '../../lambdas/domain/email/attachments';

describe('filenames', () => {
  it.each(['invoice.pdf', 'Résumé 2026.docx', '日本語.txt', 'README', `${'a'.repeat(251)}.pdf`, 'archive.tar.gz'])(
    'accepts %j',
    (name) => expect(filenameProblem(name)).toBeNull(),
  );

  it.each([
    ['', /required/],
    ['   ', /required/],
    ['a'.repeat(256), /at most 255/],
    ['../etc/passwd', /path separator/],
    ['dir\\file.txt', /path separator/],
    ['a\r\nContent-Type: text/html', /control/],
    ['nul\u0000.txt', /control/],
    ['..', /path separator|cannot be/],
    ['\ud800.txt', /surrogate/],
    // Bidi and other format characters (\p{Cf}): "invoice\u202Efdp.exe" reads as "invoiceexe.pdf".
    ['invoice\u202egpj.svg', /format characters/],
    ['a\u202ab.txt', /format characters/],
    ['a\u2066b\u2069.txt', /format characters/],
    ['a\u200eb.txt', /format characters/],
    ['a\u200fb.txt', /format characters/],
    ['a\u061cb.txt', /format characters/],
    ['zero\u200bwidth.txt', /format characters/],
    ['bom\ufeff.txt', /format characters/],
  ])('refuses %j', (name, reason) => expect(filenameProblem(name)).toMatch(reason));

  it.each(['setup.exe', 'run.BAT', 'app.js', 'x.vbs', 'macro.ps1', '.exe', 'trailing.exe. ', 'a.pdf.scr'])(
    'refuses %j: a type SES refuses',
    (name) => expect(filenameProblem(name)).toMatch(/cannot be sent.*Amazon SES/),
  );

  // Windows opens what is before an NTFS stream suffix ("x.exe::$DATA" is x.exe's default stream) and drops
  // trailing dots and spaces: each names an executable that SES and a receiver's Windows would treat as one.
  it.each([
    'x.exe::$DATA',
    'x.EXE::$data',
    'x.exe:stream',
    'x.exe:stream:$DATA',
    'x.exe:',
    'x.exe.',
    'x.exe ',
    'x.exe. . ',
    'x.exe .::$DATA',
    'x.exe.::$DATA',
    'x.pdf:y.exe',
    'report.pdf.js::$DATA',
  ])('refuses %j: an NTFS stream suffix or trailing dots and spaces hide a refused type', (name) =>
    expect(filenameProblem(name)).toMatch(/cannot be sent.*Amazon SES/),
  );

  it.each(['Meeting 10:30.pdf', 'notes:exe', 'a:b.txt', 'x.exe.txt', 'x.pdf::$DATA'])(
    'accepts %j: no refused type before or after a colon',
    (name) => expect(filenameProblem(name)).toBeNull(),
  );

  it('holds SES’s whole published list, lower-cased', () => {
    expect(SES_BLOCKED_EXTENSIONS.size).toBe(90);
    for (const ext of ['ade', 'exe', 'js', 'jse', 'msi', 'vbs', 'wsh', 'xnk', 'ps2xml', 'vsmacros']) {
      expect(SES_BLOCKED_EXTENSIONS.has(ext)).toBe(true);
    }
    expect(SES_BLOCKED_EXTENSIONS.has('pdf')).toBe(false);
    expect(SES_BLOCKED_EXTENSIONS.has('zip')).toBe(false);
  });

  it('reads the extension after the last dot', () => {
    expect([extensionOf('a.tar.GZ'), extensionOf('README'), extensionOf('.exe'), extensionOf('x.')]).toEqual([
      'gz',
      '',
      'exe',
      '',
    ]);
  });
});

describe('content ids and types', () => {
  it.each(['logo', 'logo@acme.example', 'img-1.png'])('accepts the content id %j', (id) =>
    expect(contentIdProblem(id)).toBeNull(),
  );
  it.each(['', 'a b', '<logo>', 'a"b', 'x'.repeat(ATTACHMENT_LIMITS.contentId + 1), 'a\nb'])(
    'refuses the content id %j',
    (id) => expect(contentIdProblem(id)).not.toBeNull(),
  );
  it.each(['application/pdf', 'image/svg+xml', 'application/vnd.ms-excel'])('accepts the type %j', (t) =>
    expect(contentTypeProblem(t)).toBeNull(),
  );
  it.each(['pdf', 'text/html; charset=utf-8', 'a/b\r\nX: y', ''])('refuses the type %j', (t) =>
    expect(contentTypeProblem(t)).not.toBeNull(),
  );
  it('derives a type from the name, octet-stream when unknown', () => {
    expect([
      contentTypeFor('a.PDF'),
      contentTypeFor('b.png'),
      contentTypeFor('c.unknown'),
      contentTypeFor('d'),
    ]).toEqual(['application/pdf', 'image/png', 'application/octet-stream', 'application/octet-stream']);
  });
});

describe('base64', () => {
  it('decodes standard base64, wrapped as MIME wraps it', () => {
    expect(decodeBase64('aGVs\r\nbG8=')).toEqual(new Uint8Array(Buffer.from('hello')));
    expect(decodeBase64('')).toEqual(new Uint8Array(0));
  });
  it.each(['not base64!', 'aGVsbG8===', 'a', '-_-_'])('refuses %j', (text) => expect(decodeBase64(text)).toBeNull());
});
