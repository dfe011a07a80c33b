// Inbound mail end to end on the local runtime: a real SMTP conversation over loopback to the runtime's SMTP
// port delivers a message to a verified live domain with receiving on; email.received reaches the subscribed
// webhook (validated against the catalog's schema); GET /v1/emails/receiving lists it, /:id shows body,
// headers and a raw download byte-identical to what was sent, attachments download byte-identical; another
// account sees 404; a domain not verified or not receiving gets 550 5.1.1 at RCPT.

import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';
import { RawSmtp } from '../support/smtp-client';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as typeof addFormatsModule;

let rt: TestRuntime;
let receiver: Receiver;
beforeAll(async () => {
  rt = await startTestRuntime();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await rt.stop();
});

type Json = Record<string, unknown>;
const post = (key: string, path: string, body: unknown) =>
  rt.call(path, { method: 'POST', key, body: JSON.stringify(body) });

/** A live account with a verified receiving domain and a webhook for email.received at `hookPath`. */
async function receivingAccount(domain: string, hookPath: string) {
  const { key, accountId } = await rt.newKey({ mode: 'live' });
  const created = (await (
    await post(key, '/domains', { name: domain, capabilities: { receiving: 'enabled' } })
  ).json()) as {
    id: string;
  };
  const verified = (await (await post(key, `/domains/${created.id}/verify`, {})).json()) as { status: string };
  expect(verified.status).toBe('verified');
  const hook = await post(key, '/webhooks', { url: `${receiver.url}${hookPath}`, events: ['email.received'] });
  expect(hook.status).toBe(201);
  return { key, accountId, domainId: created.id };
}

const PDF = Buffer.from('%PDF-1.4\n\u0000\u00ff binary \r\n.\r\n tail', 'latin1');

function message(to: string, subject = 'Invoice 42') {
  return [
    'From: Ada <ada@sender.example>',
    `To: ${to}`,
    `Subject: ${subject}`,
    'Message-ID: <inv42@sender.example>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="outer"',
    '',
    '--outer',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Your invoice<script>alert(1)</script></p>',
    '--outer',
    'Content-Type: application/pdf; name="invoice.pdf"',
    'Content-Disposition: attachment; filename="invoice.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    PDF.toString('base64'),
    '--outer--',
    '',
  ].join('\r\n');
}

describe('inbound mail on the local runtime', () => {
  it('SMTP → stored → email.received → GET /v1/emails/receiving…, raw and attachment byte-identical', async () => {
    const { key } = await receivingAccount('in.acme.example', '/rx');
    const raw = message('Billing <billing@in.acme.example>');

    const { client, greeting } = await RawSmtp.open(rt.smtpPort);
    const sent = await client.send('ada@sender.example', ['billing@in.acme.example'], raw);
    client.close();
    await rt.inbound.idle();
    await rt.settle();

    expect(greeting.code).toBe(220);
    expect(sent.data.code).toBe(250);
    const hooks = receiver.received.filter((r) => r.path === '/rx');
    expect(hooks).toHaveLength(1);
    const event = JSON.parse(hooks[0]?.body ?? '{}') as Json & { data: Json };
    const catalog = (await (await rt.call('/event-types', { key })).json()) as {
      data: { type: string; schema: Json }[];
    };
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(catalog.data.find((entry) => entry.type === 'email.received')?.schema ?? {});
    expect(validate(event), JSON.stringify(validate.errors)).toBe(true);
    expect(event.data).toMatchObject({
      from: 'Ada <ada@sender.example>',
      to: ['billing@in.acme.example'],
      received_for: ['billing@in.acme.example'],
      subject: 'Invoice 42',
      message_id: '<inv42@sender.example>',
      attachments: [
        expect.objectContaining({ filename: 'invoice.pdf', content_type: 'application/pdf', size: PDF.length }),
      ],
    });
    // No body in the event: metadata only.
    expect(JSON.stringify(event)).not.toContain('Your invoice');

    const list = (await (await rt.call('/emails/receiving', { key })).json()) as {
      object: string;
      has_more: boolean;
      data: Json[];
    };
    expect(list).toMatchObject({ object: 'list', has_more: false });
    expect(list.data.map((e) => e.id)).toEqual([event.data.email_id]);
    const got = await rt.call(`/emails/receiving/${event.data.email_id}`, { key });
    expect(got.status).toBe(200);
    const email = (await got.json()) as Json & { raw: { download_url: string; expires_at: string }; headers: Json };
    expect(email).toMatchObject({
      object: 'email',
      id: event.data.email_id,
      subject: 'Invoice 42',
      // As sent, the script included (postal-mime keeps the line end before the boundary).
      html: expect.stringMatching(/^<p>Your invoice<script>alert\(1\)<\/script><\/p>\s*$/),
      text: null,
      verdicts: null,
    });
    expect(email.headers['message-id']).toBe('<inv42@sender.example>');
    const rawDownload = await fetch(email.raw.download_url);
    expect(rawDownload.status).toBe(200);
    expect(Buffer.from(await rawDownload.arrayBuffer()).toString()).toBe(raw);

    const attachments = (await (await rt.call(`/emails/receiving/${email.id}/attachments`, { key })).json()) as {
      data: { id: string; download_url: string; filename: string; size: number }[];
    };
    expect(attachments.data).toHaveLength(1);
    const one = (await (
      await rt.call(`/emails/receiving/${email.id}/attachments/${attachments.data[0]?.id}`, { key })
    ).json()) as Json & { download_url: string };
    expect(one).toMatchObject({
      object: 'attachment',
      filename: 'invoice.pdf',
      size: PDF.length,
      content_type: 'application/pdf',
    });
    const bytes = Buffer.from(await (await fetch(one.download_url)).arrayBuffer());
    expect(bytes.equals(PDF)).toBe(true);
  });

  it('another account gets 404 for the email and its attachments, and an empty list; a test key sees none', async () => {
    const { key } = await receivingAccount('iso.acme.example', '/iso');
    const { client } = await RawSmtp.open(rt.smtpPort);
    await client.send('ada@sender.example', ['x@iso.acme.example'], message('x@iso.acme.example'));
    client.close();
    await rt.inbound.idle();
    const [mine] = ((await (await rt.call('/emails/receiving', { key })).json()) as { data: { id: string }[] }).data;
    const other = await rt.newKey({ mode: 'live' });
    const test = await rt.newKey({ mode: 'test' });

    const read = await rt.call(`/emails/receiving/${mine?.id}`, { key: other.key });
    const files = await rt.call(`/emails/receiving/${mine?.id}/attachments`, { key: other.key });
    const list = (await (await rt.call('/emails/receiving', { key: other.key })).json()) as { data: unknown[] };
    const testList = (await (await rt.call('/emails/receiving', { key: test.key })).json()) as { data: unknown[] };

    expect(mine?.id).toMatch(/^rcv_/);
    expect(read.status).toBe(404);
    expect(files.status).toBe(404);
    expect(list.data).toEqual([]);
    expect(testList.data).toEqual([]);
    expect((await rt.call(`/emails/receiving/${mine?.id}/attachments/att_nope`, { key })).status).toBe(404);
  });

  it('RCPT is 550 5.1.1 for a domain not verified, not receiving, or unknown; 250 once receiving', async () => {
    const { key } = await rt.newKey({ mode: 'live' });
    const pending = (await (
      await post(key, '/domains', { name: 'late.acme.example', capabilities: { receiving: 'enabled' } })
    ).json()) as { id: string };
    const sending = (await (await post(key, '/domains', { name: 'send.acme.example' })).json()) as { id: string };
    await post(key, `/domains/${sending.id}/verify`, {});
    const { client } = await RawSmtp.open(rt.smtpPort);
    await client.command('EHLO test.local');
    await client.command('MAIL FROM:<a@sender.example>');

    const beforeVerify = await client.command('RCPT TO:<a@late.acme.example>');
    const notReceiving = await client.command('RCPT TO:<a@send.acme.example>');
    const unknown = await client.command('RCPT TO:<a@nobody.example>');
    await post(key, `/domains/${pending.id}/verify`, {});
    const afterVerify = await client.command('RCPT TO:<a@late.acme.example>');
    client.close();

    for (const reply of [beforeVerify, notReceiving, unknown])
      expect(`${reply.code} ${reply.text.slice(0, 5)}`).toBe('550 5.1.1');
    expect(afterVerify.code).toBe(250);
  });

  it('lists newest first in pages (limit, after, before); both cursors at once is 422', async () => {
    const { key } = await receivingAccount('pages.acme.example', '/pages');
    const { client } = await RawSmtp.open(rt.smtpPort);
    for (let i = 0; i < 3; i++) {
      await client.send('a@sender.example', ['p@pages.acme.example'], `Subject: n${i}\r\n\r\nbody ${i}\r\n`);
      await new Promise((r) => setTimeout(r, 5));
    }
    client.close();
    await rt.inbound.idle();

    const first = (await (await rt.call('/emails/receiving?limit=2', { key })).json()) as {
      has_more: boolean;
      data: { id: string; subject: string }[];
    };
    const next = (await (await rt.call(`/emails/receiving?limit=2&after=${first.data[1]?.id}`, { key })).json()) as {
      has_more: boolean;
      data: { subject: string }[];
    };
    const back = (await (await rt.call(`/emails/receiving?limit=2&before=${first.data[1]?.id}`, { key })).json()) as {
      data: { subject: string }[];
    };
    const both = await rt.call(`/emails/receiving?after=${first.data[0]?.id}&before=${first.data[1]?.id}`, { key });

    expect(first.data.map((e) => e.subject)).toEqual(['n2', 'n1']);
    expect(first.has_more).toBe(true);
    expect(next.data.map((e) => e.subject)).toEqual(['n0']);
    expect(next.has_more).toBe(false);
    expect(back.data.map((e) => e.subject)).toEqual(['n2']);
    expect(both.status).toBe(422);
  });

  it('a taken SMTP port stops the start with a message naming SF_SMTP_PORT', async () => {
    await expect(startTestRuntime({ SF_SMTP_PORT: String(rt.smtpPort) })).rejects.toThrow(
      `inbound SMTP port ${rt.smtpPort} is already in use: set SF_SMTP_PORT to another port`,
    );
  });

  it('STARTTLS: not offered by default; with SF_SMTP_TLS_KEY/CERT a client upgrades and delivers', async () => {
    const { client } = await RawSmtp.open(rt.smtpPort);
    const plain = await client.command('EHLO test.local');
    client.close();
    const fixtures = fileURLToPath(new URL('../fixtures/tls/', import.meta.url));
    const tls = await startTestRuntime({
      SF_SMTP_TLS_KEY: `${fixtures}key.pem`,
      SF_SMTP_TLS_CERT: `${fixtures}cert.pem`,
    });
    try {
      const { key } = await tls.newKey({ mode: 'live' });
      const post = (path: string, body: unknown) => tls.call(path, { method: 'POST', key, body: JSON.stringify(body) });
      const domain = (await (
        await post('/domains', { name: 'tls.acme.example', capabilities: { receiving: 'enabled' } })
      ).json()) as { id: string };
      await post(`/domains/${domain.id}/verify`, {});
      const raw = await RawSmtp.open(tls.smtpPort);
      const offered = await raw.client.command('EHLO test.local');
      raw.client.close();
      const transport = nodemailer.createTransport({
        host: '127.0.0.1',
        port: tls.smtpPort,
        secure: false,
        requireTLS: true,
        tls: { rejectUnauthorized: false },
      });
      const info = await transport.sendMail({
        from: 'a@sender.example',
        to: 'x@tls.acme.example',
        subject: 'over TLS',
        text: 'hi',
      });
      transport.close();
      await tls.inbound.idle();
      const list = (await (await tls.call('/emails/receiving', { key })).json()) as { data: { subject: string }[] };

      expect(plain.text).toContain('SIZE');
      expect(plain.text).not.toContain('STARTTLS');
      expect(offered.text.split('\n')).toContain('STARTTLS');
      expect(info.accepted).toEqual(['x@tls.acme.example']);
      expect(list.data.map((e) => e.subject)).toEqual(['over TLS']);
    } finally {
      await tls.stop();
    }
  });
});
