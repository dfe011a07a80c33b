// Hostile inbound mail against the local runtime's SMTP server over raw loopback sockets, fuzzed with
// fast-check: random and malformed MIME, oversized messages (552), 400 RCPTs, a bare-LF flood, an unknown
// domain (550), header injection in Subject and From (stored as data, never a header), a slow client (cut at
// the per-connection deadline). Whatever comes in, the runtime never crashes or stalls: every accepted message
// is stored, and the HTTP API keeps answering while the attack runs.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRuntime, type TestRuntime } from '../support/runtime';
import { RawSmtp } from '../support/smtp-client';

let rt: TestRuntime;
let key: string;
const DOMAIN = 'hostile.acme.example';
const MAX_BYTES = 256 * 1024;

beforeAll(async () => {
  rt = await startTestRuntime(
    {},
    // perClient: every connection here comes from 127.0.0.1 (the caps per client: smtp-connection-limits.test.ts).
    {
      smtpLimits: {
        maxBytes: MAX_BYTES,
        sessionTimeoutMs: 1_500,
        idleTimeoutMs: 1_000,
        maxConnections: 10,
        perClient: 20,
      },
    },
  );
  ({ key } = await rt.newKey({ mode: 'live' }));
  const created = (await (
    await rt.call('/domains', {
      method: 'POST',
      key,
      body: JSON.stringify({ name: DOMAIN, capabilities: { receiving: 'enabled' } }),
    })
  ).json()) as { id: string };
  await rt.call(`/domains/${created.id}/verify`, { method: 'POST', key });
});
afterAll(async () => {
  await rt.stop();
});

type Listed = { id: string; subject: string; from: string; to: string[]; bcc: string[]; cc: string[] };
const list = async (limit = 100) =>
  ((await (await rt.call(`/emails/receiving?limit=${limit}`, { key })).json()) as { data: Listed[] }).data;

/** The API answers within `ms` while `attack` runs: polled every 50 ms. */
async function apiKeepsAnswering<T>(attack: Promise<T>, ms = 2_000): Promise<T> {
  let done = false;
  const slowest: number[] = [];
  const poll = (async () => {
    while (!done) {
      const started = Date.now();
      const res = await rt.call('/emails/receiving?limit=1', { key, signal: AbortSignal.timeout(ms) });
      expect(res.status).toBe(200);
      slowest.push(Date.now() - started);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  try {
    return await attack;
  } finally {
    done = true;
    await poll;
    expect(Math.max(0, ...slowest)).toBeLessThan(ms);
  }
}

describe('hostile inbound mail', () => {
  it('fuzzed messages (random bytes, broken MIME, injected headers): each gets 250 or an SMTP error and 250s are stored', async () => {
    const header = fc.string({
      maxLength: 200,
      unit: fc.constantFrom('a', ' ', ':', '\r', '\n', '=', '?', 'Q', 'B', '\t', '\u00e9', '<', '>', '"', '.'),
    });
    const part = fc.oneof(
      fc.uint8Array({ maxLength: 4096 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
      fc
        .tuple(header, header)
        .map(
          ([s, f]) =>
            `Subject: ${s}\r\nFrom: ${f}\r\nContent-Type: multipart/mixed; boundary="x"\r\n\r\n--x\r\n${s}\r\n--x`,
        ),
      fc.constant('Content-Type: multipart/mixed; boundary=\r\n\r\n--\r\n--\r\n'),
      fc.constant(
        `Content-Type: multipart/mixed; boundary="a"\r\n\r\n${'--a\r\nContent-Type: multipart/mixed; boundary="a"\r\n\r\n'.repeat(200)}`,
      ),
    );
    const before = (await list()).length;
    let accepted = 0;
    await apiKeepsAnswering(
      fc.assert(
        fc.asyncProperty(part, async (body) => {
          const { client } = await RawSmtp.open(rt.smtpPort);
          const sent = await client.send('fuzz@sender.example', [`f@${DOMAIN}`], Buffer.from(body, 'latin1'));
          client.close();
          // 554: a MIME structure over a limit (the 200-deep nesting), refused at DATA.
          expect([250, 552, 554]).toContain(sent.data.code);
          if (sent.data.code === 250) accepted++;
        }),
        { numRuns: 40 },
      ),
    );
    await rt.inbound.idle();
    expect(rt.inbound.pending()).toBe(0);
    expect((await list()).length - before).toBe(accepted);
  }, 60_000);

  it('header injection in Subject and From is stored as data: no Bcc/Cc appears, the text keeps its line break', async () => {
    const { client } = await RawSmtp.open(rt.smtpPort);
    const sent = await client.send(
      'a@sender.example',
      [`inj@${DOMAIN}`],
      [
        'From: =?utf-8?Q?Eve=0D=0ABcc:_victim@example.com?= <eve@sender.example>',
        'Subject: =?utf-8?Q?Hello=0D=0ACc:_victim@example.com=0D=0A=0D=0A<b>body</b>?=',
        '',
        'text',
        '',
      ].join('\r\n'),
    );
    client.close();
    await rt.inbound.idle();

    const [email] = await list(1);
    expect(sent.data.code).toBe(250);
    expect(email?.subject).toBe('Hello\r\nCc: victim@example.com\r\n\r\n<b>body</b>');
    expect(email?.cc).toEqual([]);
    expect(email?.bcc).toEqual([]);
    expect(email?.from).toContain('eve@sender.example');
    const full = (await (await rt.call(`/emails/receiving/${email?.id}`, { key })).json()) as {
      headers: Record<string, string>;
    };
    expect(full.headers.cc).toBeUndefined();
    expect(full.headers.bcc).toBeUndefined();
  });

  it('oversized messages get 552 whatever their shape, nothing is kept, and the next message on the connection is fine', async () => {
    const before = (await list()).length;
    const { client } = await RawSmtp.open(rt.smtpPort);
    const oneLine = await client.send(
      'a@sender.example',
      [`big@${DOMAIN}`],
      `Subject: one line\r\n\r\n${'y'.repeat(MAX_BYTES + 10)}`,
    );
    const manyLines = await client.send(
      'a@sender.example',
      [`big@${DOMAIN}`],
      `Subject: lines\r\n\r\n${'z'.repeat(76)}\r\n`.repeat(5_000),
    );
    const fine = await client.send('a@sender.example', [`big@${DOMAIN}`], 'Subject: fine\r\n\r\nok\r\n');
    client.close();
    await rt.inbound.idle();

    expect(oneLine.data.code).toBe(552);
    expect(manyLines.data.code).toBe(552);
    expect(fine.data.code).toBe(250);
    expect((await list()).length - before).toBe(1);
  });

  // 400 RCPTs, not the report's 1,000: each is a round trip within the 1.5 s session this file's runtime allows
  // (for the slow-client test), which 1,000 overran on a loaded machine; past 200 every answer is the limit's alike.
  it('400 RCPTs (half at an unknown domain): 550 for those, 100 taken, then 452 4.5.3; the API answers throughout', async () => {
    const { client } = await RawSmtp.open(rt.smtpPort);
    await client.command('EHLO flood.local');
    await client.command('MAIL FROM:<a@sender.example>');
    const replies = await apiKeepsAnswering(
      (async () => {
        const codes: number[] = [];
        for (let i = 0; i < 400; i++)
          codes.push((await client.command(`RCPT TO:<u${i}@${i % 2 ? DOMAIN : 'nobody.example'}>`)).code);
        return codes;
      })(),
    );
    const data = await client.command('DATA');
    client.write('Subject: many\r\n\r\nhi\r\n.\r\n');
    const end = await client.reply();
    client.close();

    // Alternating: the first 200 give 100 taken and 100 refused (550); from then on the limit answers first (452).
    expect(replies.slice(0, 200).filter((code) => code === 550)).toHaveLength(100);
    expect(replies.filter((code) => code === 250)).toHaveLength(100);
    expect(replies.slice(200)).toEqual(Array(200).fill(452));
    expect(data.code).toBe(354);
    expect(end.code).toBe(250);
  }, 60_000);

  it('a bare-LF flood (megabytes of \\n, and LF-only messages) neither crashes nor stalls the runtime', async () => {
    const { client } = await RawSmtp.open(rt.smtpPort);
    await apiKeepsAnswering(
      (async () => {
        await client.command('EHLO lf.local');
        await client.command('MAIL FROM:<a@sender.example>');
        await client.command(`RCPT TO:<lf@${DOMAIN}>`);
        await client.command('DATA');
        for (let i = 0; i < 20; i++) client.write('\n'.repeat(64 * 1024));
        client.write('Subject: lf\n\nbody\n.\r\n');
        return client.reply(20_000);
      })(),
    );
    client.close();
    const garbage = await RawSmtp.open(rt.smtpPort);
    garbage.client.write(`${'\n'.repeat(512 * 1024)}QUIT\r\n`);
    await new Promise((r) => setTimeout(r, 200));
    garbage.client.close();
    const fresh = await RawSmtp.open(rt.smtpPort);
    const sent = await fresh.client.send('a@sender.example', [`ok@${DOMAIN}`], 'Subject: after\n\nok\n');
    fresh.client.close();

    expect(sent.data.code).toBe(250);
    expect((await rt.call('/emails/receiving?limit=1', { key })).status).toBe(200);
  }, 60_000);

  it('a slow client is cut at the per-connection deadline and frees its slot; others are served meanwhile', async () => {
    const slow = await RawSmtp.open(rt.smtpPort);
    await slow.client.command('EHLO slow.local');
    const trickle = setInterval(() => slow.client.write(randomBytes(1).toString('hex').slice(0, 1)), 300);
    const meanwhile = await RawSmtp.open(rt.smtpPort);
    const sent = await meanwhile.client.send('a@sender.example', [`m@${DOMAIN}`], 'Subject: meanwhile\r\n\r\nok\r\n');
    meanwhile.client.close();
    await expect.poll(() => slow.client.closed, { timeout: 5_000 }).toBe(true);
    clearInterval(trickle);

    expect(sent.data.code).toBe(250);
  });

  it('more connections than allowed are refused (421) without hurting the ones served', async () => {
    const open = await Promise.all(Array.from({ length: 12 }, () => RawSmtp.open(rt.smtpPort)));
    const greetings = open.map((o) => o.greeting.code);
    for (const o of open) o.client.close();
    await new Promise((r) => setTimeout(r, 100));
    const after = await RawSmtp.open(rt.smtpPort);
    after.client.close();

    expect(greetings.filter((code) => code === 220).length).toBeGreaterThanOrEqual(10);
    expect(greetings.filter((code) => code === 421).length).toBeGreaterThanOrEqual(1);
    expect(after.greeting.code).toBe(220);
  });
});
