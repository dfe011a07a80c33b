// Unit tests of the MIME pre-scan (lambdas/domain/mime-scan.ts): parts, depth and header blocks counted as
// postal-mime would open them, whatever the chunking (a message streams in at SMTP DATA); the first limit passed
// is named; nested messages count; its time is linear in the message (900k parts in well under a second).
import fc from 'fast-check';
import PostalMime from 'postal-mime';
import { describe, expect, it } from 'vitest';
import { type MimeLimits, MimeScanner, scanMime } from '../../lambdas/domain/mime-scan';

const LIMITS: MimeLimits = { maxParts: 1000, maxDepth: 20, maxHeaderFields: 1000, maxHeaderBytes: 256 * 1024 };
const bytes = (text: string) => Buffer.from(text, 'latin1');

const multipart = (parts: number, boundary = 'b') =>
  bytes(
    [
      'From: a@sender.example',
      `Content-Type: multipart/mixed; boundary="${boundary}"`,
      '',
      'preamble',
      ...Array.from({ length: parts }, (_, i) => `--${boundary}\r\nContent-Type: text/plain\r\n\r\npart ${i}`),
      `--${boundary}--`,
      'epilogue',
      '',
    ].join('\r\n'),
  );

/** Parts nested `levels` deep: each part is itself a multipart with one part. */
const nested = (levels: number) => {
  let body = 'Content-Type: text/plain\r\n\r\nleaf\r\n';
  for (let level = levels; level >= 1; level--) {
    body = `Content-Type: multipart/mixed; boundary="n${level}"\r\n\r\n--n${level}\r\n${body}--n${level}--\r\n`;
  }
  return bytes(`Subject: deep\r\n${body}`);
};

/** Counts the parts postal-mime opened (every node below the root), by walking its tree after a parse. */
async function postalMimeParts(raw: Uint8Array): Promise<number> {
  const parser = new PostalMime() as unknown as {
    parse(raw: Uint8Array): Promise<unknown>;
    root: { childNodes: unknown[] };
  };
  await parser.parse(raw);
  const count = (node: { childNodes: unknown[] }): number =>
    node.childNodes.reduce<number>((sum, child) => sum + 1 + count(child as { childNodes: unknown[] }), 0);
  return count(parser.root);
}

describe('scanMime', () => {
  it('counts the parts and depth of a multipart, and where the message header block ends', () => {
    // Arrange
    const raw = multipart(3);

    // Act
    const scan = scanMime(raw, LIMITS);

    // Assert
    expect(scan).toMatchObject({ parts: 3, depth: 1, breach: null, bytes: raw.length });
    expect(raw.subarray(0, scan.headerEnd ?? 0).toString('latin1')).toMatch(/boundary="b"\r\n\r\n$/);
  });

  it('agrees with postal-mime on the number of parts of ordinary and odd messages', async () => {
    const messages = [
      multipart(5),
      nested(4),
      multipart(3, 'with space and (parens)'),
      // A boundary line with trailing whitespace counts (RFC 2046); one with text after it does not.
      bytes('Content-Type: multipart/mixed; boundary=x\r\n\r\n--x  \r\n\r\na\r\n--xy\r\n--x\t\r\n\r\nb\r\n--x--\r\n'),
      // Folded Content-Type, boundary quoted with an escape, comments.
      bytes(
        'Content-Type: multipart/alternative;\r\n\tboundary="q\\"q" (a comment)\r\n\r\n--q"q\r\n\r\n1\r\n--q"q\r\n\r\n2\r\n--q"q--\r\n',
      ),
      // Bare LF line endings.
      bytes('Content-Type: multipart/mixed; boundary=lf\n\n--lf\n\none\n--lf\n\ntwo\n--lf--\n'),
      // A nested message/rfc822 as it is: its parts are parts too.
      bytes(
        [
          'Content-Type: multipart/mixed; boundary=outer',
          '',
          '--outer',
          'Content-Type: message/rfc822',
          '',
          'Subject: inner',
          'Content-Type: multipart/mixed; boundary=inner',
          '',
          '--inner',
          '',
          'x',
          '--inner',
          '',
          'y',
          '--inner--',
          '--outer--',
          '',
        ].join('\r\n'),
      ),
    ];
    for (const raw of messages) {
      const scan = scanMime(raw, LIMITS);
      // postal-mime parses a nested message with a parser of its own: its parts are not in the outer tree.
      const inner = raw.includes('message/rfc822') ? 2 : 0;
      expect(scan.parts, raw.toString('latin1').slice(0, 80)).toBe((await postalMimeParts(raw)) + inner);
    }
  });

  it('gives the same counts whatever the chunks the message arrives in', () => {
    const raw = Buffer.concat([nested(6), multipart(40, 'chunky-boundary')]);
    const whole = scanMime(raw, LIMITS);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: raw.length }), { maxLength: 30 }), (cuts) => {
        const scanner = new MimeScanner(LIMITS);
        let from = 0;
        for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
          scanner.feed(raw.subarray(from, cut));
          from = cut;
        }
        scanner.feed(raw.subarray(from));
        expect(scanner.result()).toEqual(whole);
      }),
      { numRuns: 200 },
    );
  });

  it('names the first limit passed: parts, depth, header fields, header bytes (a part’s headers too)', () => {
    expect(scanMime(multipart(1001), LIMITS).breach).toEqual({ limit: 'parts', found: 1001, max: 1000 });
    expect(scanMime(multipart(1000), LIMITS).breach).toBeNull();
    expect(scanMime(nested(21), LIMITS).breach).toEqual({ limit: 'depth', found: 21, max: 20 });
    expect(scanMime(nested(20), LIMITS).breach).toBeNull();
    const manyFields = bytes(`${'X-A: 1\r\n'.repeat(1001)}\r\nbody\r\n`);
    expect(scanMime(manyFields, LIMITS).breach).toEqual({ limit: 'header_fields', found: 1001, max: 1000 });
    const bigPartHeader = bytes(
      `Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nX-Big: ${'y'.repeat(300 * 1024)}\r\n\r\nz\r\n--b--\r\n`,
    );
    expect(scanMime(bigPartHeader, LIMITS).breach).toMatchObject({ limit: 'header_bytes', max: 256 * 1024 });
  });

  it('a delimiter-looking line inside a text body, or a boundary never declared, is not a part', () => {
    const raw = bytes('Subject: hi\r\n\r\n--b\r\n-- \r\n--\r\n----------\r\n');
    expect(scanMime(raw, LIMITS)).toMatchObject({ parts: 0, depth: 0, breach: null });
  });

  it('is linear: ten times the parts take about ten times as long (a quadratic scan would take a hundred)', () => {
    // Arrange
    const message = (parts: number) =>
      Buffer.concat([
        bytes('Content-Type: multipart/mixed; boundary="b"\r\n\r\n'),
        bytes('--b\r\nContent-Type: text/x\r\n\r\nx\r\n'.repeat(parts)),
        bytes('--b--\r\n'),
      ]);
    const small = message(90_000);
    const large = message(900_000);
    const unlimited = { ...LIMITS, maxParts: Number.MAX_SAFE_INTEGER };
    const timed = (raw: Uint8Array) => {
      const started = performance.now();
      const scan = scanMime(raw, unlimited);
      return { scan, ms: performance.now() - started };
    };
    timed(small); // warm

    // Act
    const a = timed(small);
    const b = timed(large);
    // The same bytes with the limit: it stops at part 1,001.
    const stopped = (() => {
      const started = performance.now();
      const scan = scanMime(large, LIMITS);
      return { scan, ms: performance.now() - started };
    })();

    // Assert: every part counted (no early stop without a limit), in linear time.
    expect(a.scan.parts).toBe(90_000);
    expect(b.scan.parts).toBe(900_000);
    expect(b.ms / a.ms).toBeLessThan(30);
    expect(b.ms).toBeLessThan(10_000);
    expect(stopped.scan.breach).toEqual({ limit: 'parts', found: 1001, max: 1000 });
    expect(stopped.ms).toBeLessThan(b.ms / 10);
  });
});
