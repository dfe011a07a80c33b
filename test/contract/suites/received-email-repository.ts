// Contract suite for the ReceivedEmailRepository port, run against DynamoReceivedEmailRepository (dynalite,
// DynamoDB Local) and InMemoryReceivedEmailRepository: create stores once (a replay is null and changes
// nothing) with its events in the outbox; get is per tenant and skips expired emails; list is newest first, in
// pages with has_more, `after` (older) and `before` (newer) cursors, and leaves expired emails out.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { ReceivedEmail, ReceivedEmailRepository } from '../../../lambdas/app/inbound/ports';
import type { Tenant } from '../../../lambdas/app/webhooks/ports';
import { newEvent } from '../../../lambdas/domain/events';
import { receivedEmailId } from '../../../lambdas/domain/inbound';
import type { RepositoryHarness } from './harness';

const T0 = Date.UTC(2026, 10, 26, 7, 0, 0);
const IN_A_DAY = Math.floor(Date.now() / 1000) + 86_400;

const newTenant = (): Tenant => ({ accountId: `acct_${randomBytes(6).toString('hex')}`, mode: 'live' });

function newEmail(tenant: Tenant, atMs = T0, overrides: Partial<ReceivedEmail> = {}): ReceivedEmail {
  const sourceId = randomBytes(8).toString('hex');
  const id = receivedEmailId(atMs, sourceId, tenant.accountId);
  return {
    ...tenant,
    id,
    createdAt: new Date(atMs).toISOString(),
    from: 'Ada <ada@sender.example>',
    to: ['team@rx.example'],
    cc: [],
    bcc: [],
    replyTo: [],
    receivedFor: ['team@rx.example'],
    subject: 'Hello\r\nBcc: injected@example.com',
    messageId: '<m1@sender.example>',
    attachments: [
      {
        id: 'att_1',
        filename: 'a.pdf',
        contentType: 'application/pdf',
        contentDisposition: 'attachment',
        contentId: null,
        size: 3,
        key: `emails/${id}/attachments/att_1`,
      },
    ],
    verdicts: null,
    rawKey: `emails/${id}/raw.eml`,
    rawSize: 120,
    bodyKey: `emails/${id}/body.json`,
    sourceId,
    expiresAt: IN_A_DAY,
    ...overrides,
  };
}

const event = (email: ReceivedEmail) =>
  newEvent(
    { type: 'email.received', accountId: email.accountId, mode: email.mode, at: T0, data: { email_id: email.id } },
    randomBytes,
  );

export function receivedEmailRepositoryContract(harness: RepositoryHarness<ReceivedEmailRepository>): void {
  const repo = () => harness.shared();

  it('create() stores the email as given (verdicts too) with its event in the outbox; get() reads it back', async () => {
    // Arrange
    const tenant = newTenant();
    const email = newEmail(tenant, T0, {
      verdicts: { spam: 'pass', virus: 'pass', spf: 'gray', dkim: 'fail', dmarc: 'processing_failed' },
    });
    const received = event(email);

    // Act
    const pending = await repo().create(email, [received]);

    // Assert
    expect(pending?.events).toEqual([received]);
    expect(await repo().get(tenant, email.id)).toEqual(email);
    const due = await repo().outbox.due(Number.MAX_SAFE_INTEGER, 1000);
    expect(due.flatMap((p) => p.events).map((e) => e.id)).toContain(received.id);
    if (pending) await repo().outbox.clear(pending);
  });

  it('create() of an email stored already is null and keeps the first (a replay of the same arrival)', async () => {
    // Arrange
    const tenant = newTenant();
    const email = newEmail(tenant);
    await repo().create(email, []);

    // Act
    const again = await repo().create({ ...email, subject: 'changed' }, [event(email)]);

    // Assert
    expect(again).toBeNull();
    expect((await repo().get(tenant, email.id))?.subject).toBe(email.subject);
  });

  it('create() of a full email replaces a failed one of the same id (a retried dead letter); never the other way', async () => {
    // Arrange
    const tenant = newTenant();
    const failed = newEmail(tenant, T0, {
      subject: '',
      attachments: [],
      status: 'failed',
      notes: [{ code: 'storage_failed', message: 'could not be stored' }],
      omitted: { receivedFor: 2 },
    });
    const full = { ...newEmail(tenant), id: failed.id, sourceId: failed.sourceId };
    await repo().create(failed, [event(failed)]);

    // Act
    const again = await repo().create({ ...failed, subject: 'second failure' }, [event(failed)]);
    const replaced = await repo().create(full, [event(full)]);
    const afterwards = await repo().create(failed, [event(failed)]);

    // Assert: the full one is read whole, without the failed one's status, notes or omitted.
    expect(again).toBeNull();
    expect(replaced?.events).toHaveLength(1);
    expect(afterwards).toBeNull();
    expect(await repo().get(tenant, failed.id)).toEqual(full);
    for (const pending of await repo().outbox.due(Number.MAX_SAFE_INTEGER, 1000)) await repo().outbox.clear(pending);
  });

  it('reads partial emails whole (status, notes, omitted), and items written before those fields as received', async () => {
    const tenant = newTenant();
    const partial = newEmail(tenant, T0, {
      status: 'partial',
      notes: [{ code: 'fields_cut', message: 'Too long to list whole' }],
      omitted: { to: 3, attachments: 1 },
    });
    const pending = await repo().create(partial, [event(partial)]);

    expect(await repo().get(tenant, partial.id)).toEqual(partial);
    if (pending) await repo().outbox.clear(pending);
  });

  it('keeps tenants apart; an expired email is not read', async () => {
    // Arrange
    const tenant = newTenant();
    const other = newTenant();
    const email = newEmail(tenant);
    const expired = newEmail(tenant, T0 - 1000, { expiresAt: Math.floor(Date.now() / 1000) - 1 });
    await repo().create(email, []);
    await repo().create(expired, []);

    // Act
    const fromOther = await repo().get(other, email.id);

    // Assert
    expect(fromOther).toBeNull();
    expect(await repo().get(tenant, expired.id)).toBeNull();
    expect((await repo().list(other, { limit: 10 })).emails).toEqual([]);
    expect((await repo().list(tenant, { limit: 10 })).emails.map((e) => e.id)).toEqual([email.id]);
  });

  it('list() is newest first, in pages: has_more, after (older), before (newer)', async () => {
    // Arrange
    const tenant = newTenant();
    const emails = [0, 1, 2, 3, 4].map((i) => newEmail(tenant, T0 + i * 1000));
    for (const email of [...emails].reverse()) await repo().create(email, []);
    const ids = emails.map((e) => e.id).reverse(); // newest first

    // Act
    const first = await repo().list(tenant, { limit: 2 });
    const second = await repo().list(tenant, { limit: 2, after: ids[1] });
    const last = await repo().list(tenant, { limit: 2, after: ids[3] });
    const newer = await repo().list(tenant, { limit: 2, before: ids[4] });
    const newest = await repo().list(tenant, { limit: 2, before: ids[1] });

    // Assert
    expect(first).toEqual({ emails: [emails[4], emails[3]], hasMore: true });
    expect(second.emails.map((e) => e.id)).toEqual([ids[2], ids[3]]);
    expect(second.hasMore).toBe(true);
    expect(last.emails.map((e) => e.id)).toEqual([ids[4]]);
    expect(last.hasMore).toBe(false);
    expect(newer.emails.map((e) => e.id)).toEqual([ids[2], ids[3]]);
    expect(newer.hasMore).toBe(true);
    expect(newest.emails.map((e) => e.id)).toEqual([ids[0]]);
    expect(newest.hasMore).toBe(false);
  });
}
