// Use case: accept one or a batch of emails (POST /v1/emails, /v1/emails/batch): store them, hand each to
// the provider of its mode. Validation happened at the edge, all-or-nothing for batches.
import type { EmailMessage } from '../../domain/email/email';
import { NotFoundError } from '../../domain/errors';
import { timeOrderedId } from '../../domain/ids';
import type { Clock, RandomBytes } from '../ports';
import type { Tenant } from '../webhooks/ports';
import type { EmailProvider, EmailRecord, EmailRepository } from './ports';

export interface SendEmailDeps {
  readonly emails: EmailRepository;
  /** The provider for a mode: the simulator in test mode (and everywhere locally). */
  readonly providerFor: (mode: Tenant['mode']) => EmailProvider;
  readonly clock: Clock;
  readonly random: RandomBytes;
}

export type EmailDraft = Omit<EmailMessage, 'id' | 'accountId' | 'mode' | 'createdAt'>;

export async function sendEmails(
  deps: SendEmailDeps,
  tenant: Tenant,
  drafts: readonly EmailDraft[],
): Promise<string[]> {
  const now = deps.clock.now();
  const emails: EmailRecord[] = drafts.map((draft) => ({
    ...draft,
    id: timeOrderedId('email', now, deps.random),
    accountId: tenant.accountId,
    mode: tenant.mode,
    createdAt: new Date(now).toISOString(),
    events: [],
  }));
  await deps.emails.createMany(emails);
  const provider = deps.providerFor(tenant.mode);
  for (const email of emails) await provider.send(email);
  return emails.map((email) => email.id);
}

/** An email of the caller's account and mode; anything else is 404. */
export async function getEmail(deps: Pick<SendEmailDeps, 'emails'>, tenant: Tenant, id: string): Promise<EmailRecord> {
  const email = await deps.emails.get(id);
  if (!email || email.accountId !== tenant.accountId || email.mode !== tenant.mode) {
    throw new NotFoundError(`No email with id ${id}.`);
  }
  return email;
}
