// Unit tests of reading received emails (lambdas/app/inbound/read-received.ts) and inbound mail's pure rules
// (lambdas/domain/inbound.ts): per-tenant reads (404 otherwise), the body from the file store (empty when it
// is gone), download links named safely, and the cleaning of file names and content types.
import { describe, expect, it } from 'vitest';
import type { ReceivedEmail } from '../../lambdas/app/inbound/ports';
import {
  getReceivedAttachment,
  getReceivedEmail,
  listReceivedAttachments,
  type ReadableFiles,
} from '../../lambdas/app/inbound/read-received';
import type { Tenant } from '../../lambdas/app/webhooks/ports';
import { NotFoundError } from '../../lambdas/domain/errors';
import { receivedEmailId, safeContentType, safeFilename } from '../../lambdas/domain/inbound';
import { InMemoryReceivedEmailRepository } from '../support/inbound-fakes';

const T0 = Date.UTC(2026, 10, 26, 7, 0, 0);
const ACME: Tenant = { accountId: 'acct_acme', mode: 'live' };
const OTHER: Tenant = { accountId: 'acct_other', mode: 'live' };

class LinkFiles implements ReadableFiles {
  readonly files = new Map<string, Uint8Array>();
  readonly asked: { key: string; filename: string; contentType: string }[] = [];
  async get(key: string) {
    const bytes = this.files.get(key);
    return bytes ? { bytes } : null;
  }
  async downloadUrl(key: string, options: { filename: string; contentType: string }) {
    this.asked.push({ key, ...options });
    return { url: `https://files.example/${key}`, expires_at: new Date(T0 + 3_600_000).toISOString() };
  }
}

function email(overrides: Partial<ReceivedEmail> = {}): ReceivedEmail {
  const id = receivedEmailId(T0, 'src', ACME.accountId);
  return {
    ...ACME,
    id,
    createdAt: new Date(T0).toISOString(),
    from: 'a@sender.example',
    to: ['b@acme.example'],
    cc: [],
    bcc: [],
    replyTo: [],
    receivedFor: ['b@acme.example'],
    subject: 's',
    messageId: '',
    attachments: [
      {
        id: 'att_1',
        filename: 'evil"\r\nSet-Cookie: x=1/../a.html',
        contentType: 'text/html',
        contentDisposition: 'attachment',
        contentId: null,
        size: 3,
        key: `emails/${id}/attachments/att_1`,
      },
    ],
    verdicts: null,
    rawKey: `emails/${id}/raw.eml`,
    rawSize: 10,
    bodyKey: `emails/${id}/body.json`,
    sourceId: 'src',
    expiresAt: Math.floor(Date.now() / 1000) + 3600,
    ...overrides,
  };
}

async function setup() {
  const receivedEmails = new InMemoryReceivedEmailRepository();
  const files = new LinkFiles();
  const stored = email();
  await receivedEmails.create(stored, []);
  return { deps: { receivedEmails, files }, files, stored };
}

describe('reading received emails', () => {
  it('get: the item, the body from its file, and a raw download link named <id>.eml', async () => {
    const { deps, files, stored } = await setup();
    files.files.set(
      stored.bodyKey,
      new TextEncoder().encode(JSON.stringify({ html: '<p>x</p>', text: 'x', headers: { a: 'b' } })),
    );

    const got = await getReceivedEmail(deps, ACME, stored.id);

    expect(got.email).toEqual(stored);
    expect(got.body).toEqual({ html: '<p>x</p>', text: 'x', headers: { a: 'b' } });
    expect(got.raw.url).toBe(`https://files.example/${stored.rawKey}`);
    expect(files.asked[0]).toEqual({ key: stored.rawKey, filename: `${stored.id}.eml`, contentType: 'message/rfc822' });
  });

  it('get: a body file gone before its item reads as empty', async () => {
    const { deps, stored } = await setup();
    expect((await getReceivedEmail(deps, ACME, stored.id)).body).toEqual({ html: null, text: null, headers: {} });
  });

  it('another tenant, an unknown id, an unknown attachment: NotFoundError', async () => {
    const { deps, stored } = await setup();
    await expect(getReceivedEmail(deps, OTHER, stored.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(listReceivedAttachments(deps, OTHER, stored.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(getReceivedEmail(deps, ACME, 'rcv_unknown')).rejects.toBeInstanceOf(NotFoundError);
    await expect(getReceivedAttachment(deps, ACME, stored.id, 'att_2')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('attachment links carry a cleaned file name (no CR, LF, quote or slash reaches the download header)', async () => {
    const { deps, files, stored } = await setup();

    const [listed] = await listReceivedAttachments(deps, ACME, stored.id);
    const one = await getReceivedAttachment(deps, ACME, stored.id, 'att_1');

    expect(listed?.attachment.filename).toBe('evil"\r\nSet-Cookie: x=1/../a.html');
    expect(one.link.url).toBe(`https://files.example/${stored.attachments[0]?.key}`);
    for (const asked of files.asked) expect(asked.filename).toBe('evil___Set-Cookie: x=1_.._a.html');
  });
});

describe('inbound rules', () => {
  it('receivedEmailId is time-ordered, the same for the same arrival and account, different per account', () => {
    const a = receivedEmailId(T0, 'src', 'acct_a');
    expect(receivedEmailId(T0, 'src', 'acct_a')).toBe(a);
    expect(receivedEmailId(T0, 'src', 'acct_b')).not.toBe(a);
    expect(receivedEmailId(T0 + 1, 'src', 'acct_a') > a).toBe(true);
    expect(a).toMatch(/^rcv_[0-9a-z]{26}$/);
  });

  it('safeFilename and safeContentType keep good values and neutralize the rest', () => {
    expect(safeFilename('report.pdf')).toBe('report.pdf');
    expect(safeFilename('   ')).toBeNull();
    expect(safeFilename('a\r\nb')).toBe('a__b');
    expect(safeFilename(null)).toBeNull();
    expect(safeFilename('x'.repeat(300))).toHaveLength(255);
    expect(safeContentType('Application/PDF')).toBe('application/pdf');
    expect(safeContentType('text/html\r\nX-Evil: 1')).toBe('application/octet-stream');
    expect(safeContentType('text/plain; charset=utf-8')).toBe('application/octet-stream');
    expect(safeContentType('')).toBe('application/octet-stream');
  });
});
