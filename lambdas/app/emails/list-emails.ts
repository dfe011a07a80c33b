// Use case: the caller's emails, newest first (GET /v1/emails), each with the newest part of its history, which
// gives its status. A filter by an indexed status (those few emails have: bounced, failed, scheduled, opened, …)
// reads bounded pages of the status index (EmailHistory.idsByStatus, kept as events arrive), then those emails: its
// work does not grow with the account. A scanned status (queued, sent, delivered: every email passes through
// them, most end delivered) goes through the newest emails in chunks until the page is full or STATUS_EXAMINE
// emails were examined (then it answers what matched, with where to go on). An account's listings run one at a
// time (listSlots): each may read hundreds of items, and one tenant's many at once would queue ahead of every
// other tenant's reads at a shared store; and within the account's work share (listShare): a listing in a loop
// takes at most its share of the time, so another tenant's calls find the shared store free most of it.
import { emailStatus, isIndexedStatus, rankedStatus } from '../../domain/email/status';
import { mapWithLimit } from '../pool';
import type { AccountSlots, WorkShares } from '../ports';
import type { Tenant } from '../webhooks/ports';
import { EMAIL_LIST_EXAMINE, type EmailHistory, type EmailRecord, type EmailRepository } from './ports';
import { type EmailWithHistory, withHistory } from './read-email';

/** Emails whose histories a status-filtered listing reads at once (one chunk of the account's emails). */
export const STATUS_FILTER_CHUNK = 50;

/**
 * Histories one listing reads at a time. A page of 100 emails is 100 history reads: all at once, they would
 * queue ahead of every other caller's at a shared store (the local runtime's one DynamoDB thread), and on AWS
 * pass the SDK's 50 sockets anyway.
 */
export const HISTORY_READS_AT_ONCE = 8;

const withHistories = (deps: ListEmailsDeps, emails: readonly EmailRecord[]) =>
  mapWithLimit(emails, HISTORY_READS_AT_ONCE, (email) => withHistory(deps, email));

export interface ListEmailsDeps {
  readonly emails: Pick<EmailRepository, 'list' | 'listedByIds'>;
  readonly emailHistory: Pick<EmailHistory, 'latest' | 'idsByStatus' | 'noteStatus'>;
  /** The most emails one request examines, matching or not; EMAIL_LIST_EXAMINE when absent. */
  readonly listExamineCap?: number;
  /** An account's listings run here, LIST_QUERIES_AT_ONCE at a time (the local runtime); absent: at once. */
  readonly listSlots?: AccountSlots;
  /**
   * An account's listings take turns by time here (the local runtime: LOCAL_LIST_SHARE of the time after a burst),
   * each charged the time it took; absent (AWS, each request its own function instance): none waits.
   */
  readonly listShare?: WorkShares;
}

/**
 * Listings of one account at once (GET /v1/emails): a filtered page reads up to STATUS_EXAMINE histories or
 * EMAIL_LIST_EXAMINE index entries; the account's next listing waits for it, so a tenant listing in a loop holds
 * a bounded share of the store's thread (the local runtime; on AWS each request is its own function instance).
 */
export const LIST_QUERIES_AT_ONCE = 1;

export interface ListEmailsQuery {
  readonly limit: number;
  /** An email id: only older ones. */
  readonly after?: string;
  /** An email id or a prefix of one (a time window's lower end): only ids at or after it. */
  readonly from?: string;
  /** Bare, lower-cased: only emails with this recipient. */
  readonly to?: string;
  /** Only emails whose status (emailStatus) is this one. */
  readonly status?: string;
}

export interface EmailList {
  readonly items: EmailWithHistory[];
  /** Exact: older emails that may match remain. */
  readonly hasMore: boolean;
  /**
   * The `after` of the next page: the last item's id, or, when the request stopped at the examine cap before the
   * page was full, the last email examined. Null when `hasMore` is false.
   */
  readonly nextAfter: string | null;
}

/** The tenant's emails, newest first, `limit` of them past `after`, examining at most the cap. */
export async function listEmails(deps: ListEmailsDeps, tenant: Tenant, query: ListEmailsQuery): Promise<EmailList> {
  const shared = () =>
    deps.listShare ? deps.listShare.run(tenant.accountId, () => list(deps, tenant, query)) : list(deps, tenant, query);
  // In its slot first: the account's next listing waits behind this one's wait for its share too.
  return deps.listSlots ? deps.listSlots.run(tenant.accountId, shared) : shared();
}

async function list(deps: ListEmailsDeps, tenant: Tenant, query: ListEmailsQuery): Promise<EmailList> {
  const { limit, after, to, status, from } = query;
  const cap = Math.max(1, deps.listExamineCap ?? EMAIL_LIST_EXAMINE);
  const filter = { ...(to !== undefined ? { to } : {}), ...(from !== undefined ? { from } : {}) };
  if (status === undefined) {
    const page = await deps.emails.list(tenant, {
      limit,
      examine: cap,
      ...filter,
      ...(after !== undefined ? { after } : {}),
    });
    const items = await withHistories(deps, page.items);
    return { items, hasMore: page.hasMore, nextAfter: nextAfter(page.hasMore, page.resumeAfter, page.items) };
  }
  if (isIndexedStatus(status)) return listByStatusIndex(deps, tenant, query, status);
  // One match past the page says whether there is more. Each chunk examines at most its size, so the chunks
  // together stay within the cap: every email examined is a history read.
  const matches: EmailWithHistory[] = [];
  let cursor = after;
  let more = true;
  let budget = Math.min(cap, STATUS_EXAMINE);
  while (more && matches.length <= limit && budget > 0) {
    // No more histories than the page still needs if every one matched (most recent emails do).
    const chunk = Math.min(STATUS_FILTER_CHUNK, budget, limit + 1 - matches.length);
    budget -= chunk;
    // The chunk without links and states (a Query each): only the matches are read whole, with their histories.
    const page = await deps.emails.list(tenant, {
      limit: chunk,
      examine: chunk,
      parts: false,
      ...filter,
      ...(cursor !== undefined ? { after: cursor } : {}),
    });
    const read = await withHistories(deps, page.items);
    const matched = read.filter(({ email, history }) => statusOf(email, history.events) === status);
    const whole = new Map(
      (
        await deps.emails.listedByIds(
          tenant,
          matched.map(({ email }) => email.id),
        )
      ).map((email) => [email.id, email]),
    );
    for (const { email, history } of matched) {
      const found = whole.get(email.id);
      if (found) matches.push({ email: found, history });
    }
    cursor = page.resumeAfter ?? page.items.at(-1)?.id;
    more = page.hasMore && cursor !== undefined;
  }
  if (matches.length > limit) {
    const items = matches.slice(0, limit);
    return { items, hasMore: true, nextAfter: items.at(-1)?.email.id ?? null };
  }
  return { items: matches, hasMore: more, nextAfter: more ? (cursor ?? null) : null };
}

/**
 * Emails (index entries, or emails read newest first) a status-filtered request examines at most, each with its
 * history read: a `to` filter or a moved-on status may skip some; pages fill from more.
 */
export const STATUS_EXAMINE = 100;

/**
 * Pages of the status index, then those emails without their bodies (the tenant's, matching `to`, one batched
 * read) and their histories, keeping those whose status the history gives now, until the page is full or
 * STATUS_EXAMINE entries were examined (then it answers what matched, with where to go on). The first page of
 * the index asks for the page's size; the next (entries that no longer match, or another recipient) for what is
 * left of the bound: two or three index reads a request.
 */
async function listByStatusIndex(
  deps: ListEmailsDeps,
  tenant: Tenant,
  query: ListEmailsQuery,
  status: string,
): Promise<EmailList> {
  const items: EmailWithHistory[] = [];
  let after = query.after;
  let more = true;
  let examined = 0;
  while (more && items.length < query.limit && examined < STATUS_EXAMINE) {
    const take = examined === 0 ? Math.min(query.limit, STATUS_EXAMINE) : STATUS_EXAMINE - examined;
    const page = await deps.emailHistory.idsByStatus(tenant, status, {
      limit: take,
      ...(after !== undefined ? { after } : {}),
    });
    // A window's lower end: the index is newest first, so the first id below it ends the listing.
    const from = query.from;
    const ids = from === undefined ? page.ids : page.ids.filter((id) => id >= from);
    const emails = await deps.emails.listedByIds(tenant, ids, query.to);
    const read = await withHistories(deps, emails);
    // An entry can trail a newer event by a moment, or stay behind one noted out of order or at the same time:
    // the history decides, and the entry is noted again from it (which takes a stale one out of the index).
    for (const entry of read) {
      if (statusOf(entry.email, entry.history.events) === status) items.push(entry);
      else await renote(deps, tenant, entry);
    }
    examined += page.ids.length;
    after = page.ids.at(-1) ?? after;
    more = page.hasMore && ids.length === page.ids.length;
  }
  if (items.length > query.limit) {
    const page = items.slice(0, query.limit);
    return { items: page, hasMore: true, nextAfter: page.at(-1)?.email.id ?? null };
  }
  return { items, hasMore: more, nextAfter: more ? (after ?? null) : null };
}

/** Notes the status an email's history gives it: an index entry it no longer matches moves or goes. */
async function renote(deps: ListEmailsDeps, tenant: Tenant, { email, history }: EmailWithHistory): Promise<void> {
  const best = rankedStatus(history.events, email.canceledAt);
  if (best) await deps.emailHistory.noteStatus(tenant, email.id, best);
}

/** Where the next page starts: where a capped read stopped, else after the page's last item. */
function nextAfter(hasMore: boolean, resumeAfter: string | undefined, items: readonly { id: string }[]) {
  if (!hasMore) return null;
  return resumeAfter ?? items.at(-1)?.id ?? null;
}

/** The status as GET /v1/emails/:id shows it. */
export function statusOf(email: EmailWithHistory['email'], events: EmailWithHistory['history']['events']): string {
  return emailStatus({ events, ...(email.canceledAt ? { canceledAt: email.canceledAt } : {}) });
}
