// Ports of the email side: storage and the sending provider (the simulator; SES for live mode on AWS).
import type { AttachmentMeta } from '../../domain/email/attachments';
import type { EmailMessage } from '../../domain/email/email';
import type { SendflowEvent } from '../../domain/events';
import type { SuppressionReason } from '../../domain/suppressions';
import type { Outbox, PendingEvents } from '../outbox';
import type { Tenant } from '../webhooks/ports';

/** One event in an email's history (GET /v1/emails/:id). */
export interface EmailEventEntry {
  readonly id: string;
  readonly type: string;
  readonly to?: string;
  /** ISO 8601, when it happened. */
  readonly timestamp: string;
}

/**
 * Where one recipient's copy stands. `pending` (or no entry): not sent yet. `claimed`: a send worker holds it
 * until `until` (epoch ms) and is handing it to the provider. Then exactly one final state: `sent` (the
 * provider took it; its events follow), `failed` (email.failed recorded with it) or `suppressed`
 * (email.suppressed recorded with it). `tries` counts the claims.
 */
export type RecipientState =
  | {
      readonly state: 'pending';
      readonly tries: number;
      /** Set only on a copy a dead local runtime had claimed (an earlier epoch): that claim's `since`, kept. */
      readonly since?: number;
    }
  | {
      readonly state: 'claimed';
      readonly tries: number;
      readonly until: number;
      /** The claiming runtime's epoch (see Claim.epoch in the webhook ports); 0 or absent on AWS. */
      readonly epoch?: number;
      /**
       * When the copy was handed over (epoch ms): its email.sent's time, from which its simulated story counts.
       * Absent on claims made before it was kept (their `until` less the claim time stands in).
       */
      readonly since?: number;
    }
  | { readonly state: 'sent' | 'failed' | 'suppressed'; readonly tries: number; readonly reason?: string };

export const FINAL_STATES: readonly RecipientState['state'][] = ['sent', 'failed', 'suppressed'];

export interface EmailRecord extends EmailMessage {
  /** Recipients skipped because they are on the suppression list. */
  readonly suppressed: readonly string[];
  /** Each recipient's one-click unsubscribe URL (its List-Unsubscribe header). */
  readonly unsubscribeUrls: Readonly<Record<string, string>>;
  /** ISO 8601: when a scheduled email is to be sent. */
  readonly scheduledAt?: string;
  /** Set when the send worker started on it (it can no longer be cancelled), or when cancelled. */
  readonly sentAt?: string;
  readonly canceledAt?: string;
  /** Per recipient, by its index in recipients(email): where its copy stands (absent: pending). */
  readonly recipientStates?: Readonly<Record<string, RecipientState>>;
  /** The batch it was accepted in: it may be sent only once that batch is committed (all of it stored). */
  readonly batchId?: string;
}

/** An email the send worker started on: `indexed` when it waits in the schedule index (finishSending ends that). */
export type SendingEmail = EmailRecord & { readonly indexed: boolean };

/** The most emails one listing request examines (GET /v1/emails): a filter that rarely matches stops there. */
export const EMAIL_LIST_EXAMINE = 1000;

export interface EmailListQuery {
  readonly limit: number;
  readonly after?: string;
  /** An email id or a prefix of one (`email_` and an id's time part): only ids at or after it (a key condition). */
  readonly from?: string;
  readonly to?: string;
  /** The most emails (index entries) to examine, matching or not; EMAIL_LIST_EXAMINE when absent. */
  readonly examine?: number;
  /**
   * false: the emails without their links and recipient states (no read of their parts), for a caller that keeps
   * only some of them (a status filter) and reads those whole (listedByIds). Absent: whole.
   */
  readonly parts?: false;
}

export interface EmailPage {
  /** Without `html`, `text` and `headers` (empty): the list view shows none of them, so they are never read. */
  readonly items: EmailRecord[];
  readonly hasMore: boolean;
  /**
   * Set when the read stopped at `examine` before the page was full and older emails remain: the id of the last
   * email examined, to pass as `after` to go on.
   */
  readonly resumeAfter?: string;
}

/** A batch's fate, decided once: committed (every email stored), or aborted (never to be sent). */
export type BatchState = 'committed' | 'aborted';

export type RescheduleResult =
  | { readonly kind: 'rescheduled' }
  /** Sent (or being sent), cancelled, never scheduled, or no such email. */
  | { readonly kind: 'not_waiting' }
  | { readonly kind: 'beyond_retention'; readonly latest: string };

/** How close to the end of an email's storage its send may be moved: the send must find its body. */
export const RESCHEDULE_MARGIN_MS = 60 * 60 * 1000;

/** What a recipient must still be for a change of its state to apply. */
export type RecipientExpectation =
  | { readonly state: 'pending' }
  /** Claimed by this worker: the claim it took (tries) is still the one stored. */
  | { readonly state: 'claimed'; readonly tries: number }
  /** Claimed by a worker whose claim ran out before `now` (epoch ms). */
  | { readonly state: 'lapsed'; readonly now: number }
  /** Claimed by a runtime of an epoch before `epoch`: one that has died (the local runtime after a restart). */
  | { readonly state: 'orphaned'; readonly epoch: number };

export interface EmailRepository {
  readonly outbox: Outbox;
  /**
   * Stores new emails, each with its events (by emailId) in its outbox; returns those to relay. Each waits in the
   * schedule index (listScheduled) until its send finishes, unless `queued`: its send is already on the sends
   * queue (a single email sent now is queued before it is stored), which then stands for it alone; the index takes
   * it only if its send is left for later (deferSend).
   */
  createMany(
    emails: readonly EmailRecord[],
    events?: readonly SendflowEvent[],
    options?: { readonly queued?: boolean },
  ): Promise<PendingEvents[]>;
  /**
   * The email, whole. `metadataOnly`: its item alone (addresses, subject, tags, times, batch, schedule), one read:
   * no body (html and text absent, headers empty), links (empty) or recipient states, for a caller that needs none.
   * `consistent`: the item is read strongly consistent (it reflects every write acknowledged before the read).
   */
  get(
    id: string,
    options?: { readonly metadataOnly?: boolean; readonly consistent?: boolean },
  ): Promise<EmailRecord | null>;
  /**
   * The tenant's emails (of its account and mode only), newest first by id (ids are time-ordered). `after` is an
   * email id: only older ones. `to` is a bare, lower-cased address: only emails with it among their recipients
   * (to, cc, bcc; compared bare and lower-cased). At most `examine` emails are examined: `hasMore` is exact, and
   * `resumeAfter` says where a read cut short by that bound stopped.
   */
  list(tenant: Tenant, query: EmailListQuery): Promise<EmailPage>;
  /**
   * The emails under these ids, in their order, as a listing shows them (never their bodies): only the tenant's,
   * and with `to`, only those with that recipient (bare, lower-cased). One batched read, whatever they hold.
   */
  listedByIds(tenant: Tenant, ids: readonly string[], to?: string): Promise<EmailRecord[]>;
  /**
   * Decides a batch's fate once (one conditional write): `committed` with its events (email.scheduled of its
   * emails) once every email is stored, `aborted` when the batch failed. Returns the state that holds (the
   * first decision wins) and, when this call committed it, the events to relay.
   */
  decideBatch(
    batchId: string,
    state: BatchState,
    events?: readonly SendflowEvent[],
  ): Promise<{ state: BatchState; pending: PendingEvents | null }>;
  /** The batch's fate, or null while undecided. */
  batchState(batchId: string): Promise<BatchState | null>;
  /**
   * The send worker starts on a waiting email (sets sentAt once; from then on it cannot be cancelled). Returns
   * the email, with whether it is in the schedule index (its wait ends with finishSending), or null when it is not
   * waiting any more (a scheduled one already started or cancelled). An email sent now (`scheduled: false`;
   * scheduled_at never changes) cannot be cancelled, so there is nothing to fence off: it is read, strongly
   * consistent, and nothing is written (no sentAt); its recipients' states say what is left to send. `dueBy` (ISO time): a scheduled email starts
   * only if its stored scheduled_at is at or before it, decided by the write itself (never by an earlier read),
   * so a send moved later (reschedule) is never sent at its old time and one moved earlier is sent at its new one.
   */
  startSending(
    id: string,
    at: string,
    options?: { readonly scheduled?: boolean; readonly dueBy?: string },
  ): Promise<SendingEmail | null>;
  /** Cancels a waiting email the send worker has not started on; null otherwise. */
  cancel(id: string, at: string): Promise<EmailRecord | null>;
  /**
   * Moves a scheduled email the send worker has not started on (and not cancelled) to `scheduledAt`: one
   * conditional write, so it races safely with the send and with cancel. Its body and parts are kept until a
   * time fixed when it was accepted (the retention after its first due time): a time too close to that
   * (within an hour) is `beyond_retention`, with the latest time it may take.
   */
  reschedule(id: string, scheduledAt: string): Promise<RescheduleResult>;
  /**
   * Moves one recipient (by index) to `to`, only if it is still as `expect` says, recording `events` with it.
   * Null when it is not (another worker has it, or it is settled).
   */
  setRecipient(
    id: string,
    index: number,
    expect: RecipientExpectation,
    to: RecipientState,
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null>;
  /**
   * A send left for later (retryable outcomes, another worker's claims, the queue's last receive): the email
   * waits in the schedule index (put there if it was not), due at `untilMs`, when the sends queue hands its
   * message out again anyway, so the reconciler cannot undo the queue's backoff, and queues it again should its
   * message be gone. Nothing for an unknown or cancelled email.
   */
  deferSend(id: string, untilMs: number): Promise<void>;
  /**
   * Each recipient's state (by index, as `recipientStates`) read with strong consistency, without the body:
   * what the send worker checks before it ends an email's wait. Null when there is no such email.
   */
  recipientStates(id: string): Promise<Readonly<Record<string, RecipientState>> | null>;
  /**
   * A single email's message came, and its email was never stored (its request failed): marks the id so that a
   * store of it still under way (a request frozen mid-write) fails instead of leaving an email nothing sends.
   * False when the email is there after all (it is then sent).
   */
  abandon(id: string): Promise<boolean>;
  /** Every recipient of an indexed email is settled: the email stops waiting (leaves the reconciler's index). */
  finishSending(id: string): Promise<void>;
  /** Emails still waiting to be sent (scheduled, or queued now), due before `dueBefore` (epoch ms), oldest first. */
  listScheduled(dueBefore: number, limit: number): Promise<{ id: string; sendAt: number }[]>;
}

/** What of an email is large and never changes: written once when it is accepted, never rewritten. */
export interface EmailBody {
  readonly html?: string;
  readonly text?: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Its attachments' metadata (written once with the body, never changed; absent when it has none). */
  readonly attachments?: readonly AttachmentMeta[];
}

/**
 * Where email bodies live, one entry per email, apart from the email's small, often-changed state: a body is
 * billed once, when it is written, never on each change of a recipient. Keyed by email, so what belongs to an
 * email's content (attachments, later) can sit beside its body.
 */
export interface EmailBodyStore {
  /** Stores each email's body, once; `expiresAt` (epoch seconds) is when it may go (the email's retention). */
  putMany(bodies: readonly { emailId: string; body: EmailBody; expiresAt: number }[]): Promise<void>;
  /** The body, or null when none is stored (or it expired). */
  get(emailId: string): Promise<EmailBody | null>;
}

/** The newest events of an email's history, oldest of them first. */
export interface HistoryPage {
  readonly events: readonly EmailEventEntry[];
  /** True when older events exist beyond the page. */
  readonly truncated: boolean;
}

/**
 * An email's event history, kept apart from the email (one record per event), so no number of events can make
 * the email too large to store or stop its events from being dispatched.
 */
export interface EmailHistory {
  /** Records an event once: a redelivered event (same id) is recorded only the first time. True when new. */
  record(emailId: string, entry: EmailEventEntry): Promise<boolean>;
  /** The `limit` newest events by time (ties by id), returned oldest first. */
  latest(emailId: string, limit: number): Promise<HistoryPage>;
  /**
   * Which of these event ids the email's history holds, read by key with strong consistency: the record of a copy
   * whose email.sent the send worker processed (its claim is then never written again; the id is the claim's).
   */
  recorded(emailId: string, eventIds: readonly string[]): Promise<ReadonlySet<string>>;
  /**
   * Notes the status an event (or a cancel) gives the email (domain/email/status statusFromEvent) for the status
   * index, which holds indexed statuses only (isIndexedStatus): an indexed status is kept if it outranks the status
   * noted before; a scanned one is noted only to take the email out of the index when it outranks what is there
   * (otherwise it costs nothing). So the index lists every email whose status emailStatus derives is an indexed
   * one; it may also list, for a moment or after events noted out of order, an email whose status has moved on:
   * a reader keeps only those whose history still gives the status.
   */
  noteStatus(tenant: Tenant, emailId: string, noted: NotedStatus): Promise<void>;
  /**
   * The tenant's email ids whose noted status is `status` (an indexed one; never a scanned one), newest first: at
   * most `limit` past `after` (an email id), and whether more follow. One bounded index read, whatever the tenant
   * holds (GET /v1/emails?status=).
   */
  idsByStatus(tenant: Tenant, status: string, page: { limit: number; after?: string }): Promise<StatusPage>;
}

export interface NotedStatus {
  readonly status: string;
  readonly rank: number;
}

export interface StatusPage {
  readonly ids: string[];
  readonly hasMore: boolean;
}

/** Fires a scheduled email's send at its time (a one-shot schedule on AWS, a timer locally). */
export interface SendScheduler {
  /**
   * `accountId` (when known) is the email's tenant: sends are handed out fairly across tenants, so one account's
   * burst does not delay another's emails.
   */
  schedule(emailId: string, atMs: number, accountId?: string): Promise<void>;
  /**
   * The send of an email already scheduled moves to `atMs`. The old firing, should it still come, finds the
   * email not yet due (or already started) and is skipped by the send worker.
   */
  reschedule(emailId: string, atMs: number, accountId?: string): Promise<void>;
  /** Best effort: a cancelled email is skipped when its schedule fires anyway. */
  cancel(emailId: string): Promise<void>;
}

/** One recipient's copy: each carries its own List-Unsubscribe headers. */
export interface OutgoingCopy {
  readonly to: string;
  readonly headers: Readonly<Record<string, string>>;
  /** When the send worker handed it over (epoch ms), the time of its email.sent: the simulator's story counts from it. */
  readonly at?: number;
}

/** What became of one copy at the provider. */
export type CopyOutcome =
  /** The provider took it: the send worker's email.sent says so; what happens next arrives as the provider's events. */
  | { readonly status: 'sent' }
  /** Refused for good (SES rejected the message, the sender is not allowed, ...): email.failed. */
  | { readonly status: 'refused'; readonly reason: string }
  /** Not taken this time (throttled, an outage): worth another try later. */
  | { readonly status: 'retry'; readonly reason: string };

/** An attachment as it goes to the provider: its metadata and its bytes. */
export interface OutgoingAttachment extends AttachmentMeta {
  readonly content: Uint8Array;
}

/**
 * Sends (or simulates) one email, one copy per recipient, and says what became of each copy (same order).
 * It publishes no email.failed itself: the send worker records each outcome with the recipient's state.
 */
export interface EmailProvider {
  /**
   * false: it takes attachments without reading their bytes (the simulator), so the send worker only checks they
   * are still stored and hands it none. Absent: it reads them (SES), and is handed every one with its bytes.
   */
  readonly readsAttachments?: false;
  /** `scheduledAt`: when a scheduled email was due (the simulator starts its stories there). */
  send(
    email: EmailMessage & { readonly scheduledAt?: string },
    copies: readonly OutgoingCopy[],
    attachments?: readonly OutgoingAttachment[],
  ): Promise<CopyOutcome[]>;
}

/** What fetching an attachment's `path` gave: its bytes, or why not (shown to the caller in a 422). */
export type FetchedAttachment =
  | { readonly ok: true; readonly bytes: Uint8Array; readonly contentType?: string }
  | { readonly ok: false; readonly reason: string };

/**
 * Fetches an attachment given by URL, once, when the email is accepted: through the webhook sender's SSRF guard
 * (public addresses only unless private URLs are allowed), no redirects, at most `maxBytes`, until `signal`.
 */
export interface AttachmentFetcher {
  fetch(url: string, options: { readonly maxBytes: number; readonly signal: AbortSignal }): Promise<FetchedAttachment>;
}

/**
 * Holds live-mode copies to the sending rate: SES's maximum send rate, or on AWS one send worker invocation's
 * share of it. Each copy takes its turn before its provider call.
 */
export interface SendPacer {
  /**
   * Waits for one copy's turn and resolves true; resolves false at once, taking no turn, when that turn would
   * come after `notAfter` (epoch ms).
   */
  take(notAfter?: number): Promise<boolean>;
}

/** Where public links point and how they are signed. */
export interface LinkSigner {
  /**
   * The HMAC key of public links. Asynchronous: on AWS it is read from Secrets Manager on first use and cached;
   * a failed read rejects with a ServiceUnavailableError (503) and the next call tries again.
   */
  secret(): Promise<string>;
  /** Base URL including /v1 (resolved late: the local runtime learns its port when it listens). */
  baseUrl(): string;
}

export type { SuppressionReason };

export interface Suppression {
  /** Bare, lower-cased address. */
  readonly address: string;
  readonly reason: SuppressionReason;
  readonly createdAt: string;
  /** The email that caused it. */
  readonly emailId?: string;
}

/** Per account and mode: addresses Sendflow will not send to again. */
export interface SuppressionList {
  readonly outbox: Outbox;
  /** True when newly added; false when the address was already suppressed (the first reason stays). */
  add(tenant: Tenant, suppression: Suppression): Promise<boolean>;
  /**
   * A one-click unsubscribe from email `suppression.emailId`: suppresses the address (unless it already is;
   * the first reason stays) and records `events` with it, once per email and address. Null when this email's
   * unsubscribe of this address was recorded before (its events with it).
   */
  unsubscribe(
    tenant: Tenant,
    suppression: Suppression & { readonly emailId: string },
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null>;
  /** The suppressed ones among `addresses` (bare, lower-cased). */
  find(tenant: Tenant, addresses: readonly string[]): Promise<Map<string, Suppression>>;
  /**
   * Adds a suppression and records `events` with it (suppression.added), in one write; null when the address was
   * already suppressed (nothing written). A removed one's place (its tombstone, events still to relay) is taken.
   */
  record(tenant: Tenant, suppression: Suppression, events: readonly SendflowEvent[]): Promise<PendingEvents | null>;
  /**
   * Removes the suppression of `address`, recording `events` with the removal (suppression.removed): the item stays
   * as a tombstone, never read as a suppression, until they are relayed. Without events it is deleted. Null when
   * the address was not suppressed.
   */
  remove(tenant: Tenant, address: string, events: readonly SendflowEvent[]): Promise<PendingEvents | null>;
  /** A page of the tenant's suppressions in address order, after `after` (an address). */
  list(tenant: Tenant, query: SuppressionQuery): Promise<SuppressionPage>;
}

export interface SuppressionQuery {
  readonly limit: number;
  /** An address: the page starts after it. */
  readonly after?: string;
  /** Only these reasons; all when absent. */
  readonly reasons?: readonly SuppressionReason[];
}

export interface SuppressionPage {
  readonly items: Suppression[];
  readonly hasMore: boolean;
  /** The `after` of the next page (the last item's address, or the last one examined); null without more. */
  readonly nextAfter: string | null;
}
