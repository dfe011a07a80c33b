// Contract tests for the SES provider (lambdas/adapters/ses/ses-provider.ts) through aws-sdk-client-mock: the
// exact SendEmail request of each recipient's copy (configuration set, tags, List-Unsubscribe headers, MIME
// addresses), refusals turned into email.failed for that recipient, throttling retried with backoff, an
// unexpected error failing only its copy when others went out, and an outage (every copy) rethrown.
import {
  AccountSuspendedException,
  BadRequestException,
  LimitExceededException,
  MailFromDomainNotVerifiedException,
  MessageRejected,
  NotFoundException,
  SESv2Client,
  SendEmailCommand,
  SendingPausedException,
  TooManyRequestsException,
} from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { mimeAddress } from '../../lambdas/adapters/ses/addresses';
import { SesEmailProvider, sendEmailRequest } from '../../lambdas/adapters/ses/ses-provider';
import { trackingLookup } from '../../lambdas/app/domains/tracking';
import type { OutgoingCopy } from '../../lambdas/app/emails/ports';
import type { EmailMessage } from '../../lambdas/domain/email/email';
import { listUnsubscribeHeaders } from '../../lambdas/domain/email/unsubscribe';
import { compactTrace } from '../../lambdas/domain/trace-context';

const ses = mockClient(SESv2Client);
const NOW = Date.UTC(2026, 10, 22, 9, 30, 0);
const CONFIGURATION_SET = 'SendflowApi-events';

const email: EmailMessage = {
  id: 'email_01jdxyz0000000000000000000',
  accountId: 'acct_01jdabc0000000000000000000',
  mode: 'live',
  from: 'Acme Billing <billing@acme.example>',
  to: ['Bob <bob@example.com>'],
  cc: ['carol@example.org'],
  bcc: [],
  replyTo: ['support@acme.example'],
  subject: 'Your invoice ✓',
  html: '<p>Hi</p>',
  text: 'Hi',
  headers: { 'X-Campaign': 'nov', 'list-unsubscribe': '<mailto:old@acme.example>' },
  tags: [{ name: 'category', value: 'invoice' }],
  createdAt: new Date(NOW).toISOString(),
};

const url = (r: string) => `https://abc123.execute-api.eu-west-1.amazonaws.com/v1/unsubscribe/tok-${r}`;
const copies: OutgoingCopy[] = [
  { to: 'Bob <bob@example.com>', headers: listUnsubscribeHeaders(url('bob')) },
  { to: 'carol@example.org', headers: listUnsubscribeHeaders(url('carol')) },
];

interface Harness {
  provider: SesEmailProvider;
  sleeps: number[];
}

function harness(options: { concurrency?: number } = {}): Harness {
  const sleeps: number[] = [];
  const provider = new SesEmailProvider({
    client: new SESv2Client({ region: 'eu-west-1' }),
    configurationSet: CONFIGURATION_SET,
    sleep: async (ms) => void sleeps.push(ms),
    ...options,
  });
  return { provider, sleeps };
}

/** SendEmail inputs in call order. */
const requests = () => ses.commandCalls(SendEmailCommand).map((call) => call.args[0].input);

/** A modelled SES exception, as the SDK throws it. */
const modelled = (Type: new (o: { message: string; $metadata: object }) => Error, message: string): Error =>
  new Type({ message, $metadata: {} });

beforeEach(() => {
  ses.reset();
  ses.on(SendEmailCommand).resolves({ MessageId: '0100019-ses-message-id' });
});

describe('the SendEmail request of a copy', () => {
  it('is exactly this for the first recipient', () => {
    expect(sendEmailRequest(email, copies[0] as OutgoingCopy, CONFIGURATION_SET)).toEqual({
      FromEmailAddress: 'Acme Billing <billing@acme.example>',
      Destination: { ToAddresses: ['Bob <bob@example.com>'] },
      ReplyToAddresses: ['support@acme.example'],
      Content: {
        Simple: {
          Subject: { Data: 'Your invoice ✓', Charset: 'UTF-8' },
          Body: { Html: { Data: '<p>Hi</p>', Charset: 'UTF-8' }, Text: { Data: 'Hi', Charset: 'UTF-8' } },
          Headers: [
            { Name: 'X-Campaign', Value: 'nov' },
            { Name: 'List-Unsubscribe', Value: `<${url('bob')}>` },
            { Name: 'List-Unsubscribe-Post', Value: 'List-Unsubscribe=One-Click' },
          ],
        },
      },
      ConfigurationSetName: CONFIGURATION_SET,
      EmailTags: [
        { Name: 'email_id', Value: email.id },
        { Name: 'account_id', Value: email.accountId },
        { Name: 'mode', Value: 'live' },
        // The email's own tags ride along (SES copies them into every event's mail.tags), `t-` before each name.
        { Name: 'tags', Value: 'inline' },
        { Name: 't-category', Value: 'invoice' },
      ],
    });
  });

  it("tags a traced email with its trace's ids, not its tracestate (SES tag values cannot hold one)", () => {
    const ids = compactTrace({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', flags: 1 });
    const request = sendEmailRequest(
      { ...email, trace: `${ids} a=1,b=2` },
      copies[0] as OutgoingCopy,
      CONFIGURATION_SET,
    );
    expect(request.EmailTags).toContainEqual({ Name: 'trace', Value: ids });
    const untraced = sendEmailRequest(email, copies[0] as OutgoingCopy, CONFIGURATION_SET);
    expect(untraced.EmailTags?.map((tag) => tag.Name)).not.toContain('trace');
  });

  it('leaves out what the email does not have (no reply-to, no text part)', () => {
    const bare = { ...email, replyTo: [], text: undefined, headers: {} } as EmailMessage;
    const request = sendEmailRequest(bare, copies[1] as OutgoingCopy, CONFIGURATION_SET);
    expect(request.ReplyToAddresses).toBeUndefined();
    expect(request.Content?.Simple?.Body).toEqual({ Html: { Data: '<p>Hi</p>', Charset: 'UTF-8' } });
    expect(request.Content?.Simple?.Headers?.map((h) => h.Name)).toEqual(['List-Unsubscribe', 'List-Unsubscribe-Post']);
  });

  it('passes headers named like Object.prototype members as headers (a record without a prototype)', () => {
    // Arrange: as the API builds them.
    const headers: Record<string, string> = Object.create(null);
    for (const name of ['__proto__', 'constructor', 'toString']) headers[name] = `v-${name}`;

    // Act
    const request = sendEmailRequest({ ...email, headers }, copies[0] as OutgoingCopy, CONFIGURATION_SET);

    // Assert
    expect(request.Content?.Simple?.Headers?.slice(0, 3)).toEqual([
      { Name: '__proto__', Value: 'v-__proto__' },
      { Name: 'constructor', Value: 'v-constructor' },
      { Name: 'toString', Value: 'v-toString' },
    ]);
  });

  it('refuses a tag value SES would reject instead of sending an untraceable email', () => {
    expect(() => sendEmailRequest({ ...email, id: 'email 1' }, copies[0] as OutgoingCopy, CONFIGURATION_SET)).toThrow(
      /SES tag email_id/,
    );
  });
});

describe("the email's tags as SES message tags", () => {
  const tagsOf = (tags: EmailMessage['tags'], more: Partial<EmailMessage> = {}) =>
    sendEmailRequest({ ...email, ...more, tags }, copies[0] as OutgoingCopy, CONFIGURATION_SET).EmailTags;
  const many = (n: number, nameLength = 8) =>
    Array.from({ length: n }, (_, i) => ({ name: `${i}`.padStart(nameLength, 'n'), value: `v-${i}` }));

  it('sends every tag with its routing tags when all fit SES’s 50 (45 of them with a template)', () => {
    const fits = tagsOf(many(46));
    expect(fits).toHaveLength(50);
    expect(fits?.slice(3, 5)).toEqual([
      { Name: 'tags', Value: 'inline' },
      { Name: 't-nnnnnnn0', Value: 'v-0' },
    ]);
    expect(tagsOf(many(45), { templateId: 'tmpl_1' })).toHaveLength(50);
  });

  it('sends none of them, marked `stored`, when they do not fit: the SES mapper reads them from the email', () => {
    // 46 with a template, the API's maximum of 50, or a name of 255 or 256 characters (with `t-`, past SES's 256).
    for (const [tags, more] of [
      [many(46), { templateId: 'tmpl_1' }],
      [many(50), {}],
      [[{ name: 'a'.repeat(255), value: 'x' }], {}],
    ] as const) {
      expect(tagsOf(tags, more)).toEqual([
        { Name: 'email_id', Value: email.id },
        { Name: 'account_id', Value: email.accountId },
        { Name: 'mode', Value: 'live' },
        ...('templateId' in more ? [{ Name: 'template_id', Value: 'tmpl_1' }] : []),
        { Name: 'tags', Value: 'stored' },
      ]);
    }
  });

  it('names a tag once, with its last value, as the email’s events do; none is marked inline too', () => {
    expect(
      tagsOf([
        { name: 'plan', value: 'free' },
        { name: 'plan', value: 'pro' },
      ])?.slice(3),
    ).toEqual([
      { Name: 'tags', Value: 'inline' },
      { Name: 't-plan', Value: 'pro' },
    ]);
    expect(tagsOf([])?.slice(3)).toEqual([{ Name: 'tags', Value: 'inline' }]);
  });

  it('keeps a customer tag named like a routing tag apart from it (account_id, email_id, tags)', () => {
    const request = tagsOf([
      { name: 'account_id', value: 'acct_other' },
      { name: 'email_id', value: 'email_other' },
      { name: 'tags', value: 'stored' },
    ]);
    expect(request).toEqual([
      { Name: 'email_id', Value: email.id },
      { Name: 'account_id', Value: email.accountId },
      { Name: 'mode', Value: 'live' },
      { Name: 'tags', Value: 'inline' },
      { Name: 't-account_id', Value: 'acct_other' },
      { Name: 't-email_id', Value: 'email_other' },
      { Name: 't-tags', Value: 'stored' },
    ]);
  });

  it('is the exact EmailTags of the SendEmail command SES receives', async () => {
    const { provider } = harness();
    const tagged = {
      ...email,
      tags: [
        { name: 'plan', value: 'pro' },
        { name: 'cohort', value: '2026-11' },
      ],
    };

    await provider.send(tagged, [copies[0] as OutgoingCopy]);

    expect(requests().map((r) => r.EmailTags)).toEqual([
      [
        { Name: 'email_id', Value: email.id },
        { Name: 'account_id', Value: email.accountId },
        { Name: 'mode', Value: 'live' },
        { Name: 'tags', Value: 'inline' },
        { Name: 't-plan', Value: 'pro' },
        { Name: 't-cohort', Value: '2026-11' },
      ],
    ]);
  });
});

describe('send', () => {
  it('sends one SendEmail per copy, each to its recipient alone with its own unsubscribe link', async () => {
    // Arrange
    const { provider } = harness();

    // Act
    const outcomes = await provider.send(email, copies);

    // Assert
    expect(outcomes).toEqual([{ status: 'sent' }, { status: 'sent' }]);
    expect(requests()).toHaveLength(2);
    expect(requests().map((r) => r.Destination)).toEqual([
      { ToAddresses: ['Bob <bob@example.com>'] },
      { ToAddresses: ['carol@example.org'] },
    ]);
    expect(
      requests().map((r) => r.Content?.Simple?.Headers?.find((h) => h.Name === 'List-Unsubscribe')?.Value),
    ).toEqual([`<${url('bob')}>`, `<${url('carol')}>`]);
    for (const request of requests()) {
      expect(request.ConfigurationSetName).toBe(CONFIGURATION_SET);
      expect(request.Destination?.CcAddresses).toBeUndefined();
      expect(request.Destination?.BccAddresses).toBeUndefined();
    }
  });

  it.each([
    ['MessageRejected', MessageRejected],
    ['MailFromDomainNotVerifiedException', MailFromDomainNotVerifiedException],
    ['SendingPausedException', SendingPausedException],
    ['AccountSuspendedException', AccountSuspendedException],
    ['BadRequestException', BadRequestException],
  ] as const)(
    'turns %s for one copy into a refusal for that recipient (no retry); the other still goes',
    async (name, Type) => {
      // Arrange
      ses
        .on(SendEmailCommand, { Destination: { ToAddresses: ['carol@example.org'] } })
        .rejects(modelled(Type, 'no way'));
      const { provider, sleeps } = harness();

      // Act
      const outcomes = await provider.send(email, copies);

      // Assert
      expect(requests()).toHaveLength(2);
      expect(sleeps).toEqual([]);
      expect(outcomes).toEqual([{ status: 'sent' }, { status: 'refused', reason: `${name}: no way` }]);
    },
  );

  it('retries a throttled copy with doubling backoff, and sends it when SES lets it through', async () => {
    // Arrange
    const throttled = modelled(TooManyRequestsException, 'Maximum sending rate exceeded.');
    ses.on(SendEmailCommand).rejectsOnce(throttled).rejectsOnce(throttled).resolves({ MessageId: 'm' });
    const { provider, sleeps } = harness({ concurrency: 1 });

    // Act
    const outcomes = await provider.send(email, [copies[0] as OutgoingCopy]);

    // Assert
    expect(requests()).toHaveLength(3);
    expect(sleeps).toEqual([250, 500]);
    expect(outcomes).toEqual([{ status: 'sent' }]);
  });

  it.each([
    ['TooManyRequestsException', TooManyRequestsException],
    ['LimitExceededException', LimitExceededException],
  ] as const)(
    'says retry (later, by the send worker) for a copy still refused with %s after the backoff',
    async (name, Type) => {
      // Arrange
      ses.on(SendEmailCommand).rejects(modelled(Type, 'slow down'));
      const { provider, sleeps } = harness();

      // Act
      const outcomes = await provider.send(email, [copies[0] as OutgoingCopy]);

      // Assert: 1 attempt + 3 retries.
      expect(requests()).toHaveLength(4);
      expect(sleeps).toEqual([250, 500, 1000]);
      expect(outcomes).toEqual([{ status: 'retry', reason: `${name}: slow down` }]);
    },
  );

  it('gives each copy its own outcome: refused (final), retry for an unexpected error (name only), sent', async () => {
    // Arrange: three recipients: one refused, one hitting an unexpected error, one fine.
    const three = [
      ...copies,
      { to: 'dave@example.net', headers: listUnsubscribeHeaders(url('dave')) },
    ] as OutgoingCopy[];
    ses
      .on(SendEmailCommand, { Destination: { ToAddresses: ['Bob <bob@example.com>'] } })
      .rejects(modelled(NotFoundException, 'arn:aws:ses:eu-west-1:123456789012:configuration-set/x does not exist'));
    ses
      .on(SendEmailCommand, { Destination: { ToAddresses: ['carol@example.org'] } })
      .rejects(modelled(MessageRejected, 'Email address is not verified.'));
    const { provider } = harness();

    // Act
    const outcomes = await provider.send(email, three);

    // Assert
    expect(
      requests()
        .map((r) => r.Destination?.ToAddresses?.[0])
        .sort(),
    ).toEqual(['Bob <bob@example.com>', 'carol@example.org', 'dave@example.net'].sort());
    expect(outcomes).toEqual([
      { status: 'retry', reason: 'provider_error: NotFoundException' },
      { status: 'refused', reason: 'MessageRejected: Email address is not verified.' },
      { status: 'sent' },
    ]);
    expect(JSON.stringify(outcomes)).not.toContain('123456789012');
  });

  it('says retry for every copy of an outage (nothing reached SES), and never throws', async () => {
    // Arrange
    const outage = new Error('connect ETIMEDOUT');
    ses.on(SendEmailCommand).rejects(outage);
    const { provider } = harness();

    // Act
    const outcomes = await provider.send(email, copies);

    // Assert
    expect(requests()).toHaveLength(2);
    expect(outcomes).toEqual([
      { status: 'retry', reason: 'provider_error: Error' },
      { status: 'retry', reason: 'provider_error: Error' },
    ]);
  });

  it('never sends again a copy whose request may have reached SES (a reset once sent): send_outcome_unknown', async () => {
    // Arrange: the connection to SES is reset after the request went out for Bob; Carol's never connected.
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' });
    ses.on(SendEmailCommand, { Destination: { ToAddresses: ['Bob <bob@example.com>'] } }).rejects(reset);
    ses.on(SendEmailCommand, { Destination: { ToAddresses: ['carol@example.org'] } }).rejects(refused);
    const { provider } = harness();

    // Act
    const outcomes = await provider.send(email, copies);

    // Assert: Bob's may have been sent (SendEmail has no idempotency token), Carol's surely was not.
    expect(outcomes).toEqual([
      { status: 'refused', reason: 'send_outcome_unknown' },
      { status: 'retry', reason: 'provider_error: Error' },
    ]);
  });

  it('says refused for every copy SES refused (sending paused), each with SES’s reason', async () => {
    ses.on(SendEmailCommand).rejects(modelled(SendingPausedException, 'Sending is paused for this account.'));
    const { provider } = harness();
    const outcomes = await provider.send(email, copies);
    expect(outcomes).toEqual([
      { status: 'refused', reason: 'SendingPausedException: Sending is paused for this account.' },
      { status: 'refused', reason: 'SendingPausedException: Sending is paused for this account.' },
    ]);
  });

  it('never has more SendEmail calls in flight than its concurrency', async () => {
    // Arrange
    let inFlight = 0;
    let most = 0;
    ses.on(SendEmailCommand).callsFake(async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 2));
      inFlight--;
      return { MessageId: 'm' };
    });
    const many = Array.from({ length: 12 }, (_, i) => ({ to: `r${i}@example.com`, headers: {} }));
    const { provider } = harness({ concurrency: 3 });

    // Act
    await provider.send(email, many);

    // Assert
    expect(requests()).toHaveLength(12);
    expect(most).toBe(3);
  });
});

describe('mimeAddress', () => {
  it.each([
    ['bob@example.com', 'bob@example.com'],
    ['Bob <bob@example.com>', 'Bob <bob@example.com>'],
    ['"Bob" <bob@example.com>', 'Bob <bob@example.com>'],
    ['Smith, Bob <bob@example.com>', '"Smith, Bob" <bob@example.com>'],
    ['Zoë <zoe@example.com>', '=?UTF-8?B?Wm/Dqw==?= <zoe@example.com>'],
    ['info@bücher.example', 'info@xn--bcher-kva.example'],
  ])('%s → %s', (input, expected) => {
    expect(mimeAddress(input)).toBe(expected);
  });

  it('splits a long non-ASCII display name into encoded words of at most 75 characters', () => {
    const name = 'Ünïcödé '.repeat(12).trim();
    const encoded = mimeAddress(`${name} <a@example.com>`);
    const words = encoded.replace(' <a@example.com>', '').split(' ');
    expect(words.length).toBeGreaterThan(1);
    for (const word of words) expect(word.length).toBeLessThanOrEqual(75);
    const decoded = words
      .map((w) => Buffer.from(/^=\?UTF-8\?B\?(.*)\?=$/.exec(w)?.[1] ?? '', 'base64').toString('utf8'))
      .join('');
    expect(decoded).toBe(name);
  });
});

describe('tracking per sender domain', () => {
  const acme = { accountId: email.accountId, mode: 'live' as const };
  /** A domain repository holding acme.example with these flags, counting its reads. */
  function domainsWith(flags: { openTracking?: boolean; clickTracking?: boolean }) {
    const reads: string[] = [];
    return {
      reads,
      get: async (tenant: { accountId: string; mode: string }, id: string) => {
        reads.push(id);
        return tenant.accountId === acme.accountId ? { ...acme, id, name: 'acme.example', ...flags } : null;
      },
    };
  }
  const tracked = (flags: { openTracking?: boolean; clickTracking?: boolean }, now = () => NOW) => {
    const domains = domainsWith(flags);
    const provider = new SesEmailProvider({
      client: new SESv2Client({ region: 'eu-west-1' }),
      configurationSet: CONFIGURATION_SET,
      tracking: trackingLookup(domains as never, now),
    });
    return { provider, domains };
  };

  it.each([
    [{}, CONFIGURATION_SET],
    [{ openTracking: false, clickTracking: false }, CONFIGURATION_SET],
    [{ openTracking: true }, `${CONFIGURATION_SET}-open`],
    [{ clickTracking: true }, `${CONFIGURATION_SET}-click`],
    [{ openTracking: true, clickTracking: true }, `${CONFIGURATION_SET}-open-click`],
  ])('a domain with %j sends every copy with %s', async (flags, set) => {
    const { provider } = tracked(flags);

    await provider.send(email, copies);

    expect(requests()).toEqual(copies.map((copy) => sendEmailRequest(email, copy, set)));
    expect(requests().map((request) => request.ConfigurationSetName)).toEqual([set, set]);
  });

  it('reads the domain once a minute at most, whatever the number of emails and copies', async () => {
    let now = NOW;
    const { provider, domains } = tracked({ openTracking: true }, () => now);

    await provider.send(email, copies);
    await provider.send({ ...email, id: 'email_2' }, copies);
    now += 61_000;
    await provider.send({ ...email, id: 'email_3' }, copies);

    expect(domains.reads).toHaveLength(2);
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(6);
  });

  it('sends untracked, through the base set, when the domain cannot be read or is not the account’s', async () => {
    const failing = new SesEmailProvider({
      client: new SESv2Client({ region: 'eu-west-1' }),
      configurationSet: CONFIGURATION_SET,
      tracking: trackingLookup({ get: () => Promise.reject(new Error('throttled')) }, () => NOW),
    });
    const { provider: other } = tracked({ openTracking: true, clickTracking: true });

    expect(await failing.send(email, copies)).toEqual([{ status: 'sent' }, { status: 'sent' }]);
    await other.send({ ...email, accountId: 'acct_other' }, copies.slice(0, 1));

    expect(requests().map((request) => request.ConfigurationSetName)).toEqual([
      CONFIGURATION_SET,
      CONFIGURATION_SET,
      CONFIGURATION_SET,
    ]);
  });
});

describe('attachments', () => {
  it('go with every copy as Simple content Attachments: name, bytes, type, disposition, Content-ID, base64', async () => {
    // Arrange
    const { provider } = harness();
    const pdf = new Uint8Array([37, 80, 68, 70]);
    const logo = new Uint8Array([137, 80, 78, 71]);

    // Act
    const outcomes = await provider.send(email, copies, [
      {
        id: 'att_1',
        filename: 'invoice.pdf',
        size: 4,
        contentType: 'application/pdf',
        disposition: 'attachment',
        content: pdf,
      },
      {
        id: 'att_2',
        filename: 'logo.png',
        size: 4,
        contentType: 'image/png',
        disposition: 'inline',
        contentId: 'logo',
        content: logo,
      },
    ]);

    // Assert
    expect(outcomes).toEqual([{ status: 'sent' }, { status: 'sent' }]);
    expect(ses).toHaveReceivedCommandTimes(SendEmailCommand, 2);
    for (const request of requests()) {
      expect(request.Content?.Simple?.Attachments).toEqual([
        {
          FileName: 'invoice.pdf',
          RawContent: pdf,
          ContentType: 'application/pdf',
          ContentDisposition: 'ATTACHMENT',
          ContentTransferEncoding: 'BASE64',
        },
        {
          FileName: 'logo.png',
          RawContent: logo,
          ContentType: 'image/png',
          ContentDisposition: 'INLINE',
          ContentId: 'logo',
          ContentTransferEncoding: 'BASE64',
        },
      ]);
    }
  });

  it('are left out of a request without any', () => {
    expect(sendEmailRequest(email, copies[0] as OutgoingCopy, CONFIGURATION_SET).Content?.Simple).not.toHaveProperty(
      'Attachments',
    );
  });
});
