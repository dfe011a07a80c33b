// Use case: one-click unsubscribe (RFC 8058, spec §6.3). A valid link suppresses its recipient for the
// email's account and mode; email.unsubscribed fires only for an email sent within 30 days; the email keeps
// its delivery status. The suppression and the event are one write (the suppression item's outbox), recorded
// once per email and recipient, so a repeated POST (mail providers retry) changes nothing; the event is
// relayed right after, and swept by the reconciler if that fails.
import { createHash } from 'node:crypto';
import { ATTRIBUTION_WINDOW_MS } from '../../domain/email/unsubscribe';
import { NotFoundError } from '../../domain/errors';
import { emailEvent } from '../../domain/events';
import { suppressionEvent } from '../../domain/suppressions';
import { verifyToken } from '../../domain/tokens';
import { relay } from '../outbox';
import type { Clock } from '../ports';
import type { EventPublisher, Tenant } from '../webhooks/ports';
import type { EmailRecord, EmailRepository, LinkSigner, SuppressionList } from './ports';

export interface UnsubscribeDeps {
  readonly emails: EmailRepository;
  readonly suppressions: SuppressionList;
  readonly events: EventPublisher;
  readonly links: LinkSigner;
  readonly clock: Clock;
  /** The suppressionEvents stored format: a new suppression also records its suppression.added. */
  readonly suppressionEvents?: boolean;
}

export interface UnsubscribeLink {
  readonly email: EmailRecord;
  readonly recipient: string;
}

/** The email and recipient a link names; a forged, malformed or unknown link is a 404 that reveals nothing. */
export async function resolveUnsubscribeLink(
  deps: Pick<UnsubscribeDeps, 'emails' | 'links'>,
  token: string,
): Promise<UnsubscribeLink> {
  const notFound = new NotFoundError('Not found.');
  const claims = verifyToken('unsubscribe', token, await deps.links.secret());
  if (!claims?.a || !claims.m || !claims.e || !claims.r) throw notFound;
  // Who and what it was sent to and when: the email's item, never its body.
  const email = await deps.emails.get(claims.e, { metadataOnly: true });
  if (!email || email.accountId !== claims.a || email.mode !== claims.m) throw notFound;
  return { email, recipient: claims.r };
}

export async function unsubscribe(deps: UnsubscribeDeps, token: string): Promise<UnsubscribeLink> {
  const link = await resolveUnsubscribeLink(deps, token);
  const { email, recipient } = link;
  const tenant: Tenant = { accountId: email.accountId, mode: email.mode };
  const now = deps.clock.now();
  const suppression = {
    address: recipient,
    reason: 'unsubscribe' as const,
    createdAt: new Date(now).toISOString(),
    emailId: email.id,
  };
  // A scheduled email that was never sent (cancelled, or still waiting) has no send to attribute.
  const sentAt = Date.parse(email.sentAt ?? email.createdAt);
  const unsent = email.canceledAt || (email.scheduledAt && !email.sentAt);
  // suppression.added, when the address is not suppressed yet: its id derives from email and recipient too.
  const addedSeed = createHash('sha256').update(`suppression.added\nunsubscribe\n${email.id}\n${recipient}`).digest();
  const added =
    deps.suppressionEvents && !(await deps.suppressions.find(tenant, [recipient])).has(recipient)
      ? [suppressionEvent('suppression.added', tenant, suppression, now, (n) => addedSeed.subarray(0, n))]
      : [];
  if (unsent || now - sentAt > ATTRIBUTION_WINDOW_MS) {
    if (added.length)
      await relay(deps, deps.suppressions.outbox, await deps.suppressions.record(tenant, suppression, added));
    else await deps.suppressions.add(tenant, suppression);
    return link;
  }
  // The id derives from email and recipient (and the send): whoever records it, it is the same event.
  const seed = createHash('sha256').update(`unsubscribe\n${email.id}\n${recipient}`).digest();
  const event = emailEvent(
    email,
    recipient,
    'email.unsubscribed',
    { source: 'list-unsubscribe' },
    { at: now, idAt: sentAt },
    (n) => seed.subarray(0, n),
  );
  const recorded = await deps.suppressions.unsubscribe(tenant, suppression, [event, ...added]);
  await relay(deps, deps.suppressions.outbox, recorded);
  return link;
}
