// Use cases for sending: accept one or a batch of emails (POST /v1/emails, /v1/emails/batch), send a
// scheduled email when its time comes, cancel one before. Validation happened at the edge, all or nothing.
import { bareAddress, type EmailMessage, recipients } from '../../domain/email/email';
import { EMAIL_LIMITS, storedBytes } from '../../domain/email/limits';
import { quotaWindow, secondsUntilReset } from '../../domain/email/quota';
import { listUnsubscribeHeaders } from '../../domain/email/unsubscribe';
import { ConflictError, NotFoundError, RateLimitedError, ValidationError } from '../../domain/errors';
import { type EventType, emailEvent, type SendflowEvent } from '../../domain/events';
import { timeOrderedId } from '../../domain/ids';
import { PLANS } from '../../domain/plans';
import { signToken } from '../../domain/tokens';
import { isVerifiedSender } from '../domains/domains';
import type { DomainRepository } from '../domains/ports';
import type { Clock, Principal, QuotaCounter, RandomBytes } from '../ports';
import type { EventPublisher, Tenant } from '../webhooks/ports';
import type {
  EmailProvider,
  EmailRecord,
  EmailRepository,
  LinkSigner,
  SendScheduler,
  Suppression,
  SuppressionList,
} from './ports';
import { meterTestMode } from './test-quota';

export interface SendEmailDeps {
  readonly emails: EmailRepository;
  readonly domains: DomainRepository;
  /** The provider for a mode: the simulator in test mode (and everywhere locally). */
  readonly providerFor: (mode: Tenant['mode']) => EmailProvider;
  readonly quotas: QuotaCounter;
  readonly suppressions: SuppressionList;
  readonly events: EventPublisher;
  readonly sendScheduler: SendScheduler;
  readonly links: LinkSigner;
  readonly clock: Clock;
  readonly random: RandomBytes;
}

export type EmailDraft = Omit<EmailMessage, 'id' | 'accountId' | 'mode' | 'createdAt'> & { scheduledAt?: string };

/**
 * Accepts emails for the caller's account and mode. Live mode counts each email against the plan's monthly
 * quota first: past it, 429 monthly_quota_exceeded and nothing is sent. Test mode counts recipients per day
 * instead (test-quota.ts).
 * An email with `scheduledAt` waits for it (email.scheduled); the others go to the provider now. Live mode
 * sends only from verified domains of the account (422); test mode does not check.
 */
export async function sendEmails(
  deps: SendEmailDeps,
  caller: Principal,
  drafts: readonly EmailDraft[],
  options: { batch: boolean } = { batch: false },
): Promise<string[]> {
  const now = deps.clock.now();
  const tenant: Tenant = { accountId: caller.accountId, mode: caller.mode };
  const emails: EmailRecord[] = drafts.map((draft) => {
    const id = timeOrderedId('email', now, deps.random);
    return {
      ...draft,
      id,
      accountId: tenant.accountId,
      mode: tenant.mode,
      createdAt: new Date(now).toISOString(),
      suppressed: [],
      unsubscribeUrls: Object.fromEntries(recipients(draft).map((r) => [r, unsubscribeUrl(deps.links, tenant, id, r)])),
    };
  });
  // Before anything is counted: an email too large to store is refused whole, like any bad input.
  assertStorable(emails, options.batch);
  if (caller.mode === 'live') {
    await assertVerifiedSenders(deps, tenant, drafts, options.batch);
    const window = quotaWindow(now);
    const limit = PLANS[caller.plan].emailsPerMonth;
    if (!(await deps.quotas.consume(caller.accountId, window, drafts.length, limit))) {
      throw new RateLimitedError(
        `Monthly email quota of ${limit} (plan ${caller.plan}) reached; it resets at the start of next month (UTC).`,
        secondsUntilReset(window, now),
        'monthly_quota_exceeded',
      );
    }
  } else await meterTestMode(deps, caller, drafts);
  // Stored first, then queued: the request never talks to the provider. The send worker hands each email over
  // once (a conditional release), so a batch of 100 emails to 50 recipients each cannot outlast the request,
  // and a crash between store and queue is caught by the reconciler (every waiting email is indexed).
  await deps.emails.createMany(emails);
  for (const email of emails) {
    if (email.scheduledAt) {
      await deps.events.publish(
        emailEvents(deps, email, recipients(email), 'email.scheduled', { scheduled_at: email.scheduledAt }),
      );
    }
    await deps.sendScheduler.schedule(email.id, email.scheduledAt ? Date.parse(email.scheduledAt) : now);
  }
  return emails.map((email) => email.id);
}

/**
 * The send worker's job, for every accepted email (now, or at scheduled_at): hand it to the provider once,
 * unless it was cancelled meanwhile; recipients suppressed by then are skipped.
 */
export async function sendQueuedEmail(deps: SendEmailDeps, emailId: string): Promise<'sent' | 'skipped'> {
  const email = await deps.emails.get(emailId);
  if (!email || email.sentAt || email.canceledAt) return 'skipped';
  const suppressions = await deps.suppressions.find(email, recipients(email).map(bareAddress));
  const suppressed = suppressedAmong(email, suppressions);
  const released = await deps.emails.releaseScheduled(
    emailId,
    'sent',
    new Date(deps.clock.now()).toISOString(),
    suppressed,
  );
  if (!released) return 'skipped';
  await handOverOrFail(deps, { ...released, suppressed }, suppressions);
  return 'sent';
}

/** POST /v1/emails/:id/cancel: only a scheduled email still waiting; a sent (or cancelled) one is 409. */
export async function cancelEmail(deps: SendEmailDeps, tenant: Tenant, id: string): Promise<EmailRecord> {
  const email = await getEmail(deps, tenant, id);
  const conflict = new ConflictError(
    'Only a scheduled email that has not been sent can be cancelled.',
    'not_cancelable',
  );
  if (!email.scheduledAt) throw conflict;
  const canceled = await deps.emails.releaseScheduled(id, 'canceled', new Date(deps.clock.now()).toISOString());
  if (!canceled) throw conflict;
  await deps.sendScheduler.cancel(id);
  return canceled;
}

/** An email of the caller's account and mode; anything else is 404. */
export async function getEmail(deps: Pick<SendEmailDeps, 'emails'>, tenant: Tenant, id: string): Promise<EmailRecord> {
  const email = await deps.emails.get(id);
  if (!email || email.accountId !== tenant.accountId || email.mode !== tenant.mode) {
    throw new NotFoundError(`No email with id ${id}.`);
  }
  return email;
}

/**
 * An accepted email is delivered or visibly failed: when the provider throws (an outage, not a refusal, which
 * providers report as email.failed themselves), each recipient gets email.failed rather than silence.
 */
async function handOverOrFail(
  deps: SendEmailDeps,
  email: EmailRecord,
  suppressions: Map<string, Suppression>,
): Promise<void> {
  try {
    await handOver(deps, email, suppressions);
  } catch (error) {
    const reason = `provider_error: ${error instanceof Error ? error.name : 'unknown'}`;
    const pending = recipients(email).filter((r) => !email.suppressed.includes(r));
    await deps.events.publish(emailEvents(deps, email, pending, 'email.failed', { reason }));
  }
}

/** To the provider, without its suppressed recipients; with none left, email.suppressed and nothing sent. */
async function handOver(
  deps: SendEmailDeps,
  email: EmailRecord,
  suppressions: Map<string, Suppression>,
): Promise<void> {
  const remaining = recipients(email).filter((r) => !email.suppressed.includes(r));
  if (remaining.length > 0) {
    const copies = remaining.map((to) => ({ to, headers: listUnsubscribeHeaders(email.unsubscribeUrls[to] ?? '') }));
    return deps.providerFor(email.mode).send(email, copies);
  }
  const byRecipient = email.suppressed.map((r) => suppressions.get(bareAddress(r))?.reason ?? 'suppressed');
  await deps.events.publish(
    emailEvents(deps, email, email.suppressed, 'email.suppressed', {}).map((event, i) => ({
      ...event,
      data: { ...event.data, reason: byRecipient[i] },
    })),
  );
}

function suppressedAmong(
  email: Pick<EmailMessage, 'to' | 'cc' | 'bcc'>,
  suppressions: Map<string, Suppression>,
): string[] {
  return recipients(email).filter((r) => suppressions.has(bareAddress(r)));
}

/** One event per recipient, stamped now, with the email's common data. */
function emailEvents(
  deps: Pick<SendEmailDeps, 'clock' | 'random'>,
  email: EmailRecord,
  to: readonly string[],
  type: EventType,
  data: Record<string, unknown>,
): SendflowEvent[] {
  const at = deps.clock.now();
  return to.map((recipient) => emailEvent(email, recipient, type, data, { at }, deps.random));
}

/** The recipient's one-click link: a signed token naming account, mode, email and address. */
function unsubscribeUrl(links: LinkSigner, tenant: Tenant, emailId: string, recipient: string): string {
  const token = signToken(
    'unsubscribe',
    { a: tenant.accountId, m: tenant.mode, e: emailId, r: bareAddress(recipient) },
    links.secret,
  );
  return `${links.baseUrl()}/unsubscribe/${token}`;
}

async function assertVerifiedSenders(
  deps: Pick<SendEmailDeps, 'domains'>,
  tenant: Tenant,
  drafts: readonly EmailDraft[],
  batch: boolean,
): Promise<void> {
  const details: { path: string; message: string }[] = [];
  for (const [i, draft] of drafts.entries()) {
    const domain = bareAddress(draft.from).split('@')[1] ?? '';
    if (!(await isVerifiedSender(deps, tenant, domain))) {
      details.push({
        path: batch ? `${i}.from` : 'from',
        message: `The domain ${domain} is not a verified sending domain of this account.`,
      });
    }
  }
  if (details.length) throw new ValidationError('Live-mode email must come from a verified domain.', { details });
}

/** Each email as it will be stored (unsubscribe links included) within EMAIL_LIMITS.storedBytes, else 422. */
function assertStorable(emails: readonly EmailRecord[], batch: boolean): void {
  const limitKb = EMAIL_LIMITS.storedBytes / 1024;
  const details = emails.flatMap((email, i) => {
    const bytes = storedBytes(email);
    if (bytes <= EMAIL_LIMITS.storedBytes) return [];
    const message = `The email as stored (html, text, headers, addresses, tags and one unsubscribe link per recipient) is ${Math.ceil(bytes / 1024)} KB; at most ${limitKb} KB.`;
    return [{ path: batch ? String(i) : 'body', message }];
  });
  if (details.length) throw new ValidationError(`An email is larger than ${limitKb} KB as stored.`, { details });
}
