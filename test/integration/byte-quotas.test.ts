// Bytes are metered (issue 28, item 4), over real HTTP and SMTP on the local runtime: attachment bytes count toward
// the account's daily quota in test mode too, GET /v1/usage shows them, and past the quota a send is refused with
// 429 attachment_bytes_quota_exceeded (before any `path` is fetched); received bytes count on the receiving
// account, and past its quota a message is not stored for it. The day's counters are set through the store.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { byteQuotaWindow, TEST_FILE_RETENTION_SECONDS } from '../../lambdas/domain/email/byte-quota';
import { PLANS } from '../../lambdas/domain/plans';
import { startTestRuntime, type TestRuntime } from '../support/runtime';
import { RawSmtp } from '../support/smtp-client';

let rt: TestRuntime;
let fileHits = 0;
const files = createServer((_req, res) => {
  fileHits++;
  res.writeHead(200, { 'Content-Type': 'application/pdf' }).end(Buffer.alloc(2048, 1));
});
let fileUrl = '';
beforeAll(async () => {
  rt = await startTestRuntime({ SF_ALLOW_PRIVATE_ATTACHMENT_URLS: 'true' });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  fileUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/report.pdf`;
});
afterAll(async () => {
  files.close();
  await rt.stop();
});

interface Quota {
  period: string;
  used: number;
  limit: number;
  resets_at: string;
}
const usage = async (key: string) =>
  (await (await rt.call('/usage', { key })).json()) as {
    attachment_bytes_today: Quota;
    inbound_bytes_today: Quota;
    test_recipients_today: Quota;
  };
const send = (key: string, attachments: unknown[]) =>
  rt.call('/emails', {
    method: 'POST',
    key,
    body: JSON.stringify({ from: 'a@acme.test', to: 'ada@example.com', subject: 'Report', text: 'x', attachments }),
  });
const fill = (accountId: string, kind: 'attachments' | 'inbound', bytes: number, limit: number) =>
  rt.repos.quotas.consume(accountId, byteQuotaWindow(kind, Date.now()), bytes, limit);

describe('attachment bytes are metered (issue 28)', () => {
  it('counts test-mode attachment bytes, shown by GET /v1/usage against the plan', async () => {
    // Arrange
    const { key } = await rt.newKey({ plan: 'free' });
    const content = Buffer.alloc(3000, 7).toString('base64');

    // Act
    expect((await send(key, [{ filename: 'a.pdf', content }])).status).toBe(200);
    expect((await send(key, [{ filename: 'b.pdf', path: fileUrl }])).status).toBe(200);

    // Assert
    const today = new Date().toISOString().slice(0, 10);
    const { attachment_bytes_today, inbound_bytes_today } = await usage(key);
    expect(attachment_bytes_today).toMatchObject({ period: today, used: 3000 + 2048, limit: 256 * 1024 ** 2 });
    expect(attachment_bytes_today.limit).toBe(PLANS.free.attachmentBytesPerDay);
    expect(inbound_bytes_today).toMatchObject({ period: today, used: 0, limit: PLANS.free.inboundBytesPerDay });
  });

  it('past the day: 429 attachment_bytes_quota_exceeded naming the quota, Retry-After until midnight, nothing fetched or counted', async () => {
    // Arrange: the account's day all but used.
    const { key, accountId } = await rt.newKey({ plan: 'free' });
    const limit = PLANS.free.attachmentBytesPerDay;
    await fill(accountId, 'attachments', limit - 100, limit);

    // Act
    const tooBig = await send(key, [{ filename: 'a.pdf', content: Buffer.alloc(200).toString('base64') }]);
    await fill(accountId, 'attachments', 100, limit);
    const hits = fileHits;
    const byPath = await send(key, [{ filename: 'b.pdf', path: fileUrl }]);

    // Assert
    for (const res of [tooBig, byPath]) {
      expect(res.status).toBe(429);
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(86_400);
      const body = (await res.json()) as { code: string; status: number; error: string; retry_after: number };
      expect(body).toMatchObject({ status: 429, code: 'attachment_bytes_quota_exceeded', retry_after: retryAfter });
      expect(body.error).toContain(`at most ${limit} bytes of attachments a day (plan free: 256 MiB`);
    }
    expect(fileHits).toBe(hits);
    const after = await usage(key);
    expect(after.attachment_bytes_today.used).toBe(limit);
    expect(after.test_recipients_today.used).toBe(0);
    // An email without attachments still goes.
    const plain = await rt.call('/emails', {
      method: 'POST',
      key,
      body: JSON.stringify({ from: 'a@acme.test', to: 'ada@example.com', subject: 'Hi', text: 'x' }),
    });
    expect(plain.status).toBe(200);
  });

  it("keeps a test-mode email's attachment a day: its download link stops working after", async () => {
    const { key } = await rt.newKey();
    const res = await send(key, [{ filename: 'a.pdf', content: Buffer.alloc(10, 1).toString('base64') }]);
    const { id } = (await res.json()) as { id: string };
    const links = (await (await rt.call(`/emails/${id}/attachments`, { key })).json()) as {
      data: { download_url: string }[];
    };
    expect((await fetch(links.data[0]?.download_url as string)).status).toBe(200);
    const [stored] = await Promise.all(
      (await rt.repos.emails.get(id))?.attachments?.map((meta) =>
        rt.services.files.get(`emails/${id}/attachments/${meta.id}`),
      ) ?? [],
    );
    expect(stored?.expiresAt).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + TEST_FILE_RETENTION_SECONDS);
  });
});

describe('received bytes are metered on the receiving account (issue 28)', () => {
  async function receivingAccount(domain: string) {
    const { key, accountId } = await rt.newKey({ mode: 'live', plan: 'free' });
    const post = (path: string, body: unknown) => rt.call(path, { method: 'POST', key, body: JSON.stringify(body) });
    const created = (await (
      await post('/domains', { name: domain, capabilities: { receiving: 'enabled' } })
    ).json()) as {
      id: string;
    };
    expect(((await (await post(`/domains/${created.id}/verify`, {})).json()) as { status: string }).status).toBe(
      'verified',
    );
    return { key, accountId };
  }
  const message = (to: string) =>
    ['From: ada@sender.example', `To: ${to}`, 'Subject: Hi', 'MIME-Version: 1.0', '', 'Hello', ''].join('\r\n');
  async function deliver(to: string) {
    const { client } = await RawSmtp.open(rt.smtpPort);
    const sent = await client.send('ada@sender.example', [to], message(to));
    client.close();
    await rt.inbound.idle();
    return sent.data.code;
  }
  type Listed = { status: string; subject: string; notes: { code: string }[]; attachments: unknown[] };
  const listed = async (key: string) =>
    ((await (await rt.call('/emails/receiving', { key })).json()) as { data: Listed[] }).data;
  const received = async (key: string) => (await listed(key)).length;

  it('counts what a received message stores; past the day, nothing of it is stored for that account, which sees it failed', async () => {
    // Arrange
    const open = await receivingAccount('in.open.example');
    const full = await receivingAccount('in.full.example');
    const limit = PLANS.free.inboundBytesPerDay;
    await fill(full.accountId, 'inbound', limit, limit);

    // Act
    expect(await deliver('a@in.open.example')).toBe(250);
    expect(await deliver('a@in.full.example')).toBe(250);

    // Assert
    expect(await received(open.key)).toBe(1);
    expect((await usage(open.key)).inbound_bytes_today.used).toBeGreaterThan(message('a@in.open.example').length);
    // The account over its day sees the message, failed, with what its header says and why; nothing counted.
    expect(await listed(full.key)).toEqual([
      expect.objectContaining({
        status: 'failed',
        subject: 'Hi',
        attachments: [],
        notes: [expect.objectContaining({ code: 'inbound_bytes_quota_exceeded' })],
      }),
    ]);
    expect((await usage(full.key)).inbound_bytes_today.used).toBe(limit);
  });
});
