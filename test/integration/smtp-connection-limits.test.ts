// The local SMTP server's connection limits (lambdas/adapters/local/smtp-inbound.ts) over loopback, with clients
// on different loopback addresses (127.0.0.x: different clients to the server): one client cannot hold more
// than its share of connections, NOOPs do not keep a connection that never begins a message, sessions holding
// one recipient domain cannot take every slot, and a connection that waits without sending mail gives its
// slot to a newcomer when the server is full. In each case another client, or another domain, is still served.
import { afterEach, describe, expect, it } from 'vitest';
import { MemorySpool, type SpoolEntry } from '../../lambdas/adapters/local/inbound-spool';
import { type SmtpInbound, type SmtpLimits, startSmtpInbound } from '../../lambdas/adapters/local/smtp-inbound';
import { RawSmtp, type SmtpReply } from '../support/smtp-client';

const MESSAGE = 'From: a@sender.example\r\nTo: b@b.example\r\nSubject: hi\r\n\r\nHello\r\n';

let smtp: SmtpInbound | undefined;
const open: RawSmtp[] = [];
const timers: NodeJS.Timeout[] = [];
afterEach(async () => {
  for (const timer of timers.splice(0)) clearInterval(timer);
  for (const client of open.splice(0)) client.close();
  await smtp?.stop();
  smtp = undefined;
});

async function server(limits: Partial<SmtpLimits> = {}) {
  const delivered: SpoolEntry[] = [];
  smtp = await startSmtpInbound({
    host: '127.0.0.1',
    port: 0,
    spool: new MemorySpool(),
    accepts: async (domain) => domain === 'a.example' || domain === 'b.example',
    deliver: async (entry) => {
      delivered.push(entry);
    },
    onError: () => {},
    limits: { retryMs: 100, ...limits },
  });
  return { port: smtp.port, delivered };
}

/** A connection from `address` that greets and then only NOOPs every `everyMs` (it never sends mail). */
async function holder(port: number, address: string, everyMs = 300): Promise<{ client: RawSmtp; greeting: SmtpReply }> {
  const opened = await RawSmtp.open(port, '127.0.0.1', address);
  open.push(opened.client);
  if (opened.greeting.code === 220) {
    await opened.client.command('EHLO holder.local');
    timers.push(setInterval(() => opened.client.write('NOOP\r\n'), everyMs));
  }
  return opened;
}

/** A connection from `address` that begins a message to `domain` and stops before DATA, NOOPing. */
async function domainHolder(port: number, address: string, domain: string) {
  const opened = await RawSmtp.open(port, '127.0.0.1', address);
  open.push(opened.client);
  if (opened.greeting.code !== 220) return { greeting: opened.greeting, rcpt: null };
  await opened.client.command('EHLO holder.local');
  await opened.client.command('MAIL FROM:<h@sender.example>');
  const rcpt = await opened.client.command(`RCPT TO:<inbox@${domain}>`);
  timers.push(setInterval(() => opened.client.write('NOOP\r\n'), 300));
  return { greeting: opened.greeting, rcpt };
}

async function sendFrom(port: number, address: string, to: string) {
  const { client, greeting } = await RawSmtp.open(port, '127.0.0.1', address);
  open.push(client);
  if (greeting.code !== 220) return { greeting, data: null };
  const sent = await client.send('a@sender.example', [to], MESSAGE);
  return { greeting, data: sent.data };
}

describe('connection limits of the local SMTP server', () => {
  it('one client holding connections (NOOPing) gets 5 at most; another client is served', async () => {
    // Arrange
    const { port, delivered } = await server();

    // Act: client .2 tries to hold all 20 connections.
    const held: SmtpReply[] = [];
    for (let i = 0; i < 20; i += 1) held.push((await holder(port, '127.0.0.2')).greeting);
    const other = await sendFrom(port, '127.0.0.3', 'b@b.example');

    // Assert
    expect(held.filter((g) => g.code === 220)).toHaveLength(5);
    expect(held.slice(5).every((g) => g.code === 421 && /from your address/.test(g.text))).toBe(true);
    expect(other.greeting.code).toBe(220);
    expect(other.data?.code).toBe(250);
    await smtp?.idle();
    expect(delivered).toHaveLength(1);
  });

  it('NOOPs do not keep a connection that never begins a message: it is closed with 421', async () => {
    // Arrange
    const { port } = await server({ messageStartMs: 1_000 });
    const { client } = await holder(port, '127.0.0.4', 200);

    // Act
    const started = Date.now();
    await expect.poll(() => client.closed, { timeout: 4_000 }).toBe(true);
    const closedAfter = Date.now() - started;

    // Assert: NOOP answers (250), then the 421, within the bound (the idle time-out, 60 s, never came into it).
    let reply = await client.reply(100);
    while (reply.code === 250) reply = await client.reply(100);
    expect(reply.code).toBe(421);
    expect(reply.text).toMatch(/no message begun/i);
    expect(closedAfter).toBeLessThan(3_000);
  });

  it('a message trickled byte by byte is cut at its bound with 421, and nothing of it is kept', async () => {
    // Arrange
    const { port, delivered } = await server({ messageTimeoutMs: 1_000 });
    const { client } = await RawSmtp.open(port, '127.0.0.1', '127.0.0.6');
    open.push(client);
    await client.command('EHLO slow.local');
    await client.command('MAIL FROM:<a@sender.example>');
    await client.command('RCPT TO:<b@b.example>');
    const go = await client.command('DATA');

    // Act: a byte every 200 ms, well inside the idle time-out.
    timers.push(setInterval(() => client.write('x'), 200));
    await expect.poll(() => client.closed, { timeout: 4_000 }).toBe(true);

    // Assert
    expect(go.code).toBe(354);
    const reply = await client.reply(100);
    expect(reply.code).toBe(421);
    expect(reply.text).toMatch(/not received within 1 s/);
    await smtp?.idle();
    expect(delivered).toEqual([]);
  });

  it('a connection that sends a message, then idles, gets the full bound again after each message', async () => {
    const { port, delivered } = await server({ messageStartMs: 1_500 });
    const { client } = await RawSmtp.open(port, '127.0.0.1', '127.0.0.5');
    open.push(client);

    const first = await client.send('a@sender.example', ['b@b.example'], MESSAGE);
    await new Promise((r) => setTimeout(r, 1_000));
    const second = await client.send('a@sender.example', ['b@b.example'], MESSAGE);
    await new Promise((r) => setTimeout(r, 1_000));
    const third = await client.send('a@sender.example', ['b@b.example'], MESSAGE);

    expect([first.data.code, second.data.code, third.data.code]).toEqual([250, 250, 250]);
    await smtp?.idle();
    expect(delivered).toHaveLength(3);
  });

  it('sessions holding one domain get 10 of the 20 slots; a full server gives a waiting one up to another domain', async () => {
    // Arrange: four clients, five connections each, all begin a message to a.example and wait before DATA.
    const { port, delivered } = await server({ messageStartMs: 20_000, evictIdleAfterMs: 300 });
    const holders = [];
    for (const address of ['127.0.0.11', '127.0.0.12', '127.0.0.13', '127.0.0.14']) {
      for (let i = 0; i < 5; i += 1) holders.push(await domainHolder(port, address, 'a.example'));
    }
    await new Promise((r) => setTimeout(r, 400));

    // Act: a fifth client writes to b.example.
    const other = await sendFrom(port, '127.0.0.15', 'b@b.example');

    // Assert
    const rcpts = holders.map((h) => h.rcpt?.code);
    expect(holders.every((h) => h.greeting.code === 220)).toBe(true);
    expect(rcpts.filter((code) => code === 250)).toHaveLength(10);
    expect(rcpts.filter((code) => code === 451)).toHaveLength(10);
    expect(holders.find((h) => h.rcpt?.code === 451)?.rcpt?.text).toMatch(/a\.example/);
    expect(other.greeting.code).toBe(220);
    expect(other.data?.code).toBe(250);
    await smtp?.idle();
    expect(delivered.map((entry) => entry.recipients)).toEqual([['b@b.example']]);
  });
});
