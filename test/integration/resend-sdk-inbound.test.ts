// The official `resend` SDK, unmodified, against the local runtime for inbound mail: domains.create with
// receiving and domains.verify, a webhook for email.received at a real receiver, nodemailer (a real SMTP
// client) delivering to the runtime's SMTP port; the webhook arrives and its Standard Webhooks signature
// verifies (recomputed here with node:crypto); then emails.receiving.list/get and
// emails.receiving.attachments.list/get return the message, the attachment downloads byte-identical, and
// emails.receiving.forward sends it on (as is, and wrapped).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import nodemailer from 'nodemailer';
import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver, stringHeaders } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

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

/** Standard Webhooks, independently: base64 HMAC-SHA256 of "id.timestamp.body" keyed by the decoded whsec_ secret. */
function verifies(secret: string, headers: Record<string, string>, body: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key)
    .update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`)
    .digest();
  return (headers['webhook-signature'] ?? '').split(' ').some((signature) => {
    const given = Buffer.from(signature.replace(/^v1,/, ''), 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

describe('Resend SDK: inbound mail', () => {
  it('nodemailer → local SMTP → signed email.received → emails.receiving.* and a byte-identical attachment', async () => {
    // Arrange: the SDK against the runtime, a live key, a verified domain with receiving, a webhook.
    const { key } = await rt.newKey({ mode: 'live' });
    const resend = new Resend(key, { baseUrl: rt.url });
    const created = await resend.domains.create({ name: 'sdk.acme.example', capabilities: { receiving: 'enabled' } });
    expect(created.error).toBeNull();
    expect(created.data?.capabilities).toEqual({ sending: 'enabled', receiving: 'enabled' });
    expect(created.data?.records).toContainEqual(
      expect.objectContaining({ type: 'MX', name: 'sdk.acme.example', priority: 10 }),
    );
    const verified = await resend.domains.verify(created.data?.id as string);
    expect(verified.error).toBeNull();
    const hook = await rt.call('/webhooks', {
      method: 'POST',
      key,
      body: JSON.stringify({ url: `${receiver.url}/sdk`, events: ['email.received'] }),
    });
    const { signing_secret: secret } = (await hook.json()) as { signing_secret: string };
    const pdf = randomBytes(50_000);

    // Act: a real SMTP client delivers to the runtime's SMTP port.
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: rt.smtpPort,
      secure: false,
      ignoreTLS: true,
    });
    const info = await transport.sendMail({
      from: 'Ada <ada@sender.example>',
      to: 'support@sdk.acme.example',
      cc: 'team@sdk.acme.example',
      subject: 'Help with my order',
      text: 'Plain text body',
      html: '<p>HTML body</p>',
      attachments: [{ filename: 'order.pdf', content: pdf, contentType: 'application/pdf' }],
    });
    transport.close();
    await rt.inbound.idle();
    await rt.settle();

    // Assert: the webhook, signed.
    expect(info.accepted).toEqual(['support@sdk.acme.example', 'team@sdk.acme.example']);
    const delivered = receiver.received.filter((r) => r.path === '/sdk');
    expect(delivered).toHaveLength(1);
    const request = delivered[0] as (typeof delivered)[number];
    expect(verifies(secret, stringHeaders(request.headers), request.body)).toBe(true);
    const event = JSON.parse(request.body) as { type: string; data: { email_id: string; received_for: string[] } };
    expect(event.type).toBe('email.received');
    expect(event.data.received_for.sort()).toEqual(['support@sdk.acme.example', 'team@sdk.acme.example']);

    // Assert: the SDK's reads.
    const list = await resend.emails.receiving.list();
    expect(list.error).toBeNull();
    expect(list.data?.data.map((email) => email.id)).toEqual([event.data.email_id]);
    const got = await resend.emails.receiving.get(event.data.email_id);
    expect(got.error).toBeNull();
    expect(got.data).toMatchObject({
      object: 'email',
      from: 'Ada <ada@sender.example>',
      to: ['support@sdk.acme.example'],
      cc: ['team@sdk.acme.example'],
      subject: 'Help with my order',
      html: expect.stringMatching(/^<p>HTML body<\/p>\s*$/),
      text: expect.stringContaining('Plain text body'),
      message_id: info.messageId,
    });
    expect(got.data?.raw?.download_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    const attachments = await resend.emails.receiving.attachments.list({ emailId: event.data.email_id });
    expect(attachments.error).toBeNull();
    expect(attachments.data?.data).toEqual([
      expect.objectContaining({ filename: 'order.pdf', content_type: 'application/pdf', size: pdf.length }),
    ]);
    const one = await resend.emails.receiving.attachments.get({
      emailId: event.data.email_id,
      id: attachments.data?.data[0]?.id as string,
    });
    expect(one.error).toBeNull();
    const download = await fetch(one.data?.download_url as string);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(pdf)).toBe(true);

    // emails.receiving.forward: the SDK reads the message, downloads raw.download_url, and sends it on through
    // POST /v1/emails, as is (passthrough) or wrapped with the original attached as .eml.
    const forwarded = await resend.emails.receiving.forward({
      emailId: event.data.email_id,
      from: 'support@sdk.acme.example',
      to: 'ops@sdk.acme.example',
    });
    expect(forwarded.error).toBeNull();
    const passedOn = await resend.emails.get(forwarded.data?.id as string);
    expect(passedOn.data).toMatchObject({
      from: 'support@sdk.acme.example',
      to: ['ops@sdk.acme.example'],
      subject: 'Help with my order',
      html: expect.stringMatching(/^<p>HTML body<\/p>/),
    });
    const passedFiles = await resend.emails.attachments.list({ emailId: forwarded.data?.id as string });
    expect(passedFiles.data?.data).toEqual([
      expect.objectContaining({ filename: 'order.pdf', content_type: 'application/pdf', size: pdf.length }),
    ]);
    const wrapped = await resend.emails.receiving.forward({
      emailId: event.data.email_id,
      from: 'support@sdk.acme.example',
      to: 'ops@sdk.acme.example',
      passthrough: false,
      text: 'See below.',
    });
    expect(wrapped.error).toBeNull();
    expect((await resend.emails.get(wrapped.data?.id as string)).data).toMatchObject({
      subject: 'Fwd: Help with my order',
      text: 'See below.',
    });
    const wrappedFiles = await resend.emails.attachments.list({ emailId: wrapped.data?.id as string });
    expect(wrappedFiles.data?.data.map((file) => file.filename)).toEqual([expect.stringMatching(/\.eml$/)]);

    // And another account's key gets not_found (the error's name and statusCode come with the errors part of issue 19).
    const stranger = new Resend((await rt.newKey({ mode: 'live' })).key, { baseUrl: rt.url });
    const denied = await stranger.emails.receiving.get(event.data.email_id);
    expect(denied.data).toBeNull();
    expect(denied.error).toMatchObject({ code: 'not_found' });
  }, 60_000);
});
