// Unit tests of receiveEmail (lambdas/app/inbound/receive-email.ts) on in-memory fakes: a message for a
// verified receiving domain is stored per account (raw bytes, parsed body, attachments byte for byte) with one
// email.received (metadata only) relayed; replays of the same arrival store nothing more; recipients no account
// receives at are dropped; malformed MIME and header injection are kept as data; limits cut what one message
// may store; a storage failure throws and a retry completes. The bytes stored count toward the receiving account's
// daily inbound quota; past it, the message is not stored for that account (issue 28).
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InThreadMimeParser } from '../../lambdas/adapters/mime/bounded-parse';
import {
  createDomain,
  type DomainDeps,
  updateDomainCapabilities,
  verifyDomain,
} from '../../lambdas/app/domains/domains';
import type { MimeParser, ParsedMessage } from '../../lambdas/app/inbound/ports';
import { type InboundDeps, type InboundMessage, receiveEmail } from '../../lambdas/app/inbound/receive-email';
import { recordFailedArrival } from '../../lambdas/app/inbound/record-failed-arrival';
import type { Tenant } from '../../lambdas/app/webhooks/ports';
import { byteQuotaWindow } from '../../lambdas/domain/email/byte-quota';
import { MAX_INBOUND_ATTACHMENTS, MAX_RECEIVED_FIELDS_BYTES } from '../../lambdas/domain/inbound';
import { PLANS } from '../../lambdas/domain/plans';
import { jsonBytes } from '../../lambdas/domain/received-fields';
import {
  FakeClock,
  InMemoryDomainRepository,
  InMemoryQuotaCounter,
  RecordingEventPublisher,
  ScriptedDomainProvider,
  seededRandom,
} from '../support/fakes';
import { InMemoryReceivedEmailRepository, MapFiles } from '../support/inbound-fakes';

const T0 = Date.UTC(2026, 10, 26, 7, 0, 0);
const ACME: Tenant = { accountId: 'acct_acme', mode: 'live' };
const BETA: Tenant = { accountId: 'acct_beta', mode: 'live' };
const RETENTION = 30 * 86_400;

async function setup() {
  const clock = new FakeClock(T0);
  const domains = new InMemoryDomainRepository();
  const provider = new ScriptedDomainProvider();
  const events = new RecordingEventPublisher();
  const received = new InMemoryReceivedEmailRepository(() => clock.now());
  const files = new MapFiles();
  const domainDeps: DomainDeps = {
    domains,
    domainProviderFor: () => provider,
    events,
    clock,
    random: seededRandom('d'),
    receivingMx: 'inbound-smtp.eu-west-1.amazonaws.com',
  };
  const receiving = async (tenant: Tenant, name: string) => {
    const domain = await createDomain(domainDeps, tenant, name, { capabilities: { receiving: 'enabled' } });
    provider.statuses.set(name, 'verified');
    return verifyDomain(domainDeps, tenant, domain.id);
  };
  const acme = await receiving(ACME, 'acme.example');
  await receiving(BETA, 'beta.example');
  events.published.length = 0;
  const deps: InboundDeps = {
    domains,
    received,
    files,
    events,
    clock,
    random: randomBytes,
    retentionSeconds: RETENTION,
    parser: new InThreadMimeParser(),
  };
  const published = () => events.published.flatMap((p) => p.events);
  return { deps, domainDeps, acme, received, files, published };
}

const ATTACHMENT = Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0x10]);

const mime = (extraHeaders = '', subject = 'Quarterly report') =>
  Buffer.from(
    [
      'From: "Ada L" <ada@sender.example>',
      'To: Team <team@acme.example>, other@elsewhere.example',
      'Cc: cc@acme.example',
      `Subject: ${subject}`,
      'Message-ID: <m1@sender.example>',
      'MIME-Version: 1.0',
      extraHeaders,
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: multipart/alternative; boundary="b2"',
      '',
      '--b2',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Hello in text',
      '--b2',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p onclick="alert(1)">Hello <script>alert(2)</script></p>',
      '--b2--',
      '--b1',
      'Content-Type: application/pdf; name="r.pdf"',
      'Content-Disposition: attachment; filename="r.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      ATTACHMENT.toString('base64'),
      '--b1--',
      '',
    ]
      .filter((line, i) => line !== '' || i > 6)
      .join('\r\n'),
  );

const arrival = (raw: Uint8Array, recipients: string[], sourceId = 'spool_1'): InboundMessage => ({
  raw,
  mailFrom: 'bounce@sender.example',
  recipients,
  verdicts: null,
  receivedAt: new Date(T0).toISOString(),
  sourceId,
});

describe('receiveEmail', () => {
  it('stores the message for the receiving account: fields, raw bytes, body, attachment bytes; relays email.received', async () => {
    // Arrange
    const s = await setup();
    const raw = mime();

    // Act
    const outcome = await receiveEmail(s.deps, arrival(raw, ['Team@ACME.example', 'nobody@unknown.example']));

    // Assert
    expect(outcome.dropped).toEqual(['nobody@unknown.example']);
    expect(outcome.stored).toEqual([
      { accountId: ACME.accountId, emailId: expect.stringMatching(/^rcv_/), created: true, status: 'received' },
    ]);
    const id = outcome.stored[0]?.emailId as string;
    const email = await s.received.get(ACME, id);
    expect(email).toMatchObject({
      from: 'Ada L <ada@sender.example>',
      to: ['team@acme.example', 'other@elsewhere.example'],
      cc: ['cc@acme.example'],
      bcc: [],
      receivedFor: ['Team@acme.example'],
      subject: 'Quarterly report',
      messageId: '<m1@sender.example>',
      verdicts: null,
      rawSize: raw.length,
      createdAt: new Date(T0).toISOString(),
      expiresAt: T0 / 1000 + RETENTION,
    });
    expect(email?.attachments).toEqual([
      expect.objectContaining({
        filename: 'r.pdf',
        contentType: 'application/pdf',
        contentDisposition: 'attachment',
        contentId: null,
        size: ATTACHMENT.length,
      }),
    ]);
    expect(Buffer.from(s.files.files.get(email?.rawKey as string)?.bytes ?? [])).toEqual(raw);
    expect(Buffer.from(s.files.files.get(email?.attachments[0]?.key as string)?.bytes ?? [])).toEqual(ATTACHMENT);
    const body = JSON.parse(s.files.text(email?.bodyKey as string) as string);
    expect(body.text.trim()).toBe('Hello in text');
    // HTML is kept as sent (scripts included): it is data, shown only in a sandbox.
    expect(body.html).toContain('<script>alert(2)</script>');
    expect(body.headers['message-id']).toBe('<m1@sender.example>');
    const events = s.published();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'email.received', accountId: ACME.accountId, mode: 'live' });
    expect(events[0]?.data).toEqual({
      email_id: id,
      created_at: new Date(T0).toISOString(),
      from: 'Ada L <ada@sender.example>',
      to: ['team@acme.example', 'other@elsewhere.example'],
      cc: ['cc@acme.example'],
      bcc: [],
      received_for: ['Team@acme.example'],
      subject: 'Quarterly report',
      message_id: '<m1@sender.example>',
      attachments: [
        {
          id: email?.attachments[0]?.id,
          filename: 'r.pdf',
          content_type: 'application/pdf',
          content_disposition: 'attachment',
          content_id: null,
          size: ATTACHMENT.length,
        },
      ],
      status: 'received',
      notes: [],
      omitted: {},
    });
    // A complete email's item is what earlier releases wrote: no status, notes or omitted on it.
    expect(email).not.toHaveProperty('status');
    expect(email).not.toHaveProperty('notes');
    expect(email).not.toHaveProperty('omitted');
    expect(s.received.outbox.waiting()).toEqual([]);
  });

  it('a replay of the same arrival stores nothing more and announces nothing more', async () => {
    // Arrange
    const s = await setup();
    const message = arrival(mime(), ['team@acme.example']);
    const first = await receiveEmail(s.deps, message);

    // Act
    const again = await receiveEmail(s.deps, message);

    // Assert
    expect(again.stored).toEqual([{ ...first.stored[0], created: false }]);
    expect(s.received.items.size).toBe(1);
    expect(s.published()).toHaveLength(1);
  });

  it('one message for two accounts is stored for each, apart; a domain not receiving (or not verified) drops its recipients', async () => {
    // Arrange
    const s = await setup();
    await updateDomainCapabilities(s.domainDeps, ACME, s.acme.id, { receiving: 'disabled' });

    // Act
    const off = await receiveEmail(s.deps, arrival(mime(), ['a@acme.example', 'b@beta.example'], 'x1'));
    await updateDomainCapabilities(s.domainDeps, ACME, s.acme.id, { receiving: 'enabled' });
    const both = await receiveEmail(
      s.deps,
      arrival(mime(), ['a@acme.example', 'b@beta.example', 'c@beta.example'], 'x2'),
    );

    // Assert
    expect(off.dropped).toEqual(['a@acme.example']);
    expect(off.stored.map((x) => x.accountId)).toEqual([BETA.accountId]);
    expect(both.stored.map((x) => x.accountId).sort()).toEqual([ACME.accountId, BETA.accountId].sort());
    const beta = both.stored.find((x) => x.accountId === BETA.accountId);
    expect((await s.received.get(BETA, beta?.emailId as string))?.receivedFor).toEqual([
      'b@beta.example',
      'c@beta.example',
    ]);
    expect(await s.received.get(ACME, beta?.emailId as string)).toBeNull();
  });

  it('nobody receives: nothing is parsed or stored', async () => {
    const s = await setup();
    const outcome = await receiveEmail(s.deps, arrival(mime(), ['x@unknown.example']));
    expect(outcome).toEqual({ stored: [], dropped: ['x@unknown.example'] });
    expect(s.files.files.size).toBe(0);
  });

  it('malformed MIME and header injection are stored as data; the raw bytes are kept whole', async () => {
    // Arrange
    const s = await setup();
    const garbage = Buffer.concat([
      Buffer.from('Subject: =?utf-8?B?SGk=?=\r\nContent-Type: multipart/mixed; boundary=\r\n\r\n--\r\n'),
      randomBytes(2048),
    ]);
    const injected = mime('', '=?utf-8?Q?Hi=0D=0ABcc:_victim@example.com?=');

    // Act
    const bad = await receiveEmail(s.deps, arrival(garbage, ['a@acme.example'], 'g1'));
    const inj = await receiveEmail(s.deps, arrival(injected, ['a@acme.example'], 'g2'));

    // Assert
    const badEmail = await s.received.get(ACME, bad.stored[0]?.emailId as string);
    expect(Buffer.from(s.files.files.get(badEmail?.rawKey as string)?.bytes ?? [])).toEqual(garbage);
    const injEmail = await s.received.get(ACME, inj.stored[0]?.emailId as string);
    expect(injEmail?.subject).toBe('Hi\r\nBcc: victim@example.com');
    expect(injEmail?.bcc).toEqual([]);
  });

  it(`keeps at most ${MAX_INBOUND_ATTACHMENTS} attachments one by one (the raw message has them all)`, async () => {
    // Arrange
    const s = await setup();
    const parts = Array.from({ length: MAX_INBOUND_ATTACHMENTS + 20 }, (_, i) =>
      [
        '--b',
        `Content-Type: text/plain; name="f${i}.txt"`,
        `Content-Disposition: attachment; filename="f${i}.txt"`,
        '',
        `file ${i}`,
      ].join('\r\n'),
    );
    const raw = Buffer.from(
      ['From: a@sender.example', 'Content-Type: multipart/mixed; boundary="b"', '', ...parts, '--b--', ''].join('\r\n'),
    );

    // Act
    const outcome = await receiveEmail(s.deps, arrival(raw, ['a@acme.example']));

    // Assert
    const email = await s.received.get(ACME, outcome.stored[0]?.emailId as string);
    expect(email?.attachments).toHaveLength(MAX_INBOUND_ATTACHMENTS);
    expect(email?.attachments.map((a) => a.filename)).toEqual(
      Array.from({ length: MAX_INBOUND_ATTACHMENTS }, (_, i) => `f${i}.txt`),
    );
    expect(email).toMatchObject({ status: 'partial', omitted: { attachments: 20 } });
    expect(email?.notes).toEqual([{ code: 'fields_cut', message: expect.stringContaining('20 attachments') }]);
    expect(s.files.files.size).toBe(2 + MAX_INBOUND_ATTACHMENTS);
  });

  it('a storage failure throws and stores no email; the retry stores it once', async () => {
    // Arrange
    const s = await setup();
    s.files.failPuts = 2;
    const message = arrival(mime(), ['a@acme.example']);

    // Act
    const failed = receiveEmail(s.deps, message);

    // Assert
    await expect(failed).rejects.toThrow(/unavailable/);
    expect(s.received.items.size).toBe(0);
    await expect(receiveEmail(s.deps, message)).rejects.toThrow(/unavailable/);
    const retried = await receiveEmail(s.deps, message);
    expect(retried.stored[0]?.created).toBe(true);
    expect(s.published()).toHaveLength(1);
  });

  it('a message over the parts limit is stored raw and partial: its header fields listed, its body unparsed', async () => {
    // Arrange
    const s = await setup();
    const raw = Buffer.from(
      [
        'From: Eve <eve@sender.example>',
        'To: a@acme.example',
        'Subject: many parts',
        'Content-Type: multipart/mixed; boundary="b"',
        '',
        '--b\r\nContent-Type: text/plain\r\n\r\nx\r\n'.repeat(1_001),
        '--b--',
        '',
      ].join('\r\n'),
    );

    // Act
    const outcome = await receiveEmail(s.deps, arrival(raw, ['a@acme.example']));

    // Assert
    expect(outcome.stored[0]?.status).toBe('partial');
    const email = await s.received.get(ACME, outcome.stored[0]?.emailId as string);
    expect(email).toMatchObject({
      from: 'Eve <eve@sender.example>',
      to: ['a@acme.example'],
      subject: 'many parts',
      attachments: [],
      status: 'partial',
      notes: [
        {
          code: 'mime_limit',
          message:
            'This message has more than 1,000 MIME parts: only its header fields were read; its body and attachments are in the raw message.',
        },
      ],
    });
    expect(Buffer.from(s.files.files.get(email?.rawKey as string)?.bytes ?? []).equals(raw)).toBe(true);
    expect(JSON.parse(s.files.text(email?.bodyKey as string) as string)).toMatchObject({ html: null, text: null });
    expect(s.published()[0]?.data).toMatchObject({ status: 'partial', notes: [{ code: 'mime_limit' }] });
  });

  it('a parse cut by the time-box is stored partial with what the header block gave', async () => {
    // Arrange: the parser port reports a time-out (the thread parser's own tests show it is one).
    const s = await setup();
    const timedOut: MimeParser = {
      parse: async (): Promise<ParsedMessage> => ({
        scope: 'headers',
        email: { headers: [], headerLines: [], attachments: [], subject: 'slow one' },
        problem: { kind: 'timeout', budgetMs: 10_000 },
      }),
    };

    // Act
    const outcome = await receiveEmail({ ...s.deps, parser: timedOut }, arrival(mime(), ['a@acme.example']));

    // Assert
    const email = await s.received.get(ACME, outcome.stored[0]?.emailId as string);
    expect(email).toMatchObject({
      subject: 'slow one',
      status: 'partial',
      notes: [{ code: 'parse_timeout', message: expect.stringContaining('longer than 10 s') }],
    });
  });

  it('the poison message: 100 To and 100 Cc of ~975 characters, 100 long file names fit the budget, cut and counted', async () => {
    // Arrange
    const s = await setup();
    const long = (side: string, i: number) => `${side}${i}-${'x'.repeat(960)}@acme.example`;
    const parts = Array.from({ length: 100 }, (_, i) =>
      [
        '--p',
        `Content-Type: application/octet-stream; name="${i}-${'n'.repeat(250)}"`,
        `Content-Disposition: attachment; filename="${i}-${'n'.repeat(250)}"`,
        '',
        `file ${i}`,
      ].join('\r\n'),
    );
    const raw = Buffer.from(
      [
        'From: a@sender.example',
        `To: ${Array.from({ length: 100 }, (_, i) => long('to', i)).join(', ')}`,
        `Cc: ${Array.from({ length: 100 }, (_, i) => long('cc', i)).join(', ')}`,
        'Subject: poison',
        'Content-Type: multipart/mixed; boundary="p"',
        '',
        ...parts,
        '--p--',
        '',
      ].join('\r\n'),
    );

    // Act
    const outcome = await receiveEmail(s.deps, arrival(raw, ['a@acme.example']));

    // Assert: stored; the item's listed fields, and the event's copy, within the budget; every cut counted.
    const email = (await s.received.get(ACME, outcome.stored[0]?.emailId as string)) as NonNullable<
      Awaited<ReturnType<typeof s.received.get>>
    >;
    const { to, cc, bcc, replyTo, receivedFor, attachments, from, subject, messageId } = email;
    expect(jsonBytes({ from, subject, messageId, to, cc, bcc, replyTo, receivedFor, attachments })).toBeLessThanOrEqual(
      MAX_RECEIVED_FIELDS_BYTES,
    );
    expect(jsonBytes(s.published()[0]?.data)).toBeLessThanOrEqual(MAX_RECEIVED_FIELDS_BYTES + 2_048);
    expect(email.to.length + (email.omitted?.to ?? 0)).toBe(100);
    expect(email.cc.length + (email.omitted?.cc ?? 0)).toBe(100);
    expect(email.attachments.length + (email.omitted?.attachments ?? 0)).toBe(100);
    // The longest lists lose entries first and evenly; what is kept is each list's first entries, cut to length.
    for (const list of [email.to, email.cc, email.attachments]) expect(list.length).toBeGreaterThan(20);
    expect(email.to[0]).toBe(long('to', 0).slice(0, 320));
    expect(email.attachments[0]?.filename).toBe(`0-${'n'.repeat(250)}`.slice(0, 255));
    expect(email.status).toBe('partial');
    // Each listed attachment's bytes are stored, and only those.
    expect(s.files.files.size).toBe(2 + email.attachments.length);
  });

  it('recordFailedArrival: a failed email with the envelope only, its raw bytes kept, announced once', async () => {
    // Arrange
    const s = await setup();
    const message = arrival(mime(), ['x@acme.example', 'y@beta.example', 'z@nobody.example'], 'dead_1');

    // Act
    const outcome = await recordFailedArrival(s.deps, message, 6);
    const again = await recordFailedArrival(s.deps, message, 6);

    // Assert
    expect(outcome.dropped).toEqual(['z@nobody.example']);
    expect(outcome.stored.map((x) => [x.accountId, x.status, x.created])).toEqual([
      [ACME.accountId, 'failed', true],
      [BETA.accountId, 'failed', true],
    ]);
    expect(again.stored.map((x) => x.created)).toEqual([false, false]);
    const email = await s.received.get(ACME, outcome.stored[0]?.emailId as string);
    expect(email).toMatchObject({
      from: 'bounce@sender.example',
      to: [],
      subject: '',
      receivedFor: ['x@acme.example'],
      attachments: [],
      status: 'failed',
      notes: [{ code: 'storage_failed', message: expect.stringContaining('could not be stored (6 tries)') }],
    });
    expect(Buffer.from(s.files.files.get(email?.rawKey as string)?.bytes ?? [])).toEqual(mime());
    expect(s.published().map((e) => [e.type, (e.data as { status: string }).status])).toEqual([
      ['email.received', 'failed'],
      ['email.received', 'failed'],
    ]);
  });

  it('recordFailedArrival after the email was stored after all keeps the stored email', async () => {
    const s = await setup();
    const message = arrival(mime(), ['x@acme.example'], 'late_1');
    await receiveEmail(s.deps, message);

    const outcome = await recordFailedArrival(s.deps, message, 6);

    expect(outcome.stored[0]?.created).toBe(false);
    expect((await s.received.get(ACME, outcome.stored[0]?.emailId as string))?.subject).toBe('Quarterly report');
  });

  it('a retried dead letter stored at last replaces its failed email, and email.received says so', async () => {
    const s = await setup();
    const message = arrival(mime(), ['x@acme.example'], 'redriven_1');
    const failed = await recordFailedArrival(s.deps, message, 6);

    const stored = await receiveEmail(s.deps, message);

    expect(stored.stored).toEqual([{ ...failed.stored[0], created: true, status: 'received' }]);
    const email = await s.received.get(ACME, stored.stored[0]?.emailId as string);
    expect(email).toMatchObject({ subject: 'Quarterly report', attachments: [expect.anything()] });
    expect(email).not.toHaveProperty('status');
    expect(s.published().map((e) => (e.data as { status: string }).status)).toEqual(['failed', 'received']);
  });
});

describe('received bytes are metered on the receiving account (issue 28)', () => {
  /** ACME on the free plan, BETA on scale, each counted in the in-memory counter. */
  async function metered() {
    const s = await setup();
    const quotas = new InMemoryQuotaCounter();
    const plans: Record<string, 'free' | 'scale'> = { [ACME.accountId]: 'free', [BETA.accountId]: 'scale' };
    const deps: InboundDeps = {
      ...s.deps,
      inboundQuota: {
        quotas,
        accounts: {
          get: async (id) => (plans[id] ? { id, plan: plans[id], createdAt: new Date(T0).toISOString() } : null),
        },
      },
    };
    const today = byteQuotaWindow('inbound', T0);
    return { ...s, deps, quotas, today };
  }
  const storedBytes = (files: MapFiles, emailId: string) =>
    [...files.files].filter(([key]) => key.includes(emailId)).reduce((sum, [, file]) => sum + file.bytes.length, 0);

  it('counts every byte stored for the account (raw message, body, attachments) against its day; a replay counts nothing more', async () => {
    // Arrange
    const s = await metered();
    const message = arrival(mime(), ['team@acme.example']);

    // Act
    const outcome = await receiveEmail(s.deps, message);
    await receiveEmail(s.deps, message);

    // Assert
    const stored = storedBytes(s.files, outcome.stored[0]?.emailId as string);
    expect(stored).toBeGreaterThan(message.raw.length);
    expect(await s.quotas.used(ACME.accountId, s.today)).toBe(stored);
    expect(await s.quotas.used(BETA.accountId, s.today)).toBe(0);
  });

  it("past the receiving account's daily bytes: not stored for it (refused, with the reason); another account still gets it", async () => {
    // Arrange: ACME's day all but used.
    const s = await metered();
    const limit = PLANS.free.inboundBytesPerDay;
    await s.quotas.consume(ACME.accountId, s.today, limit - 10, limit);

    // Act
    const outcome = await receiveEmail(s.deps, arrival(mime(), ['team@acme.example', 'b@beta.example']));

    // Assert: nothing of it for ACME (no item, no file, no event), all of it for BETA.
    expect(outcome.refused).toEqual([{ accountId: ACME.accountId, reason: 'inbound_bytes_quota_exceeded' }]);
    expect(outcome.stored.map((x) => x.accountId)).toEqual([BETA.accountId]);
    expect([...s.received.items.values()].map((item) => item.accountId)).toEqual([BETA.accountId]);
    expect(s.published().map((e) => e.accountId)).toEqual([BETA.accountId]);
    expect(await s.quotas.used(ACME.accountId, s.today)).toBe(limit - 10);
    expect(await s.quotas.used(BETA.accountId, s.today)).toBeGreaterThan(0);
  });

  it('gives the bytes back when storing fails (the retry counts them once)', async () => {
    const s = await metered();
    s.files.failPuts = 1;
    const message = arrival(mime(), ['team@acme.example']);
    await expect(receiveEmail(s.deps, message)).rejects.toThrow('injected');
    expect(await s.quotas.used(ACME.accountId, s.today)).toBe(0);
    const outcome = await receiveEmail(s.deps, message);
    expect(await s.quotas.used(ACME.accountId, s.today)).toBe(
      storedBytes(s.files, outcome.stored[0]?.emailId as string),
    );
  });
});
