// The official `resend` SDK (unmodified, pointed at the local runtime by baseUrl) sends, reads and downloads
// attachments: emails.send with content (bytes and base64) and an inline image, emails.get shows them,
// emails.attachments.list/get give download links whose bytes are identical to what was sent, and batch.send
// carries each email's own attachments.
import { randomBytes } from 'node:crypto';
import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let resend: Resend;
beforeAll(async () => {
  rt = await startTestRuntime();
  resend = new Resend((await rt.newKey()).key, { baseUrl: rt.url });
});
afterAll(() => rt.stop());

/** What the SDK's emails.get answer reads (its type does not list attachments). */
interface WithAttachments {
  attachments?: { id: string; filename: string; size: number; content_type: string; content_id: string | null }[];
}

describe('the resend SDK with attachments', () => {
  it('emails.send, emails.get, emails.attachments.list/get, and downloads byte-identical', async () => {
    // Arrange
    const pdf = randomBytes(150_000);
    const logo = randomBytes(512);

    // Act
    const sent = await resend.emails.send({
      from: 'Acme <billing@acme.test>',
      to: 'ada@example.com',
      subject: 'Your invoice',
      html: '<p><img src="cid:logo"> Attached.</p>',
      attachments: [
        { filename: 'invoice.pdf', content: pdf },
        { filename: 'logo.png', content: logo.toString('base64'), contentType: 'image/png', contentId: 'logo' },
      ],
    });
    const id = sent.data?.id as string;
    const got = await resend.emails.get(id);
    const list = await resend.emails.attachments.list({ emailId: id });
    const one = await resend.emails.attachments.get({ emailId: id, id: list.data?.data[1]?.id as string });
    const downloads = await Promise.all(
      (list.data?.data ?? []).map(async (a) => Buffer.from(await (await fetch(a.download_url)).arrayBuffer())),
    );

    // Assert
    expect(sent.error).toBeNull();
    expect(id).toMatch(/^email_/);
    expect(got.error).toBeNull();
    expect((got.data as unknown as WithAttachments).attachments).toEqual([
      expect.objectContaining({
        filename: 'invoice.pdf',
        size: 150_000,
        content_type: 'application/pdf',
        content_id: null,
      }),
      expect.objectContaining({ filename: 'logo.png', size: 512, content_type: 'image/png', content_id: 'logo' }),
    ]);
    expect(list.error).toBeNull();
    expect(list.data).toMatchObject({ object: 'list', has_more: false });
    expect(list.data?.data.map((a) => [a.filename, a.content_disposition])).toEqual([
      ['invoice.pdf', 'attachment'],
      ['logo.png', 'inline'],
    ]);
    expect(one.error).toBeNull();
    expect(one.data).toMatchObject({ object: 'attachment', filename: 'logo.png', content_id: 'logo' });
    expect(Date.parse(one.data?.expires_at ?? '')).toBeGreaterThan(Date.now());
    expect(downloads[0]?.equals(pdf)).toBe(true);
    expect(downloads[1]?.equals(logo)).toBe(true);
  });

  it('batch.send carries each email’s attachments (Resend refuses them; Sendflow takes them)', async () => {
    // Arrange: the SDK's batch type leaves attachments out, but it sends what it is given.
    const emails = [
      {
        from: 'hi@acme.test',
        to: 'a@example.com',
        subject: 'A',
        text: 'A',
        attachments: [{ filename: 'a.txt', content: Buffer.from('aaa') }],
      },
      { from: 'hi@acme.test', to: 'b@example.com', subject: 'B', text: 'B' },
    ] as unknown as Parameters<typeof resend.batch.send>[0];

    // Act
    const batch = await resend.batch.send(emails);
    const ids = (batch.data?.data ?? []).map((e) => e.id);
    const lists = await Promise.all(ids.map((emailId) => resend.emails.attachments.list({ emailId })));
    const [a] = lists[0]?.data?.data ?? [];
    const bytes = a ? Buffer.from(await (await fetch(a.download_url)).arrayBuffer()).toString() : '';

    // Assert
    expect(batch.error).toBeNull();
    expect(ids).toHaveLength(2);
    expect(lists.map((l) => l.data?.data.map((x) => x.filename))).toEqual([['a.txt'], []]);
    expect(bytes).toBe('aaa');
  });

  it('a refused attachment comes back as the SDK’s error, with its status', async () => {
    const res = await resend.emails.send({
      from: 'hi@acme.test',
      to: 'a@example.com',
      subject: 'x',
      text: 'x',
      attachments: [{ filename: 'setup.exe', content: Buffer.from('MZ') }],
    });
    expect(res.data).toBeNull();
    expect(res.error).toMatchObject({ status: 422, code: 'invalid_attachment' });
  });
});
