// Use case: accept one or a batch of emails (POST /v1/emails, /v1/emails/batch): store them, hand each to
// the provider of its mode. Validation happened at the edge, all-or-nothing for batches.
import { bareAddress, type EmailMessage, recipients } from '../../domain/email/email';
import { quotaWindow, secondsUntilReset } from '../../domain/email/quota';
import { NotFoundError, RateLimitedError } from '../../domain/errors';
import type { SendflowEvent } from '../../domain/events';
import { timeOrderedId } from '../../domain/ids';
import { PLANS } from '../../domain/plans';
import type { Clock, Principal, QuotaCounter, RandomBytes } from '../ports';
import type { EventPublisher, Tenant } from '../webhooks/ports';
import type { EmailProvider, EmailRecord, EmailRepository, SuppressionList } from './ports';

export interface SendEmailDeps {
  readonly emails: EmailRepository;
  /** The provider for a mode: the simulator in test mode (and everywhere locally). */
  readonly providerFor: (mode: Tenant['mode']) => EmailProvider;
  readonly quotas: QuotaCounter;
  readonly suppressions: SuppressionList;
  readonly events: EventPublisher;
  readonly clock: Clock;
  readonly random: RandomBytes;
}

export type EmailDraft = Omit<EmailMessage, 'id' | 'accountId' | 'mode' | 'createdAt'>;

/**
 * Accepts emails for the caller's account and mode. Live mode counts each email against the plan's monthly
 * quota first (test mode is simulated and free): past it, 429 monthly_quota_exceeded and nothing is sent.
 * Recipients on the suppression list are skipped; with none left, email.suppressed and nothing is sent.
 */
export async function sendEmails(
  deps: SendEmailDeps,
  caller: Principal,
  drafts: readonly EmailDraft[],
): Promise<string[]> {
  const now = deps.clock.now();
  const tenant: Tenant = { accountId: caller.accountId, mode: caller.mode };
  if (caller.mode === 'live') {
    const window = quotaWindow(now);
    const limit = PLANS[caller.plan].emailsPerMonth;
    if (!(await deps.quotas.consume(caller.accountId, window, drafts.length, limit))) {
      throw new RateLimitedError(
        `Monthly email quota of ${limit} (plan ${caller.plan}) reached; it resets at the start of next month (UTC).`,
        secondsUntilReset(window, now),
        'monthly_quota_exceeded',
      );
    }
  }
  const suppressions = await deps.suppressions.find(
    tenant,
    drafts.flatMap((d) => recipients(d).map(bareAddress)),
  );
  const emails: EmailRecord[] = drafts.map((draft) => ({
    ...draft,
    id: timeOrderedId('email', now, deps.random),
    accountId: tenant.accountId,
    mode: tenant.mode,
    createdAt: new Date(now).toISOString(),
    events: [],
    suppressed: recipients(draft).filter((r) => suppressions.has(bareAddress(r))),
  }));
  await deps.emails.createMany(emails);
  const provider = deps.providerFor(tenant.mode);
  for (const email of emails) {
    const remaining = recipients(email).filter((r) => !email.suppressed.includes(r));
    if (remaining.length > 0) await provider.send(email, remaining);
    else await deps.events.publish(suppressedEvents(deps, email, suppressions));
  }
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

/** Every recipient suppressed: nothing is sent, and each recipient gets an email.suppressed event. */
function suppressedEvents(
  deps: Pick<SendEmailDeps, 'clock' | 'random'>,
  email: EmailRecord,
  suppressions: Map<string, { reason: string }>,
): SendflowEvent[] {
  const now = deps.clock.now();
  return email.suppressed.map((recipient) => ({
    id: timeOrderedId('evt', now, deps.random),
    type: 'email.suppressed',
    accountId: email.accountId,
    mode: email.mode,
    timestamp: new Date(now).toISOString(),
    emailId: email.id,
    to: bareAddress(recipient),
    data: {
      from: email.from,
      subject: email.subject,
      reason: suppressions.get(bareAddress(recipient))?.reason ?? 'suppressed',
    },
  }));
}
