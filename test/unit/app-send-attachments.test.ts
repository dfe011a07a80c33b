// Unit tests of attachments in the sending use cases (app/emails/attachments.ts, send-emails.ts) on in-memory
// fakes: stored once as files under the email's id, expiring with the email; a `path` fetched at accept; any
// problem refuses the request whole (422 invalid_attachment) with nothing stored; the send worker hands the bytes
// to the provider; a file gone by send time fails the copies (attachment_unavailable) instead of sending without.
// Their bytes count toward the plan's daily attachment quota, test mode included, and test-mode files are kept a
// day (issue 28).
import { GetObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { S3FileStore } from '../../lambdas/adapters/aws/s3-files';
import { KeyedSlots } from '../../lambdas/adapters/in-process/keyed-slots';
import { MemoryFileStore } from '../../lambdas/adapters/local/file-store';
import { SimulatedEmailProvider } from '../../lambdas/adapters/simulator/simulated-provider';
import type { AttachmentFetcher } from '../../lambdas/app/emails/ports';
import {
  ATTACHMENT_UNAVAILABLE,
  type EmailDraft,
  type SendEmailDeps,
  sendEmails,
  sendQueuedEmail,
} from '../../lambdas/app/emails/send-emails';
import type { Principal } from '../../lambdas/app/ports';
import { ATTACHMENT_LIMITS, attachmentKey } from '../../lambdas/domain/email/attachments';
import { byteQuotaWindow, TEST_FILE_RETENTION_SECONDS } from '../../lambdas/domain/email/byte-quota';
import { testQuotaWindow } from '../../lambdas/domain/email/test-quota';
import { InvalidAttachmentError, RateLimitedError } from '../../lambdas/domain/errors';
import { PLANS } from '../../lambdas/domain/plans';
import {
  FakeClock,
  fixedLinks,
  InMemoryDomainRepository,
  InMemoryEmailRepository,
  InMemoryQuotaCounter,
  InMemorySuppressionList,
  RecordingEmailProvider,
  RecordingEventPublisher,
  RecordingSendScheduler,
  seededRandom,
} from '../support/fakes';

const T0 = Date.UTC(2026, 10, 26, 8);
const RETENTION = 30 * 86_400;
const CALLER: Principal = { accountId: 'acct_1', keyId: 'key_1', mode: 'test', scopes: ['email:send'], plan: 'scale' };

function setup(fetcher?: AttachmentFetcher) {
  const clock = new FakeClock(T0);
  const files = new MemoryFileStore(fixedLinks(), () => clock.now());
  const provider = new RecordingEmailProvider();
  const events = new RecordingEventPublisher();
  const emails = new InMemoryEmailRepository();
  const quotas = new InMemoryQuotaCounter();
  const deps: SendEmailDeps = {
    emails,
    domains: new InMemoryDomainRepository(),
    providerFor: () => provider,
    quotas,
    suppressions: new InMemorySuppressionList(),
    events,
    sendScheduler: new RecordingSendScheduler(),
    links: fixedLinks(),
    clock,
    random: seededRandom('attachments'),
    files,
    emailRetentionSeconds: RETENTION,
    ...(fetcher ? { attachmentFetcher: fetcher } : {}),
  };
  const failed = () => events.published.flatMap((p) => p.events).filter((e) => e.type === 'email.failed');
  return { clock, files, provider, emails, deps, failed, quotas };
}

const draft = (attachments: EmailDraft['attachments'], extra: Partial<EmailDraft> = {}): EmailDraft => ({
  from: 'Acme <hi@acme.example>',
  to: ['ada@example.com'],
  cc: [],
  bcc: [],
  replyTo: [],
  subject: 'Invoice',
  html: '<p><img src="cid:logo"></p>',
  headers: {},
  tags: [],
  attachments,
  ...extra,
});

const bytes = (n: number, fill = 7) => new Uint8Array(n).fill(fill);

describe('accepting an email with attachments', () => {
  it('stores each once under emails/<id>/attachments/<aid>, expiring a day after (test mode), and records its metadata', async () => {
    // Arrange
    const s = setup();
    const pdf = bytes(1000, 1);
    const logo = bytes(10, 2);

    // Act
    const [id] = await sendEmails(s.deps, CALLER, [
      draft([
        { filename: 'invoice.pdf', content: pdf },
        { filename: 'logo.png', content: logo, contentId: 'logo' },
      ]),
    ]);

    // Assert
    const email = await s.emails.get(id as string);
    expect(email?.attachments).toEqual([
      {
        id: expect.stringMatching(/^att_/),
        filename: 'invoice.pdf',
        size: 1000,
        contentType: 'application/pdf',
        disposition: 'attachment',
      },
      {
        id: expect.stringMatching(/^att_/),
        filename: 'logo.png',
        size: 10,
        contentType: 'image/png',
        disposition: 'inline',
        contentId: 'logo',
      },
    ]);
    expect(s.files.size).toBe(2);
    const stored = await s.files.get(attachmentKey(id as string, email?.attachments?.[0]?.id as string));
    expect(stored).toEqual({
      bytes: pdf,
      contentType: 'application/pdf',
      expiresAt: T0 / 1000 + TEST_FILE_RETENTION_SECONDS,
    });
  });

  it('keeps a scheduled test-mode email’s attachments until a day after its send', async () => {
    // Arrange
    const s = setup();
    const at = T0 + 86_400_000;

    // Act
    const [id] = await sendEmails(s.deps, CALLER, [
      draft([{ filename: 'a.txt', content: bytes(3) }], { scheduledAt: new Date(at).toISOString() }),
    ]);

    // Assert
    const meta = (await s.emails.get(id as string))?.attachments?.[0];
    expect((await s.files.get(attachmentKey(id as string, meta?.id as string)))?.expiresAt).toBe(
      at / 1000 + TEST_FILE_RETENTION_SECONDS,
    );
  });

  it('fetches a path once, takes its type from the answer, and refuses what cannot be fetched with nothing stored', async () => {
    // Arrange
    const asked: string[] = [];
    const fetcher: AttachmentFetcher = {
      fetch: async (url) => {
        asked.push(url);
        return url.endsWith('/ok')
          ? { ok: true, bytes: bytes(5), contentType: 'text/csv' }
          : { ok: false, reason: 'The URL answered HTTP 404; 200 is needed.' };
      },
    };
    const s = setup(fetcher);

    // Act
    const [id] = await sendEmails(s.deps, CALLER, [draft([{ filename: 'report', path: 'https://files.example/ok' }])]);
    const refused = sendEmails(
      s.deps,
      CALLER,
      [draft([{ filename: 'r.csv', path: 'https://files.example/missing' }])],
      { batch: false },
    );

    // Assert
    expect((await s.emails.get(id as string))?.attachments?.[0]).toMatchObject({
      filename: 'report',
      size: 5,
      contentType: 'text/csv',
    });
    await expect(refused).rejects.toBeInstanceOf(InvalidAttachmentError);
    await expect(refused).rejects.toMatchObject({
      status: 422,
      code: 'invalid_attachment',
      details: [{ path: 'attachments.0.path', message: 'The URL answered HTTP 404; 200 is needed.' }],
    });
    expect(asked).toEqual(['https://files.example/ok', 'https://files.example/missing']);
    expect(s.files.size).toBe(1);
  });

  it('takes the filename’s type when the URL answers none, a malformed one or octet-stream', async () => {
    // Arrange
    const types = [undefined, 'not a type', 'application/octet-stream'];
    let n = 0;
    const s = setup({
      fetch: async () => ({ ok: true, bytes: bytes(1), ...(types[n++] ? { contentType: types[n - 1] } : {}) }),
    });

    // Act
    const [id] = await sendEmails(s.deps, CALLER, [
      draft(['a.pdf', 'b.png', 'c.csv'].map((filename) => ({ filename, path: `https://x.example/${filename}` }))),
    ]);

    // Assert
    const shown = (await s.emails.get(id as string))?.attachments?.map((a) => a.contentType);
    expect(shown).toEqual(['application/pdf', 'image/png', 'text/csv']);
  });

  it('bounds a path download by what is left of the email’s limit, and names the batch index', async () => {
    // Arrange
    const limits: number[] = [];
    const s = setup({
      fetch: async (_url, { maxBytes }) => {
        limits.push(maxBytes);
        return { ok: false, reason: 'too large' };
      },
    });

    // Act
    const refused = sendEmails(
      s.deps,
      CALLER,
      [
        draft(undefined),
        draft([
          { filename: 'a.bin', content: bytes(1000) },
          { filename: 'b.bin', path: 'https://x.example/b' },
        ]),
      ],
      { batch: true },
    );

    // Assert
    await expect(refused).rejects.toMatchObject({ details: [{ path: '1.attachments.1.path', message: 'too large' }] });
    expect(limits).toEqual([ATTACHMENT_LIMITS.emailBytes - 1000]);
    expect(s.files.size).toBe(0);
    expect(s.emails.items.size).toBe(0);
  });

  it('fetches the same URL once per request however many emails name it, and at most 20 URLs in all', async () => {
    // Arrange
    const asked: string[] = [];
    const s = setup({
      fetch: async (url) => {
        asked.push(url);
        return { ok: true, bytes: bytes(3), contentType: 'text/plain' };
      },
    });
    const paths = (prefix: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({ filename: `f${i}.txt`, path: `https://x.example/${prefix}${i}` }));

    // Act: a batch of 3 emails naming the same 20 URLs; then one naming 21 different URLs across 2 emails.
    const ids = await sendEmails(
      s.deps,
      CALLER,
      [draft(paths('f', 20)), draft(paths('f', 20)), draft(paths('f', 20))],
      {
        batch: true,
      },
    );
    const fetchedOnce = [...asked];
    asked.length = 0;
    const refused = sendEmails(s.deps, CALLER, [draft(paths('a', 11)), draft(paths('b', 10))], { batch: true });

    // Assert
    expect(fetchedOnce).toEqual(paths('f', 20).map((p) => p.path));
    expect(ids).toHaveLength(3);
    for (const id of ids) expect((await s.emails.get(id as string))?.attachments).toHaveLength(20);
    expect(s.files.size).toBe(60);
    await expect(refused).rejects.toMatchObject({
      status: 422,
      code: 'invalid_attachment',
      details: [
        {
          path: 'attachments',
          message: `One request fetches at most ${ATTACHMENT_LIMITS.pathFetchesPerRequest} different path URLs; this one names 21.`,
        },
      ],
    });
    expect(asked).toEqual([]);
  });

  it('a crash between the files and the email leaves no email; the files expire (test mode: after a day)', async () => {
    // Arrange
    const s = setup();
    s.emails.createMany = async () => {
      throw new Error('crash (injected)');
    };

    // Act
    const attempt = sendEmails(s.deps, CALLER, [draft([{ filename: 'a.txt', content: bytes(3) }])]);

    // Assert
    await expect(attempt).rejects.toThrow('crash (injected)');
    expect(s.emails.items.size).toBe(0);
    expect(s.files.size).toBe(1);
    s.clock.advance(TEST_FILE_RETENTION_SECONDS * 1000);
    const [key] = [...(s.files as unknown as { files: Map<string, unknown> }).files.keys()];
    expect(await s.files.get(key as string)).toBeNull();
  });
});

describe('sending an email with attachments', () => {
  it('hands the provider every attachment with its bytes, for each copy', async () => {
    // Arrange
    const s = setup();
    const [id] = await sendEmails(s.deps, CALLER, [
      draft([{ filename: 'logo.png', content: bytes(4, 9), contentId: 'logo' }], {
        to: ['a@example.com', 'b@example.com'],
      }),
    ]);

    // Act
    await sendQueuedEmail(s.deps, id as string);

    // Assert
    expect(s.provider.sent).toHaveLength(1);
    expect(s.provider.sent[0]?.copies.map((c) => c.to)).toEqual(['a@example.com', 'b@example.com']);
    expect(s.provider.sent[0]?.attachments).toEqual([
      expect.objectContaining({
        filename: 'logo.png',
        contentType: 'image/png',
        disposition: 'inline',
        contentId: 'logo',
        content: bytes(4, 9),
      }),
    ]);
  });

  it('fails the copies (attachment_unavailable) when a file is no longer stored, and sends nothing', async () => {
    // Arrange
    const s = setup();
    const [id] = await sendEmails(s.deps, CALLER, [draft([{ filename: 'a.txt', content: bytes(3) }])]);
    (s.files as unknown as { files: Map<string, unknown> }).files.clear();

    // Act
    await sendQueuedEmail(s.deps, id as string);

    // Assert
    expect(s.provider.sent).toHaveLength(0);
    expect(s.failed()).toEqual([
      expect.objectContaining({ emailId: id, data: expect.objectContaining({ reason: ATTACHMENT_UNAVAILABLE }) }),
    ]);
  });

  it('on AWS too: a missing object (S3 answers 403 AccessDenied without s3:ListBucket) fails the copies', async () => {
    // Arrange: the S3 file store, whose GetObject of the (now missing) key meets S3's answer to our roles.
    const s3 = mockClient(S3Client);
    s3.on(PutObjectCommand).resolves({});
    s3.on(GetObjectCommand).rejects(
      new S3ServiceException({
        name: 'AccessDenied',
        $fault: 'client',
        $metadata: { httpStatusCode: 403 },
        message: 'Access Denied',
      }),
    );
    const s = setup();
    const client = new S3Client({ region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
    const deps: SendEmailDeps = { ...s.deps, files: new S3FileStore(client, 'bucket', { now: () => s.clock.now() }) };
    const [id] = await sendEmails(deps, CALLER, [draft([{ filename: 'a.txt', content: bytes(3) }])]);

    // Act: not a throw (SQS would redeliver it five times, then park it in the sends DLQ).
    await sendQueuedEmail(deps, id as string);

    // Assert
    s3.restore();
    expect(s.provider.sent).toHaveLength(0);
    expect(s.failed()).toEqual([
      expect.objectContaining({ emailId: id, data: expect.objectContaining({ reason: ATTACHMENT_UNAVAILABLE }) }),
    ]);
  });

  it('reads no bytes back for a provider that takes none (the simulator): the files are checked, the email delivered', async () => {
    // Arrange: the simulator as the provider, and a file store that counts its reads.
    const s = setup();
    const events = new RecordingEventPublisher();
    const simulator = new SimulatedEmailProvider({ events, stepSeconds: 0 });
    const reads: string[] = [];
    const get = s.files.get.bind(s.files);
    s.files.get = (k: string) => {
      reads.push(k);
      return get(k);
    };
    const deps: SendEmailDeps = { ...s.deps, providerFor: () => simulator };
    const [id] = await sendEmails(deps, CALLER, [
      draft([{ filename: 'report.pdf', content: bytes(10_000, 7) }], { to: ['success@simulator.amazonses.com'] }),
    ]);

    // Act
    await sendQueuedEmail(deps, id as string);

    // Assert: the story went on (delivered), nothing failed, and no file was read back.
    expect(events.published.flatMap((p) => p.events.map((e) => e.type))).toContain('email.delivered');
    expect(s.failed()).toEqual([]);
    expect(reads).toEqual([]);
  });

  it('still fails the copies (attachment_unavailable) for the simulator when a file is no longer stored', async () => {
    // Arrange
    const s = setup();
    const events = new RecordingEventPublisher();
    const deps: SendEmailDeps = {
      ...s.deps,
      providerFor: () => new SimulatedEmailProvider({ events, stepSeconds: 0 }),
    };
    const [id] = await sendEmails(deps, CALLER, [draft([{ filename: 'a.txt', content: bytes(3) }])]);
    (s.files as unknown as { files: Map<string, unknown> }).files.clear();

    // Act
    await sendQueuedEmail(deps, id as string);

    // Assert: no story published, the copy failed.
    expect(events.published).toEqual([]);
    expect(s.failed()).toEqual([
      expect.objectContaining({ emailId: id, data: expect.objectContaining({ reason: ATTACHMENT_UNAVAILABLE }) }),
    ]);
  });

  it('a live-mode email held to the sending rate (the paced provider) still carries them, copy by copy', async () => {
    // Arrange
    const s = setup();
    const deps: SendEmailDeps = { ...s.deps, livePacer: { take: async () => true } };
    // Accepted in test mode (no verified domain needed here), then stored again as a live-mode copy with its files.
    const [id] = await sendEmails(deps, CALLER, [
      draft([{ filename: 'a.txt', content: bytes(2, 5) }], { to: ['a@example.com', 'b@example.com'] }),
    ]);
    const stored = await s.emails.get(id as string);
    await s.emails.createMany([{ ...(stored as NonNullable<typeof stored>), mode: 'live', id: `${id}_live` }]);
    for (const meta of stored?.attachments ?? []) {
      const file = await s.files.get(attachmentKey(id as string, meta.id));
      await s.files.put(attachmentKey(`${id}_live`, meta.id), file?.bytes as Uint8Array, {
        contentType: meta.contentType,
        expiresAt: T0 / 1000 + 60,
      });
    }

    // Act
    await sendQueuedEmail(deps, `${id}_live`);

    // Assert: one provider call per copy (paced), each with the attachment.
    expect(s.provider.sent.map((call) => call.copies.map((c) => c.to))).toEqual([['a@example.com'], ['b@example.com']]);
    for (const call of s.provider.sent) {
      expect(call.attachments).toEqual([expect.objectContaining({ filename: 'a.txt', content: bytes(2, 5) })]);
    }
  });

  it('an email without attachments is sent without any', async () => {
    const s = setup();
    const [id] = await sendEmails(s.deps, CALLER, [draft(undefined)]);
    await sendQueuedEmail(s.deps, id as string);
    expect(s.provider.sent[0]).not.toHaveProperty('attachments');
  });
});

describe('attachment bytes are metered (issue 28)', () => {
  const LIVE: Principal = { ...CALLER, mode: 'live' };
  const attachmentsToday = () => byteQuotaWindow('attachments', T0);
  /** acme.example as a verified sending domain of the live caller. */
  function verified(s: ReturnType<typeof setup>) {
    const at = new Date(T0 - 86_400_000).toISOString();
    s.deps.domains.get = async (tenant) =>
      tenant.mode === 'live'
        ? {
            accountId: LIVE.accountId,
            mode: 'live',
            id: 'dom_x',
            name: 'acme.example',
            status: 'verified',
            records: [],
            createdAt: at,
            updatedAt: at,
          }
        : null;
  }

  it('counts every stored byte of a request (each email of a batch) against the day, test mode included', async () => {
    // Arrange
    const s = setup();

    // Act
    await sendEmails(
      s.deps,
      CALLER,
      [draft([{ filename: 'a.pdf', content: bytes(1000) }]), draft([{ filename: 'b.pdf', content: bytes(234) }])],
      { batch: true },
    );

    // Assert
    expect(await s.quotas.used(CALLER.accountId, attachmentsToday())).toBe(1234);
  });

  it("past the plan's daily bytes: 429 attachment_bytes_quota_exceeded naming the quota, nothing stored, nothing counted", async () => {
    // Arrange: the day's quota all but used.
    const s = setup();
    const limit = PLANS.scale.attachmentBytesPerDay;
    await s.quotas.consume(CALLER.accountId, attachmentsToday(), limit - 500, limit);

    // Act
    const refused = await sendEmails(s.deps, CALLER, [draft([{ filename: 'a.pdf', content: bytes(1000) }])]).catch(
      (e: unknown) => e,
    );

    // Assert: 429 until midnight UTC; no file, no email; the test recipients it had counted given back.
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect(refused).toMatchObject({
      status: 429,
      code: 'attachment_bytes_quota_exceeded',
      retryAfterSeconds: 16 * 3600,
    });
    expect((refused as Error).message).toContain(`${limit} bytes of attachments a day (plan scale`);
    expect(s.files.size).toBe(0);
    expect(s.emails.items.size).toBe(0);
    expect(await s.quotas.used(CALLER.accountId, attachmentsToday())).toBe(limit - 500);
    expect(await s.quotas.used(CALLER.accountId, testQuotaWindow(T0))).toBe(0);
    // A request within what is left still goes.
    await sendEmails(s.deps, CALLER, [draft([{ filename: 'a.pdf', content: bytes(500) }])]);
    expect(await s.quotas.used(CALLER.accountId, attachmentsToday())).toBe(limit);
  });

  it('refuses a `path` request before fetching anything once the day is used up', async () => {
    // Arrange
    let fetched = 0;
    const s = setup({
      fetch: async () => {
        fetched++;
        return { ok: true, bytes: bytes(10), contentType: 'application/pdf' };
      },
    });
    const limit = PLANS.scale.attachmentBytesPerDay;
    await s.quotas.consume(CALLER.accountId, attachmentsToday(), limit, limit);

    // Act
    const attempt = sendEmails(s.deps, CALLER, [draft([{ filename: 'a.pdf', path: 'https://files.example/a.pdf' }])]);

    // Assert
    await expect(attempt).rejects.toMatchObject({ code: 'attachment_bytes_quota_exceeded' });
    expect(fetched).toBe(0);
  });

  it('gives the bytes back when the email cannot be stored', async () => {
    const s = setup();
    s.emails.createMany = async () => {
      throw new Error('crash (injected)');
    };
    await expect(sendEmails(s.deps, CALLER, [draft([{ filename: 'a.txt', content: bytes(3) }])])).rejects.toThrow(
      'crash (injected)',
    );
    expect(await s.quotas.used(CALLER.accountId, attachmentsToday())).toBe(0);
  });

  it('keeps live-mode files with the email (the retention), test-mode ones a day', async () => {
    // Arrange
    const s = setup();
    verified(s);

    // Act
    const [live] = await sendEmails(s.deps, LIVE, [draft([{ filename: 'a.txt', content: bytes(3) }])]);
    const [test] = await sendEmails(s.deps, CALLER, [draft([{ filename: 'a.txt', content: bytes(3) }])]);

    // Assert
    const expiry = async (id: string) => {
      const meta = (await s.emails.get(id))?.attachments?.[0];
      return (await s.files.get(attachmentKey(id, meta?.id as string)))?.expiresAt;
    };
    expect(await expiry(live as string)).toBe(T0 / 1000 + RETENTION);
    expect(await expiry(test as string)).toBe(T0 / 1000 + TEST_FILE_RETENTION_SECONDS);
    expect(TEST_FILE_RETENTION_SECONDS).toBeLessThan(RETENTION);
    // Both modes count toward the one daily quota of the account.
    expect(await s.quotas.used(CALLER.accountId, attachmentsToday())).toBe(6);
  });

  it("marks a test-mode email's files short-lived (on AWS: the bucket's one-day rule), not live nor scheduled ones", async () => {
    // Arrange: the file store's puts recorded.
    const s = setup();
    verified(s);
    const puts: { key: string; shortLived?: boolean }[] = [];
    const put = s.files.put.bind(s.files);
    s.files.put = async (key, bytes, options) => {
      puts.push({ key, ...(options.shortLived ? { shortLived: true } : {}) });
      return put(key, bytes, options);
    };
    const later = new Date(T0 + 3 * 86_400_000).toISOString();

    // Act
    const [test] = await sendEmails(s.deps, CALLER, [draft([{ filename: 'a.txt', content: bytes(1) }])]);
    const [scheduled] = await sendEmails(s.deps, CALLER, [
      draft([{ filename: 'a.txt', content: bytes(1) }], { scheduledAt: later }),
    ]);
    const [live] = await sendEmails(s.deps, LIVE, [draft([{ filename: 'a.txt', content: bytes(1) }])]);

    // Assert
    const of = (id: string | undefined) => puts.filter((p) => p.key.startsWith(`emails/${id}/`));
    expect(of(test)).toEqual([expect.objectContaining({ shortLived: true })]);
    expect(of(scheduled)).toEqual([{ key: expect.any(String) }]);
    expect(of(live)).toEqual([{ key: expect.any(String) }]);
  });

  it("runs one account's requests with attachments one at a time (fetch to store); another account's at once", async () => {
    // Arrange: a fetcher that holds each download until released.
    const started: string[] = [];
    const release = new Map<string, () => void>();
    const s = setup({
      fetch: async (url) => {
        started.push(url);
        await new Promise<void>((resolve) => release.set(url, resolve));
        return { ok: true, bytes: bytes(10), contentType: 'application/pdf' };
      },
    });
    const deps: SendEmailDeps = { ...s.deps, attachmentSlots: new KeyedSlots(1) };
    const other: Principal = { ...CALLER, accountId: 'acct_2' };
    const send = (caller: Principal, url: string) =>
      sendEmails(deps, caller, [draft([{ filename: 'a.pdf', path: url }])]);
    const tick = () => new Promise((resolve) => setImmediate(resolve));

    // Act
    const first = send(CALLER, 'https://files.example/1');
    const second = send(CALLER, 'https://files.example/2');
    const theirs = send(other, 'https://files.example/3');
    for (let i = 0; i < 5; i++) await tick();

    // Assert: the account's second waits for its first; the other account's goes at once.
    expect(started).toEqual(['https://files.example/1', 'https://files.example/3']);
    release.get('https://files.example/1')?.();
    await first;
    for (let i = 0; i < 5; i++) await tick();
    expect(started).toContain('https://files.example/2');
    release.get('https://files.example/2')?.();
    release.get('https://files.example/3')?.();
    await Promise.all([second, theirs]);
  });

  it('a smaller plan stores fewer bytes a day than a larger one', () => {
    expect(PLANS.free.attachmentBytesPerDay).toBeLessThan(PLANS.scale.attachmentBytesPerDay);
    expect(PLANS.free.inboundBytesPerDay).toBeLessThan(PLANS.scale.inboundBytesPerDay);
    // The finding: 10 GB a day on the free plan (its test recipients x 10 MB) was far too much.
    expect(PLANS.free.attachmentBytesPerDay).toBeLessThanOrEqual(1024 ** 3);
  });
});
