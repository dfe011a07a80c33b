// The local SMTP server (lambdas/adapters/local/smtp-inbound.ts) on its own over loopback, with a real disk spool
// and a recording `deliver`: RCPT 550 5.1.1 for a domain nobody receives at, 452 4.5.3 past the recipient limit,
// 552 past the size limit (nothing spooled), 250 only once the message is in the spool; a failing store keeps
// the message spooled and retries it; a new server on the same spool hands over what the last one left.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type DeadLetter,
  DiskSpool,
  MemorySpool,
  readDeadLetters,
  redriveDeadLetter,
  type Spool,
  type SpoolEntry,
} from '../../lambdas/adapters/local/inbound-spool';
import { type SmtpLimits, startSmtpInbound } from '../../lambdas/adapters/local/smtp-inbound';
import { RawSmtp } from '../support/smtp-client';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const newDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-spool-'));
  dirs.push(dir);
  return dir;
};

async function server(spool: Spool, options: { failing?: () => boolean; limits?: Partial<SmtpLimits> } = {}) {
  const delivered: SpoolEntry[] = [];
  const errors: string[] = [];
  const tries: string[] = [];
  const dead: { entry: SpoolEntry; letter: DeadLetter }[] = [];
  const smtp = await startSmtpInbound({
    host: '127.0.0.1',
    port: 0,
    spool,
    accepts: async (domain) => domain === 'rx.example',
    deliver: async (entry) => {
      tries.push(entry.id);
      if (options.failing?.()) throw new Error('store down (injected)');
      delivered.push(entry);
    },
    onDeadLetter: async (entry, letter) => {
      dead.push({ entry, letter });
    },
    onError: (message) => errors.push(message),
    limits: { retryMs: 100, ...options.limits },
  });
  return { smtp, delivered, errors, tries, dead };
}

const MESSAGE = 'From: a@sender.example\r\nTo: b@rx.example\r\nSubject: hi\r\n\r\nHello\r\n.leading dot\r\n';

describe('local SMTP server', () => {
  it('accepts mail for a receiving domain: 250 after the spool, then delivered byte for byte with its envelope', async () => {
    const dir = newDir();
    const { smtp, delivered } = await server(new DiskSpool(dir));
    const { client, greeting } = await RawSmtp.open(smtp.port);

    const ehlo = await client.command('EHLO test.local');
    const sent = await client.send('a@sender.example', ['b@RX.example', 'c@rx.example'], MESSAGE);
    await smtp.idle();

    expect(greeting.code).toBe(220);
    expect(ehlo.code).toBe(250);
    expect(sent.rcpt.map((r) => r.code)).toEqual([250, 250]);
    expect(sent.data.code).toBe(250);
    expect(sent.data.text).toMatch(/queued as in_[0-9a-z]{26}/);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({ mailFrom: 'a@sender.example', recipients: ['b@RX.example', 'c@rx.example'] });
    expect(Buffer.from(delivered[0]?.raw ?? []).toString()).toBe(MESSAGE);
    expect(readdirSync(join(dir))).toEqual([]);
    client.close();
    await smtp.stop();
  });

  it('refuses RCPT for a domain no account receives at with 550 5.1.1, and DATA without a recipient', async () => {
    const { smtp, delivered } = await server(new MemorySpool());
    const { client } = await RawSmtp.open(smtp.port);
    await client.command('EHLO test.local');
    await client.command('MAIL FROM:<a@sender.example>');

    const unknown = await client.command('RCPT TO:<x@unknown.example>');
    const data = await client.command('DATA');

    expect(unknown.code).toBe(550);
    expect(unknown.text).toMatch(/^5\.1\.1 /);
    expect(data.code).toBe(503);
    expect(delivered).toEqual([]);
    client.close();
    await smtp.stop();
  });

  it('takes at most 100 recipients (452 4.5.3 for the 101st and after)', async () => {
    const { smtp } = await server(new MemorySpool());
    const { client } = await RawSmtp.open(smtp.port);
    const to = Array.from({ length: 105 }, (_, i) => `u${i}@rx.example`);

    const sent = await client.send('a@sender.example', to, MESSAGE);

    expect(sent.rcpt.slice(0, 100).every((r) => r.code === 250)).toBe(true);
    expect(sent.rcpt.slice(100).map((r) => `${r.code} ${r.text.slice(0, 5)}`)).toEqual(Array(5).fill('452 4.5.3'));
    expect(sent.data.code).toBe(250);
    client.close();
    await smtp.stop();
  });

  it('refuses a message over the size limit with 552 and spools nothing; the connection goes on', async () => {
    const dir = newDir();
    const { smtp, delivered } = await server(new DiskSpool(dir), { limits: { maxBytes: 64 * 1024 } });
    const { client } = await RawSmtp.open(smtp.port);
    const ehlo = await client.command('EHLO test.local');

    const big = await client.send(
      'a@sender.example',
      ['b@rx.example'],
      `Subject: big\r\n\r\n${'x'.repeat(998)}\r\n`.repeat(100),
    );
    const after = await client.send('a@sender.example', ['b@rx.example'], MESSAGE);
    await smtp.idle();

    expect(ehlo.text).toContain('SIZE 65536');
    expect(big.data.code).toBe(552);
    expect(after.data.code).toBe(250);
    expect(delivered).toHaveLength(1);
    expect(readdirSync(dir)).toEqual([]);
    client.close();
    await smtp.stop();
  });

  it('a message that cannot be stored stays spooled and is retried until stored', async () => {
    const dir = newDir();
    let failures = 3;
    const { smtp, delivered, errors } = await server(new DiskSpool(dir), { failing: () => failures-- > 0 });
    const { client } = await RawSmtp.open(smtp.port);

    const sent = await client.send('a@sender.example', ['b@rx.example'], MESSAGE);
    await smtp.idle();
    const spooled = readdirSync(dir);
    await expect.poll(() => delivered.length, { timeout: 5_000 }).toBe(1);

    expect(sent.data.code).toBe(250);
    // The message, and the count of its failed tries beside it.
    expect(spooled.filter((name) => name.endsWith('.msg'))).toHaveLength(1);
    expect(errors.length).toBeGreaterThanOrEqual(1);
    await smtp.idle();
    expect(readdirSync(dir)).toEqual([]);
    client.close();
    await smtp.stop();
  });

  it('a new server on the same spool delivers what the last one accepted and did not store', async () => {
    const dir = newDir();
    const first = await server(new DiskSpool(dir), { failing: () => true });
    const { client } = await RawSmtp.open(first.smtp.port);
    const sent = await client.send('a@sender.example', ['b@rx.example'], MESSAGE);
    client.close();
    await first.smtp.stop();

    const second = await server(new DiskSpool(dir));
    await second.smtp.idle();

    expect(sent.data.code).toBe(250);
    expect(first.delivered).toEqual([]);
    expect(second.delivered.map((entry) => Buffer.from(entry.raw).toString())).toEqual([MESSAGE]);
    expect(second.delivered[0]?.id).toBe(/queued as (\S+)/.exec(sent.data.text)?.[1]);
    expect(readdirSync(dir)).toEqual([]);
    await second.smtp.stop();
  });

  it('a message that fails every try is moved to the dead letters with its reason, shown once, and never tried again', async () => {
    // Arrange
    const dir = newDir();
    const spoolDir = join(dir, 'inbound-spool');
    const deadDir = join(dir, 'inbound-dead');
    const { smtp, tries, dead } = await server(new DiskSpool(spoolDir, deadDir), {
      failing: () => true,
      limits: { retryMs: 20, maxAttempts: 3 },
    });

    // Act
    const { client } = await RawSmtp.open(smtp.port);
    const sent = await client.send('a@sender.example', ['b@rx.example'], MESSAGE);
    client.close();
    await expect.poll(() => dead.length, { timeout: 5_000 }).toBe(1);
    await new Promise((r) => setTimeout(r, 300));

    // Assert
    const id = /queued as (\S+)/.exec(sent.data.text)?.[1];
    expect(tries).toEqual([id, id, id]);
    expect(smtp.pending()).toBe(0);
    expect(readdirSync(spoolDir)).toEqual([]);
    expect(readdirSync(deadDir).sort()).toEqual([`${id}.json`, `${id}.msg`]);
    const letter = {
      id,
      mailFrom: 'a@sender.example',
      recipients: ['b@rx.example'],
      bytes: Buffer.byteLength(MESSAGE),
      attempts: 3,
      reason: 'store down (injected)',
    };
    expect(smtp.deadLetters()).toEqual([expect.objectContaining(letter)]);
    expect(readDeadLetters(deadDir)).toEqual(smtp.deadLetters());
    expect(dead[0]?.letter).toMatchObject(letter);
    expect(Buffer.from(dead[0]?.entry.raw ?? []).toString()).toBe(MESSAGE);
    await smtp.stop();
  });

  it('the count of tries survives a restart: 2 tries, a restart, and the third moves the message aside', async () => {
    // Arrange
    const dir = newDir();
    const spoolDir = join(dir, 'inbound-spool');
    const limits = { retryMs: 20, maxAttempts: 3 };
    const first = await server(new DiskSpool(spoolDir), { failing: () => true, limits });
    const { client } = await RawSmtp.open(first.smtp.port);
    await client.send('a@sender.example', ['b@rx.example'], MESSAGE);
    client.close();
    await expect.poll(() => first.tries.length, { timeout: 5_000 }).toBe(2);
    await first.smtp.stop();

    // Act
    const second = await server(new DiskSpool(spoolDir), { failing: () => true, limits });
    await second.smtp.idle();

    // Assert
    expect(second.tries).toHaveLength(1);
    expect(second.dead.map((d) => d.letter.attempts)).toEqual([3]);
    expect(second.smtp.deadLetters()).toHaveLength(1);
    await second.smtp.stop();
  });

  it('refuses a message over a MIME limit with 554 5.6.0 while it streams, spools nothing; the connection goes on', async () => {
    const { smtp, delivered } = await server(new MemorySpool(), {
      limits: { mime: { maxParts: 10, maxDepth: 3, maxHeaderFields: 50, maxHeaderBytes: 4096 } },
    });
    const { client } = await RawSmtp.open(smtp.port);
    const parts = (n: number) =>
      `Content-Type: multipart/mixed; boundary=b\r\n\r\n${'--b\r\n\r\nx\r\n'.repeat(n)}--b--\r\n`;

    const eleven = await client.send('a@sender.example', ['b@rx.example'], parts(11));
    const fields = await client.send('a@sender.example', ['b@rx.example'], `${'X-A: 1\r\n'.repeat(51)}\r\nhi\r\n`);
    const ten = await client.send('a@sender.example', ['b@rx.example'], parts(10));
    await smtp.idle();

    expect(eleven.data).toEqual({ code: 554, text: '5.6.0 Message refused: more than 10 MIME parts' });
    expect(fields.data).toEqual({ code: 554, text: '5.6.0 Message refused: a header block of more than 50 fields' });
    expect(ten.data.code).toBe(250);
    expect(delivered).toHaveLength(1);
    client.close();
    await smtp.stop();
  });

  it('a dead letter put back (the admin CLI’s retry-inbound-failure) is found by the running server and stored', async () => {
    // Arrange: it fails twice, is moved aside, then the store recovers.
    const dataDir = newDir();
    let down = true;
    const { smtp, delivered, dead } = await server(new DiskSpool(join(dataDir, 'inbound-spool')), {
      failing: () => down,
      limits: { retryMs: 20, maxAttempts: 2, sweepMs: 100 },
    });
    const { client } = await RawSmtp.open(smtp.port);
    await client.send('a@sender.example', ['b@rx.example'], MESSAGE);
    client.close();
    await expect.poll(() => dead.length, { timeout: 5_000 }).toBe(1);
    down = false;

    // Act
    const id = dead[0]?.letter.id as string;
    const put = redriveDeadLetter(dataDir, id);

    // Assert
    expect(put).toBe(true);
    expect(redriveDeadLetter(dataDir, id)).toBe(false);
    await expect.poll(() => delivered.length, { timeout: 5_000 }).toBe(1);
    expect(delivered[0]?.id).toBe(id);
    expect(smtp.deadLetters()).toEqual([]);
    await smtp.stop();
  });
});
