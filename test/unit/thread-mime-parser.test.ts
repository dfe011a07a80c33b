// The time-boxed parse thread (lambdas/adapters/mime/thread-mime-parser.ts) with its real worker: a parse in the
// thread gives what the in-thread parse gives (attachment bytes included); a parse past its budget has its thread
// terminated and ends with the header fields and a time-out, while this thread's event loop keeps turning; the
// next parse gets a fresh thread; a message over a limit never reaches the parser whole.
import { afterAll, describe, expect, it } from 'vitest';
import { InThreadMimeParser } from '../../lambdas/adapters/mime/bounded-parse';
import { parseThreadModule } from '../../lambdas/adapters/mime/parse-thread-module';
import { MimeParserClosedError, ThreadMimeParser } from '../../lambdas/adapters/mime/thread-mime-parser';

const parser = new ThreadMimeParser({ ...parseThreadModule(), budgetMs: 1_000, headersBudgetMs: 5_000 });
afterAll(() => parser.close());

const PDF = Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0x10, 0x80]);
const ordinary = Buffer.from(
  [
    'From: Ada <ada@sender.example>',
    'To: team@acme.example',
    'Subject: Report',
    'Content-Type: multipart/mixed; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain',
    '',
    'Hello',
    '--b',
    'Content-Type: application/pdf; name="r.pdf"',
    'Content-Disposition: attachment; filename="r.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    PDF.toString('base64'),
    '--b--',
    '',
  ].join('\r\n'),
);

const parts = (n: number, subject: string) =>
  `From: a@x.example\r\nSubject: ${subject}\r\nContent-Type: multipart/mixed; boundary="p"\r\n\r\n${'--p\r\nContent-Type: text/x\r\n\r\nx\r\n'.repeat(n)}--p--\r\n`;

/** Within every limit the scan checks: the 16,000 parts are inside a base64 message/rfc822 only the parser opens. */
const wrapped = Buffer.from(
  [
    'From: Eve <eve@x.example>',
    'Subject: wrapped',
    'Content-Type: multipart/mixed; boundary="w"',
    '',
    '--w',
    'Content-Type: message/rfc822',
    'Content-Disposition: inline',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from(parts(16_000, 'inner')).toString('base64'),
    '--w--',
    '',
  ].join('\r\n'),
);

/** The longest this thread's event loop went without a turn while `work` ran. */
async function loopStall<T>(work: Promise<T>): Promise<{ result: T; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 10);
  try {
    return { result: await work, stallMs };
  } finally {
    clearInterval(timer);
  }
}

describe('ThreadMimeParser', () => {
  it('parses in its thread what the in-thread parse gives, attachment bytes included', async () => {
    const [threaded, local] = await Promise.all([parser.parse(ordinary), new InThreadMimeParser().parse(ordinary)]);

    expect(threaded.scope).toBe('whole');
    expect(threaded.problem).toBeNull();
    expect(threaded.email.subject).toBe('Report');
    expect(threaded.email.text).toBe(local.email.text);
    expect(threaded.email.attachments).toHaveLength(1);
    expect(Buffer.from(threaded.email.attachments[0]?.content as ArrayBuffer).equals(PDF)).toBe(true);
  }, 60_000);

  it('a parse past its budget is stopped: header fields and a time-out, and this event loop never waits on it', async () => {
    // Arrange: the thread is started (its start is not the parse's budget).
    await parser.parse(ordinary);
    const started = performance.now();

    // Act
    const { result, stallMs } = await loopStall(parser.parse(wrapped));

    // Assert: the parser alone would take 11-30 s; the thread is cut at 1 s, then the header block is read.
    expect(result).toMatchObject({ scope: 'headers', problem: { kind: 'timeout', budgetMs: 1_000 } });
    expect(result.email.subject).toBe('wrapped');
    expect(result.email.attachments).toEqual([]);
    expect(performance.now() - started).toBeLessThan(8_000);
    expect(stallMs).toBeLessThan(250);
  }, 60_000);

  it('the next parse after a time-out gets a fresh thread and parses whole', async () => {
    const after = await parser.parse(ordinary);

    expect(after).toMatchObject({ scope: 'whole', problem: null });
    expect(after.email.subject).toBe('Report');
  }, 60_000);

  it('a message over the parts limit is read for its header block only, quickly', async () => {
    const started = performance.now();
    const over = await parser.parse(Buffer.from(parts(900_000, 'huge')));

    expect(over).toMatchObject({
      scope: 'headers',
      problem: { kind: 'limit', breach: { limit: 'parts', found: 1_001, max: 1_000 } },
    });
    expect(over.email.subject).toBe('huge');
    expect(performance.now() - started).toBeLessThan(5_000);
  }, 60_000);

  it('closed while parsing (the runtime stops): the parse fails, so the message is tried again, not stored partial', async () => {
    const closing = new ThreadMimeParser({ ...parseThreadModule(), budgetMs: 30_000 });
    await closing.parse(ordinary);

    const parsing = closing.parse(wrapped);
    await new Promise((r) => setTimeout(r, 200));
    await closing.close();

    await expect(parsing).rejects.toBeInstanceOf(MimeParserClosedError);
    await expect(closing.parse(ordinary)).rejects.toBeInstanceOf(MimeParserClosedError);
  }, 60_000);
});
