// Use case: the caller's emails, newest first (GET /v1/emails), each with the newest part of its history, which
// gives its status. The status is derived from the history, not stored, so a status filter reads the history of
// every email it looks at: the listing goes through the emails in chunks until the page is full.
import { emailStatus } from '../../domain/email/status';
import type { Tenant } from '../webhooks/ports';
import type { EmailRepository } from './ports';
import { type EmailWithHistory, type ReadEmailDeps, withHistory } from './read-email';

/** Emails whose histories a status-filtered listing reads at once (one chunk of the account's emails). */
export const STATUS_FILTER_CHUNK = 50;

export interface ListEmailsDeps extends Pick<ReadEmailDeps, 'emailHistory'> {
  readonly emails: Pick<EmailRepository, 'list'>;
}

export interface ListEmailsQuery {
  readonly limit: number;
  /** An email id: only older ones. */
  readonly after?: string;
  /** Bare, lower-cased: only emails with this recipient. */
  readonly to?: string;
  /** Only emails whose status (emailStatus) is this one. */
  readonly status?: string;
}

export interface EmailList {
  readonly items: EmailWithHistory[];
  readonly hasMore: boolean;
}

/** The tenant's emails, newest first, `limit` of them past `after`; `hasMore` is exact. */
export async function listEmails(deps: ListEmailsDeps, tenant: Tenant, query: ListEmailsQuery): Promise<EmailList> {
  const { limit, after, to, status } = query;
  const filter = { ...(to !== undefined ? { to } : {}) };
  if (status === undefined) {
    const page = await deps.emails.list(tenant, { limit, ...filter, ...(after !== undefined ? { after } : {}) });
    return { items: await Promise.all(page.items.map((email) => withHistory(deps, email))), hasMore: page.hasMore };
  }
  // One match past the page says whether there is more.
  const matches: EmailWithHistory[] = [];
  let cursor = after;
  let more = true;
  while (more && matches.length <= limit) {
    const page = await deps.emails.list(tenant, {
      limit: STATUS_FILTER_CHUNK,
      ...filter,
      ...(cursor !== undefined ? { after: cursor } : {}),
    });
    const read = await Promise.all(page.items.map((email) => withHistory(deps, email)));
    matches.push(...read.filter(({ email, history }) => statusOf(email, history.events) === status));
    cursor = page.items.at(-1)?.id;
    more = page.hasMore && cursor !== undefined;
  }
  return { items: matches.slice(0, limit), hasMore: matches.length > limit };
}

/** The status as GET /v1/emails/:id shows it. */
export function statusOf(email: EmailWithHistory['email'], events: EmailWithHistory['history']['events']): string {
  return emailStatus({ events, ...(email.canceledAt ? { canceledAt: email.canceledAt } : {}) });
}
