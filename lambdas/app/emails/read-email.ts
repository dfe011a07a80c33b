// Use case: an email as GET /v1/emails/:id shows it, with the newest part of its event history (kept apart
// from the email, one record per event, so the history can be any length).
import type { Tenant } from '../webhooks/ports';
import type { EmailHistory, EmailRecord, EmailRepository, HistoryPage } from './ports';
import { getEmail } from './send-emails';

/**
 * How many events a read shows: the newest ones by time. Enough for the status (an email has at most 50
 * recipients, so at most 50 unsubscribes, which do not count for it) and for every event of a usual email.
 */
export const EMAIL_HISTORY_LIMIT = 100;

export interface ReadEmailDeps {
  readonly emails: EmailRepository;
  readonly emailHistory: Pick<EmailHistory, 'latest'>;
}

export interface EmailWithHistory {
  readonly email: EmailRecord;
  readonly history: HistoryPage;
}

/** The email of the caller's account and mode (else 404), with its newest events. */
export async function readEmail(deps: ReadEmailDeps, tenant: Tenant, id: string): Promise<EmailWithHistory> {
  return withHistory(deps, await getEmail(deps, tenant, id));
}

/** An email already read (and checked), with its newest events. */
export async function withHistory(
  deps: Pick<ReadEmailDeps, 'emailHistory'>,
  email: EmailRecord,
): Promise<EmailWithHistory> {
  return { email, history: await deps.emailHistory.latest(email.id, EMAIL_HISTORY_LIMIT) };
}
