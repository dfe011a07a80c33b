// Unit tests of one-click unsubscribe (lambdas/app/emails/unsubscribe.ts) on in-memory fakes with a fake clock:
// a genuine link suppresses its recipient in the email's account and mode; email.unsubscribed fires only for an
// email sent within 30 days, once across repeated POSTs; forged, malformed,
// other-kind links and links naming another tenant's email are a 404 that changes nothing.
import { beforeEach, describe, expect, it } from 'vitest';
import type { EmailRecord } from '../../lambdas/app/emails/ports';
import { resolveUnsubscribeLink, type UnsubscribeDeps, unsubscribe } from '../../lambdas/app/emails/unsubscribe';
import { NotFoundError } from '../../lambdas/domain/errors';
import { signToken } from '../../lambdas/domain/tokens';
import {
  FakeClock,
  fixedLinks,
  InMemoryEmailRepository,
  InMemorySuppressionList,
  RecordingEventPublisher,
} from '../support/fakes';

const T0 = Date.UTC(2025, 5, 10, 9, 0, 0);
const DAY = 86_400_000;
const SECRET = 'unsubscribe-link-secret';
const ACCOUNT = 'acct_list';

function newEmail(overrides: Partial<EmailRecord> = {}): EmailRecord {
  return {
    id: 'email_01jxunsub',
    accountId: ACCOUNT,
    mode: 'live',
    from: 'Acme News <news@acme.example>',
    to: ['Ada <Ada@Example.com>', 'bob@example.com'],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'June newsletter',
    html: '<p>News</p>',
    headers: {},
    tags: [],
    createdAt: new Date(T0).toISOString(),
    suppressed: [],
    unsubscribeUrls: {},
    ...overrides,
  };
}

/** The token the sender signs for a recipient of an email (see send-emails.ts). */
const tokenFor = (email: Pick<EmailRecord, 'id' | 'accountId' | 'mode'>, recipient: string, secret = SECRET) =>
  signToken('unsubscribe', { a: email.accountId, m: email.mode, e: email.id, r: recipient }, secret);

function setup() {
  const clock = new FakeClock(T0 + 60_000);
  const emails = new InMemoryEmailRepository();
  const suppressions = new InMemorySuppressionList();
  const events = new RecordingEventPublisher();
  const deps: UnsubscribeDeps = { emails, suppressions, events, links: fixedLinks(SECRET), clock };
  const published = () => events.published.flatMap((p) => p.events);
  return { clock, emails, suppressions, events, deps, published };
}

describe('unsubscribe', () => {
  let s: ReturnType<typeof setup>;
  const email = newEmail();
  beforeEach(async () => {
    s = setup();
    await s.emails.createMany([email]);
  });

  it('suppresses the recipient in the email’s account and mode, as an unsubscribe caused by that email', async () => {
    // Act
    const link = await unsubscribe(s.deps, tokenFor(email, 'ada@example.com'));

    // Assert
    expect(link).toMatchObject({ recipient: 'ada@example.com', email: { id: email.id } });
    const found = await s.suppressions.find({ accountId: ACCOUNT, mode: 'live' }, [
      'ada@example.com',
      'bob@example.com',
    ]);
    expect([...found.values()]).toEqual([
      {
        address: 'ada@example.com',
        reason: 'unsubscribe',
        createdAt: new Date(T0 + 60_000).toISOString(),
        emailId: email.id,
      },
    ]);
    expect((await s.suppressions.find({ accountId: ACCOUNT, mode: 'test' }, ['ada@example.com'])).size).toBe(0);
  });

  it('fires email.unsubscribed with from, subject and source, for that recipient', async () => {
    // Act
    await unsubscribe(s.deps, tokenFor(email, 'ada@example.com'));

    // Assert
    const events = s.published();
    expect(events).toHaveLength(1);
    expect(events[0]).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-z]{26}$/),
      type: 'email.unsubscribed',
      accountId: ACCOUNT,
      mode: 'live',
      timestamp: new Date(T0 + 60_000).toISOString(),
      emailId: email.id,
      to: 'ada@example.com',
      data: { from: email.from, subject: email.subject, source: 'list-unsubscribe' },
    });
  });

  it('records and publishes the event once across repeated POSTs, and keeps the first suppression', async () => {
    // Act
    await unsubscribe(s.deps, tokenFor(email, 'ada@example.com'));
    s.clock.advance(5 * 60_000);
    await unsubscribe(s.deps, tokenFor(email, 'ada@example.com'));
    s.clock.advance(DAY);
    await unsubscribe(s.deps, tokenFor(email, 'ada@example.com'));

    // Assert
    const ids = s.published().map((e) => e.id);
    expect(ids).toHaveLength(1);
    expect(s.suppressions.outbox.waiting()).toEqual([]);
    const kept = await s.suppressions.find({ accountId: ACCOUNT, mode: 'live' }, ['ada@example.com']);
    expect(kept.get('ada@example.com')?.createdAt).toBe(new Date(T0 + 60_000).toISOString());
  });

  it('gives each recipient and each email its own event id', async () => {
    // Arrange
    const other = newEmail({ id: 'email_01jxother' });
    await s.emails.createMany([other]);

    // Act
    await unsubscribe(s.deps, tokenFor(email, 'ada@example.com'));
    await unsubscribe(s.deps, tokenFor(email, 'bob@example.com'));
    await unsubscribe(s.deps, tokenFor(other, 'ada@example.com'));

    // Assert
    expect(new Set(s.published().map((e) => e.id)).size).toBe(3);
  });

  it('keeps the first reason: an address already suppressed by a bounce stays a bounce, the event still fires', async () => {
    // Arrange
    const tenant = { accountId: ACCOUNT, mode: 'live' as const };
    await s.suppressions.add(tenant, {
      address: 'bob@example.com',
      reason: 'hard_bounce',
      createdAt: new Date(T0).toISOString(),
    });

    // Act
    await unsubscribe(s.deps, tokenFor(email, 'bob@example.com'));

    // Assert
    expect((await s.suppressions.find(tenant, ['bob@example.com'])).get('bob@example.com')?.reason).toBe('hard_bounce');
    expect(s.published().map((e) => e.type)).toEqual(['email.unsubscribed']);
  });

  it('fires the event up to exactly 30 days after the send, and not a millisecond later (the suppression still counts)', async () => {
    // Arrange
    const late = newEmail({ id: 'email_01jxlate' });
    await s.emails.createMany([late]);

    // Act
    s.clock.set(T0 + 30 * DAY);
    await unsubscribe(s.deps, tokenFor(email, 'ada@example.com'));
    s.clock.set(T0 + 30 * DAY + 1);
    await unsubscribe(s.deps, tokenFor(late, 'bob@example.com'));

    // Assert
    expect(s.published().map((e) => [e.emailId, e.to])).toEqual([[email.id, 'ada@example.com']]);
    const found = await s.suppressions.find({ accountId: ACCOUNT, mode: 'live' }, [
      'ada@example.com',
      'bob@example.com',
    ]);
    expect([...found.keys()].sort()).toEqual(['ada@example.com', 'bob@example.com']);
  });

  it('counts the 30 days from when a scheduled email was sent, not from when it was accepted', async () => {
    // Arrange: accepted at T0, sent 20 days later; the link is used 45 days after acceptance.
    const scheduled = newEmail({
      id: 'email_01jxsched',
      scheduledAt: new Date(T0 + 20 * DAY).toISOString(),
      sentAt: new Date(T0 + 20 * DAY).toISOString(),
    });
    await s.emails.createMany([scheduled]);
    s.clock.set(T0 + 45 * DAY);

    // Act
    await unsubscribe(s.deps, tokenFor(scheduled, 'ada@example.com'));

    // Assert
    expect(s.published().map((e) => e.emailId)).toEqual([scheduled.id]);
  });

  it('fires no event for a cancelled email (it never reached anyone), but suppresses', async () => {
    // Arrange
    const canceled = newEmail({
      id: 'email_01jxcanc',
      scheduledAt: new Date(T0 + DAY).toISOString(),
      canceledAt: new Date(T0 + 1_000).toISOString(),
    });
    await s.emails.createMany([canceled]);

    // Act
    await unsubscribe(s.deps, tokenFor(canceled, 'ada@example.com'));

    // Assert
    expect(s.published()).toEqual([]);
    expect((await s.suppressions.find(canceled, ['ada@example.com'])).size).toBe(1);
  });

  it('fires no event for a scheduled email still waiting (nothing was sent), but suppresses', async () => {
    // Arrange
    const waiting = newEmail({ id: 'email_01jxwait', scheduledAt: new Date(T0 + DAY).toISOString() });
    await s.emails.createMany([waiting]);

    // Act
    await unsubscribe(s.deps, tokenFor(waiting, 'bob@example.com'));

    // Assert
    expect(s.published()).toEqual([]);
    expect((await s.suppressions.find(waiting, ['bob@example.com'])).get('bob@example.com')?.reason).toBe(
      'unsubscribe',
    );
  });

  it('fires once also when the address was suppressed before for another reason, which stays', async () => {
    // Arrange
    const tenant = { accountId: ACCOUNT, mode: 'live' as const };
    await s.suppressions.add(tenant, {
      address: 'bob@example.com',
      reason: 'complaint',
      createdAt: new Date(T0).toISOString(),
    });

    // Act
    await unsubscribe(s.deps, tokenFor(email, 'bob@example.com'));
    s.clock.advance(3_600_000);
    await unsubscribe(s.deps, tokenFor(email, 'bob@example.com'));

    // Assert
    const ids = s.published().map((e) => e.id);
    expect(ids).toHaveLength(1);
    expect((await s.suppressions.find(tenant, ['bob@example.com'])).get('bob@example.com')?.reason).toBe('complaint');
  });

  describe('links that are not genuine: 404, nothing suppressed, nothing published', () => {
    const genuine = () => tokenFor(email, 'ada@example.com');
    const forgedPayload = () => {
      const [, signature] = genuine().split('.');
      const body = Buffer.from(
        JSON.stringify({ a: ACCOUNT, m: 'live', e: email.id, r: 'victim@example.com' }),
      ).toString('base64url');
      return `${body}.${signature}`;
    };

    it.each([
      ['a forged payload with a genuine signature', forgedPayload],
      ['a flipped signature', () => `${genuine().slice(0, -1)}${genuine().endsWith('A') ? 'B' : 'A'}`],
      ['another secret', () => tokenFor(email, 'ada@example.com', `${SECRET}-old`)],
      [
        'a confirmation token with the same claims',
        () => signToken('confirm', { a: ACCOUNT, m: 'live', e: email.id, r: 'ada@example.com' }, SECRET),
      ],
      ['a malformed token', () => 'not-a-token'],
      ['an empty token', () => ''],
      ['a token without a recipient', () => signToken('unsubscribe', { a: ACCOUNT, m: 'live', e: email.id }, SECRET)],
      ['a token for an unknown email', () => tokenFor({ ...email, id: 'email_unknown' }, 'ada@example.com')],
      [
        'a genuine token naming another account’s email',
        () => tokenFor({ ...email, accountId: 'acct_attacker' }, 'ada@example.com'),
      ],
      ['a genuine token naming the other mode', () => tokenFor({ ...email, mode: 'test' }, 'ada@example.com')],
    ])('%s', async (_name, token) => {
      // Act
      const error = await unsubscribe(s.deps, token()).catch((e: unknown) => e);

      // Assert
      expect(error).toBeInstanceOf(NotFoundError);
      expect((error as NotFoundError).message).toBe('Not found.');
      expect(s.suppressions.items.size).toBe(0);
      expect(s.published()).toEqual([]);
    });
  });
});

describe('resolveUnsubscribeLink', () => {
  it('names the email (its item, never its body) and recipient without changing anything (the GET page)', async () => {
    // Arrange
    const s = setup();
    const email = newEmail();
    await s.emails.createMany([email]);

    // Act
    const link = await resolveUnsubscribeLink(s.deps, tokenFor(email, 'bob@example.com'));

    // Assert
    const { html: _html, text: _text, ...meta } = email;
    expect(link).toEqual({ email: { ...meta, headers: {}, unsubscribeUrls: {} }, recipient: 'bob@example.com' });
    expect(s.suppressions.items.size).toBe(0);
    expect(s.published()).toEqual([]);
  });
});
