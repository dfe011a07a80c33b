// Contract suite for the EmailBodyStore port (the body of an email, written once at accept), run against the
// DynamoDB adapter (dynalite, DynamoDB Local), the local runtime's files and map, and the in-memory fake: a body
// comes back exactly as written (headers in order, named like Object.prototype members, on no prototype), an
// unknown email has none, and a body whose email's retention has passed is not returned.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { EmailBody, EmailBodyStore } from '../../../lambdas/app/emails/ports';

/** Builds a store whose clock says `now` (epoch ms), over the same storage each time. */
export type BodyStoreFactory = (now: () => number) => EmailBodyStore;

const NOW = Date.UTC(2026, 10, 25);
const id = () => `email_${randomBytes(8).toString('hex')}`;

export function emailBodyStoreContract(make: BodyStoreFactory): void {
  it('gives back each body exactly as written, html and text alike, headers in order on no prototype', async () => {
    // Arrange
    const store = make(() => NOW);
    const headers = JSON.parse('{"X-A":"1","__proto__":"p","constructor":"c"}');
    const bodies: { emailId: string; body: EmailBody; expiresAt: number }[] = [
      { emailId: id(), body: { html: `<p>${'é'.repeat(40_000)}</p>`, headers }, expiresAt: NOW / 1000 + 60 },
      { emailId: id(), body: { text: 'plain', headers: {} }, expiresAt: NOW / 1000 + 60 },
    ];

    // Act
    await store.putMany(bodies);
    const read = await Promise.all(bodies.map((b) => store.get(b.emailId)));

    // Assert
    expect(read).toEqual(bodies.map((b) => b.body));
    expect(Object.getPrototypeOf(read[0]?.headers)).toBeNull();
    expect(Object.entries(read[0]?.headers ?? {})).toEqual(Object.entries(headers));
    expect(read[1]).not.toHaveProperty('html');
  });

  it('gives back the attachments’ metadata written with the body, in order', async () => {
    // Arrange
    const store = make(() => NOW);
    const emailId = id();
    const attachments = [
      { id: 'att_1', filename: 'invoice.pdf', size: 1000, contentType: 'application/pdf', disposition: 'attachment' },
      {
        id: 'att_2',
        filename: 'logo.png',
        size: 10,
        contentType: 'image/png',
        disposition: 'inline',
        contentId: 'logo',
      },
    ] as const;

    // Act
    await store.putMany([{ emailId, body: { text: 'x', headers: {}, attachments }, expiresAt: NOW / 1000 + 60 }]);

    // Assert
    expect(await store.get(emailId)).toEqual({ text: 'x', headers: {}, attachments });
  });

  it('has no body for an email it was never given', async () => {
    expect(await make(() => NOW).get(id())).toBeNull();
  });

  it('returns no body once its email’s retention has passed (storage deletes it lazily)', async () => {
    // Arrange
    const emailId = id();
    await make(() => NOW).putMany([{ emailId, body: { text: 'bye', headers: {} }, expiresAt: NOW / 1000 + 60 }]);

    // Act / Assert
    expect(await make(() => NOW + 59_000).get(emailId)).toEqual({ text: 'bye', headers: {} });
    expect(await make(() => NOW + 60_000).get(emailId)).toBeNull();
  });

  it('gives back a scheduled email’s body, which expires long after now, as one sent at once', async () => {
    // Arrange: S3 keys the two under different prefixes (lifecycle rules); the port hides that.
    const store = make(() => NOW);
    const [now, later] = [id(), id()];
    await store.putMany([
      { emailId: now, body: { text: 'now', headers: {} }, expiresAt: NOW / 1000 + 60 },
      { emailId: later, body: { text: 'later', headers: {} }, expiresAt: NOW / 1000 + 90 * 86_400 },
    ]);

    // Act / Assert
    expect(await store.get(now)).toEqual({ text: 'now', headers: {} });
    expect(await store.get(later)).toEqual({ text: 'later', headers: {} });
  });
}
