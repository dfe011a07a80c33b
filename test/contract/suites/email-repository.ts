// Contract suite for the EmailRepository port's scheduling, run against DynamoEmailRepository (dynalite,
// DynamoDB Local) and InMemoryEmailRepository: releaseScheduled ends a scheduled email's wait once ('sent' or
// 'canceled'); listScheduled lists only waiting emails due by a time, soonest first. (DynamoDB-only batch
// writes are in dynamo-email-repository.ts; the event history is email-history.ts.)
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { EmailRecord, EmailRepository } from '../../../lambdas/app/emails/ports';
import type { RepositoryHarness } from './harness';

const T0 = Date.UTC(2025, 3, 1, 10, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

function newEmail(overrides: Partial<EmailRecord> = {}): EmailRecord {
  const id = `email_${randomBytes(8).toString('hex')}`;
  return {
    id,
    accountId: 'acct_contract',
    mode: 'live',
    from: 'Acme <billing@acme.example>',
    to: ['ada@example.com'],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'Invoice',
    text: 'Hello',
    headers: {},
    tags: [],
    createdAt: iso(T0),
    suppressed: [],
    unsubscribeUrls: { 'ada@example.com': `https://api.sendflow.test/v1/unsubscribe/${id}` },
    ...overrides,
  };
}

const scheduled = (atMs: number, overrides: Partial<EmailRecord> = {}) =>
  newEmail({ scheduledAt: iso(atMs), ...overrides });

export function emailRepositoryPortContract(harness: RepositoryHarness<EmailRepository>): void {
  const repo = () => harness.shared();

  it('releaseScheduled(sent) ends the wait once: the email comes back with sentAt; a second release is null', async () => {
    // Arrange
    const email = scheduled(T0 + 3_600_000);
    await repo().createMany([email]);

    // Act
    const sent = await repo().releaseScheduled(email.id, 'sent', iso(T0 + 3_600_000));
    const again = await repo().releaseScheduled(email.id, 'sent', iso(T0 + 3_600_500));
    const cancelLate = await repo().releaseScheduled(email.id, 'canceled', iso(T0 + 3_601_000));

    // Assert
    expect(sent).toEqual({ ...email, sentAt: iso(T0 + 3_600_000) });
    expect(again).toBeNull();
    expect(cancelLate).toBeNull();
    expect(await repo().get(email.id)).toEqual({ ...email, sentAt: iso(T0 + 3_600_000) });
  });

  it('releaseScheduled(canceled) ends the wait once: canceledAt is set; sending it afterwards is null', async () => {
    // Arrange
    const email = scheduled(T0 + 3_600_000);
    await repo().createMany([email]);

    // Act
    const canceled = await repo().releaseScheduled(email.id, 'canceled', iso(T0 + 60_000));
    const sendLate = await repo().releaseScheduled(email.id, 'sent', iso(T0 + 3_600_000));

    // Assert
    expect(canceled).toEqual({ ...email, canceledAt: iso(T0 + 60_000) });
    expect(sendLate).toBeNull();
    const stored = await repo().get(email.id);
    expect(stored?.canceledAt).toBe(iso(T0 + 60_000));
    expect(stored).not.toHaveProperty('sentAt');
  });

  it('releaseScheduled(): an email sent now waits for the send worker too, and is released once', async () => {
    // Arrange
    const now = newEmail();
    await repo().createMany([now]);

    // Act
    const sent = await repo().releaseScheduled(now.id, 'sent', iso(T0), ['gone@example.com']);
    const again = await repo().releaseScheduled(now.id, 'canceled', iso(T0));
    const unknown = await repo().releaseScheduled('email_unknown', 'sent', iso(T0));

    // Assert
    expect(sent).toEqual({ ...now, sentAt: iso(T0), suppressed: ['gone@example.com'] });
    expect(again).toBeNull();
    expect(unknown).toBeNull();
    expect(await repo().get(now.id)).toEqual(sent);
    expect(await repo().get('email_unknown')).toBeNull();
  });

  it('releaseScheduled(): of a send and a cancel racing, exactly one wins', async () => {
    // Arrange
    const email = scheduled(T0 + 60_000);
    await repo().createMany([email]);

    // Act
    const [sent, canceled] = await Promise.all([
      repo().releaseScheduled(email.id, 'sent', iso(T0 + 60_000)),
      repo().releaseScheduled(email.id, 'canceled', iso(T0 + 60_000)),
    ]);

    // Assert
    expect([sent, canceled].filter((r) => r !== null)).toHaveLength(1);
    const stored = await repo().get(email.id);
    expect(Boolean(stored?.sentAt) !== Boolean(stored?.canceledAt)).toBe(true);
  });

  it('listScheduled() lists only waiting emails due by the time (inclusive), soonest first, with sendAt in ms', async () => {
    // Arrange: fresh storage, since the listing spans every account.
    const fresh = await harness.fresh();
    const soon = scheduled(T0 + 1_000);
    const later = scheduled(T0 + 5_000, { accountId: 'acct_other', mode: 'test' });
    const exactlyDue = scheduled(T0 + 10_000);
    const notYet = scheduled(T0 + 10_001);
    const alreadySent = scheduled(T0 + 2_000, { sentAt: iso(T0 + 2_000) });
    const alreadyCanceled = scheduled(T0 + 3_000, { canceledAt: iso(T0) });
    // Created in an order unlike their due times.
    await fresh.createMany([
      exactlyDue,
      notYet,
      newEmail({ sentAt: iso(T0) }),
      later,
      alreadySent,
      soon,
      alreadyCanceled,
    ]);

    // Act
    const due = await fresh.listScheduled(T0 + 10_000, 100);

    // Assert
    expect(due).toEqual([
      { id: soon.id, sendAt: T0 + 1_000 },
      { id: later.id, sendAt: T0 + 5_000 },
      { id: exactlyDue.id, sendAt: T0 + 10_000 },
    ]);
  });

  it('listScheduled() drops an email once it is sent or cancelled, and honours the limit', async () => {
    // Arrange
    const fresh = await harness.fresh();
    const emails = [1, 2, 3, 4].map((i) => scheduled(T0 + i * 1_000));
    await fresh.createMany(emails);
    const [first, second, third, fourth] = emails.map((e) => e.id);

    // Act
    await fresh.releaseScheduled(first as string, 'sent', iso(T0 + 1_000));
    await fresh.releaseScheduled(third as string, 'canceled', iso(T0 + 1_500));
    const all = await fresh.listScheduled(T0 + 60_000, 100);
    const one = await fresh.listScheduled(T0 + 60_000, 1);

    // Assert
    expect(all.map((e) => e.id)).toEqual([second, fourth]);
    expect(one.map((e) => e.id)).toEqual([second]);
  });

  it('listScheduled() far in the future lists every waiting email; before any is due, none', async () => {
    // Arrange
    const fresh = await harness.fresh();
    const inAMonth = scheduled(T0 + 30 * 86_400_000);
    await fresh.createMany([inAMonth]);

    // Act
    const early = await fresh.listScheduled(T0, 10);
    const eventually = await fresh.listScheduled(Number.MAX_SAFE_INTEGER, 10);

    // Assert
    expect(early).toEqual([]);
    expect(eventually).toEqual([{ id: inAMonth.id, sendAt: T0 + 30 * 86_400_000 }]);
  });
}
