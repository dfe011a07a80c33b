// Use cases for sending: accept one or a batch of emails (POST /v1/emails, /v1/emails/batch), send a
// scheduled email when its time comes, cancel one before. Validation happened at the edge, all or nothing.
// Sending claims each recipient before its copy goes to the provider and records exactly one outcome per
// recipient (sent, failed, suppressed), with its event in the email's outbox: see sendQueuedEmail.

import { createHash } from 'node:crypto';
import { TEST_FILE_RETENTION_SECONDS } from '../../domain/email/byte-quota';
import { bareAddress, type EmailMessage, recipients } from '../../domain/email/email';
import { EMAIL_LIMITS, storedBytes } from '../../domain/email/limits';
import { type QuotaWindow, quotaWindow, secondsUntilReset } from '../../domain/email/quota';
import { sendingDomain } from '../../domain/email/reputation';
import { CANCELED_STATUS } from '../../domain/email/status';
import { listUnsubscribeHeaders } from '../../domain/email/unsubscribe';
import { ConflictError, InsufficientScopeError, NotFoundError, RateLimitedError } from '../../domain/errors';
import { type EventType, emailEvent, type SendflowEvent } from '../../domain/events';
import { invalidRequest, problem } from '../../domain/field-problems';
import { timeOfId, timeOrderedId } from '../../domain/ids';
import { PLANS } from '../../domain/plans';
import { signToken } from '../../domain/tokens';
import { isVerifiedSender } from '../domains/domains';
import type { DomainRepository } from '../domains/ports';
import type { FileStore } from '../files/ports';
import { type PendingEvents, relay } from '../outbox';
import type { AccountSlots, Clock, Principal, QuotaCounter, RandomBytes } from '../ports';
import { assertSendingAllowed, pauseFor, type SendingGateDeps } from '../reputation/sending-gate';
import type { SentCopies } from '../reputation/sent-tally';
import { noTelemetry, type Telemetry } from '../telemetry';
import { type OrderingDeps, type Reservation, releaseReserved, reserveSent } from '../webhooks/ordering';
import type { EventPublisher, Tenant, WebhookRepository } from '../webhooks/ports';
import { assertAttachmentRoom, type CountedBytes, meterAttachmentBytes } from './attachment-quota';
import {
  type AttachmentInput,
  attachmentsStored,
  loadAttachments,
  type PreparedAttachments,
  prepareAttachments,
  storeAttachments,
} from './attachments';
import { pacedProvider } from './paced-provider';
import {
  type AttachmentFetcher,
  type CopyOutcome,
  type EmailHistory,
  type EmailProvider,
  type EmailRecord,
  type EmailRepository,
  FINAL_STATES,
  type LinkSigner,
  type OutgoingAttachment,
  type RecipientExpectation,
  type RecipientState,
  type SendPacer,
  type SendScheduler,
  type SuppressionList,
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
  /**
   * How long a send worker holds a recipient's claim: longer than the send function can run, so a claim only
   * lapses when its worker is gone (the runtime sets the send function's time-out + 60 s).
   */
  readonly sendClaimMs?: number;
  /** Claims of one recipient before a retryable outcome (throttling, an outage) becomes email.failed. */
  readonly maxSendTries?: number;
  /**
   * The runtime's epoch (see Claim.epoch): claims of an earlier one are from a runtime that died. Only the local
   * runtime has epochs, and it sends through the simulator, whose copies are idempotent (derived event ids),
   * so such a claim goes back to pending and is sent again instead of ending `send_outcome_unknown`.
   */
  readonly claimEpoch?: number;
  /** When a send left for later is received again (the sends queue's visibility time-out): the backoff. */
  readonly sendRetryMs?: number;
  /**
   * The status index (EmailHistory.noteStatus): a cancel is noted there, so `?status=canceled` finds it. And the
   * history processEvents records into: a claimed copy whose email.sent it holds (`recorded`) was sent.
   */
  readonly emailHistory?: Pick<EmailHistory, 'noteStatus' | 'recorded'>;
  /** Told how many emails were accepted, and each recipient sent or failed; nothing when absent. */
  readonly telemetry?: Telemetry;
  /**
   * Holds live-mode copies to the sending rate (SES's, or this invocation's share of it); unpaced when absent.
   * Test mode is never paced: its copies never reach SES.
   */
  readonly livePacer?: SendPacer;
  /** Where attachments' bytes are stored at accept and read at send (absent: an email with attachments fails). */
  readonly files?: Pick<FileStore, 'put' | 'get' | 'exists' | 'downloadUrl'>;
  /** Fetches attachments given by `path` at accept. */
  readonly attachmentFetcher?: AttachmentFetcher;
  /**
   * An account's requests with attachments run here, ATTACHMENT_LIMITS.requestsAtOnce at a time (their downloads,
   * copies and writes of up to 10 MB each): one tenant's flood of large files takes a bounded share of the
   * process. Absent: at once.
   */
  readonly attachmentSlots?: AccountSlots;
  /** The stage's email retention: attachments expire with their email. */
  readonly emailRetentionSeconds?: number;
  /** Waits between the send worker's reads of an email queued before it was stored (real time when absent). */
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * Processes the send worker's own events where they arise (email.sent: history, webhook fan-out), as the events
   * queue's consumer would; returns those it could not finish. Absent, or for those, the events go with their
   * recipient's record into the email's outbox, and from there to the events queue.
   */
  readonly processEvents?: (events: readonly SendflowEvent[]) => Promise<readonly SendflowEvent[]>;
  /**
   * Per-email ordering (app/webhooks/ordering): a copy's email.sent enters the lanes of the account's ordered
   * webhooks before the provider is called, so no event the provider tells of the copy goes before it. Absent: no
   * lane is read or written here.
   */
  readonly sentOrdering?: OrderingDeps & { readonly webhooks: Pick<WebhookRepository, 'list'> };
  /**
   * Sending reputation (app/reputation/sending-gate): a paused tenant (or sending domain) is refused on accept
   * (403 sending_paused), and its emails queued before the pause fail with reason `sending_paused` at send.
   * Absent: nothing is checked.
   */
  readonly reputation?: SendingGateDeps;
  /**
   * Where the copies the provider took are counted toward the tenant's sending reputation (the send worker's
   * SentTally: one write per batch of sends, tenant, day and sending domain). Absent: not counted.
   */
  readonly sentCopies?: SentCopies;
}

/** As the email repositories default it (30 days). */
const DEFAULT_RETENTION_SECONDS = 30 * 86_400;

const DEFAULT_CLAIM_MS = 15 * 60_000;
const DEFAULT_MAX_TRIES = 5;
const DEFAULT_RETRY_MS = 6 * 60_000;
/** Copies claimed and handed to the provider at a time: what a worker stopped mid-way can leave in doubt. */
const SEND_CHUNK = 10;
/**
 * The reason of email.failed for a recipient whose claim lapsed with no outcome recorded
 * (docs/architecture.md, "Sends: one outcome per recipient").
 */
export const OUTCOME_UNKNOWN = 'send_outcome_unknown';
/** The reason of email.failed for a copy of an email accepted before its tenant's sending was paused. */
export const SENDING_PAUSED = 'sending_paused';

/** The send worker did not settle every recipient it could (retryable outcomes, or its time ran out). */
export class SendIncompleteError extends Error {
  constructor(emailId: string, pending: number) {
    super(`${pending} recipient(s) of ${emailId} still to send; the sends message is to be received again`);
    this.name = 'SendIncompleteError';
  }
}

export type EmailDraft = Omit<EmailMessage, 'id' | 'accountId' | 'mode' | 'createdAt' | 'attachments'> & {
  scheduledAt?: string;
  attachments?: readonly AttachmentInput[];
};

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
  /** `trace`: the request's trace context (compact), carried by each email to its events and their deliveries. */
  options: { batch: boolean; trace?: string } = { batch: false },
): Promise<string[]> {
  const slots = deps.attachmentSlots;
  return slots && drafts.some((draft) => draft.attachments?.length)
    ? slots.run(caller.accountId, () => acceptEmails(deps, caller, drafts, options))
    : acceptEmails(deps, caller, drafts, options);
}

async function acceptEmails(
  deps: SendEmailDeps,
  caller: Principal,
  drafts: readonly EmailDraft[],
  options: { batch: boolean; trace?: string },
): Promise<string[]> {
  const now = deps.clock.now();
  const tenant: Tenant = { accountId: caller.accountId, mode: caller.mode };
  assertKeyDomain(caller, drafts, options.batch);
  // Several emails are one batch: stored first, each naming the batch, and sendable only once one write
  // (the batch's decision) says every one of them is stored.
  const batchId = drafts.length > 1 ? timeOrderedId('batch', now, deps.random) : undefined;
  // Read before anything is written: a secret that cannot be read refuses the request whole (503).
  const secret = await deps.links.secret();
  // Attachments first (a `path` is fetched now): one that cannot be sent refuses the request before anything counts.
  const hasAttachments = drafts.some((draft) => draft.attachments?.length);
  // Nothing is downloaded for a request the day's attachment quota refuses anyway.
  if (drafts.some((draft) => draft.attachments?.some((a) => !a.content && a.path !== undefined))) {
    await assertAttachmentRoom(deps, caller);
  }
  const prepared: (PreparedAttachments | undefined)[] = hasAttachments
    ? await prepareAttachments(
        deps,
        drafts.map((draft) => draft.attachments),
        { batch: options.batch, now },
      )
    : [];
  const emails: EmailRecord[] = drafts.map(({ attachments: _inputs, ...draft }, i) => {
    const id = timeOrderedId('email', now, deps.random);
    const metas = prepared[i]?.metas;
    return {
      ...draft,
      ...(metas?.length ? { attachments: metas } : {}),
      id,
      accountId: tenant.accountId,
      mode: tenant.mode,
      createdAt: new Date(now).toISOString(),
      suppressed: [],
      unsubscribeUrls: Object.fromEntries(
        recipients(draft).map((r) => [r, unsubscribeUrl(deps.links, secret, tenant, id, r)]),
      ),
      ...(batchId ? { batchId } : {}),
      ...(options.trace !== undefined ? { trace: options.trace } : {}),
    };
  });
  // Before anything is counted: an email too large to store is refused whole, like any bad input.
  assertStorable(emails, options.batch);
  // A tenant whose sending is paused for its bounce or complaint rate is refused before anything counts (403).
  if (deps.reputation)
    await assertSendingAllowed(deps.reputation, tenant, [...new Set(drafts.map((d) => senderDomain(d.from)))]);
  let counted: { window: QuotaWindow; count: number };
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
    counted = { window, count: drafts.length };
  } else counted = await meterTestMode(deps, caller, drafts);
  // Then the bytes the attachments store, against the day (both modes); refused, the emails counted are given back.
  let bytes: CountedBytes | undefined;
  if (hasAttachments) {
    const total = prepared.reduce((sum, p) => sum + (p?.metas ?? []).reduce((n, meta) => n + meta.size, 0), 0);
    try {
      bytes = await meterAttachmentBytes(deps, caller, total);
    } catch (error) {
      await deps.quotas.release(caller.accountId, counted.window, counted.count).catch(() => {});
      throw error;
    }
  }
  // email.scheduled is recorded with the email (a batch's: with its decision) and relayed after: never lost,
  // never before it is stored.
  const scheduled = emails.flatMap((email) =>
    email.scheduledAt
      ? emailEvents(deps, email, recipients(email), 'email.scheduled', { scheduled_at: email.scheduledAt })
      : [],
  );
  let recorded: PendingEvents[];
  let queuedFirst = false;
  try {
    if (hasAttachments) await storeEmailAttachments(deps, emails, prepared, now);
    // A single email sent now is queued, then stored without a schedule-index entry (three write units fewer:
    // the entry, and the finish's write and removal): its message stands for it, and finds it stored (the send
    // worker waits a moment for it). Should queuing fail, it is stored in the index as the others are.
    const single = emails.length === 1 ? emails[0] : undefined;
    queuedFirst = single !== undefined && !single.scheduledAt && (await queueSend(deps, single, now));
    recorded = await store(deps, emails, scheduled, batchId, queuedFirst);
  } catch (error) {
    // Nothing of it will be sent (a message queued first finds no email and is dropped): give the quota back,
    // and let the error answer (5xx).
    await deps.quotas.release(caller.accountId, counted.window, counted.count).catch(() => {});
    if (bytes) await deps.quotas.release(caller.accountId, bytes.window, bytes.count).catch(() => {});
    throw error;
  }
  (deps.telemetry ?? noTelemetry).emails('accepted', emails.length);
  for (const pending of recorded) await relay(deps, deps.emails.outbox, pending);
  // The others are stored first, then queued: the request never talks to the provider. A queuing error does not
  // fail the request (the emails are stored and sendable): the reconciler queues every waiting email after its grace.
  if (!queuedFirst) for (const email of emails) await queueSend(deps, email, now);
  return emails.map((email) => email.id);
}

/** Puts the email's send on the sends queue (now, or its scheduled time); false when that failed. */
async function queueSend(deps: SendEmailDeps, email: EmailRecord, now: number): Promise<boolean> {
  return deps.sendScheduler
    .schedule(email.id, email.scheduledAt ? Date.parse(email.scheduledAt) : now, email.accountId)
    .then(
      () => true,
      () => false,
    );
}

/**
 * Each email's attachments as files, expiring with the email (its retention after now or after its schedule); a
 * test-mode email's a day after (TEST_FILE_RETENTION_SECONDS).
 */
async function storeEmailAttachments(
  deps: SendEmailDeps,
  emails: readonly EmailRecord[],
  prepared: readonly (PreparedAttachments | undefined)[],
  now: number,
): Promise<void> {
  if (!deps.files) throw new Error('No file store is wired for attachments (see runtime/).');
  const emailRetention = deps.emailRetentionSeconds ?? DEFAULT_RETENTION_SECONDS;
  const retention = (email: EmailRecord) =>
    email.mode === 'test' ? Math.min(emailRetention, TEST_FILE_RETENTION_SECONDS) : emailRetention;
  await storeAttachments(
    { files: deps.files },
    emails.map((email, i) => {
      const from = Math.floor(Math.max(now, email.scheduledAt ? Date.parse(email.scheduledAt) : 0) / 1000);
      const expiresAt = from + retention(email);
      return {
        id: email.id,
        ...(prepared[i] ? { prepared: prepared[i] } : {}),
        expiresAt,
        // Deleted a day after its write at the earliest: only when that is not before its expiry (sent now).
        ...(email.mode === 'test' && expiresAt <= Math.floor(now / 1000) + TEST_FILE_RETENTION_SECONDS
          ? { shortLived: true }
          : {}),
      };
    }),
  );
}

/** Time after which a batch nobody decided is aborted by the send worker: well past the API's 29 s. */
export const BATCH_DECISION_MS = 60_000;

/**
 * Stores the emails. A batch is all or nothing: its emails are written (each naming the batch), then one
 * conditional write commits it; if anything fails, the batch is aborted instead (the first decision wins, so a
 * commit that went through despite an error stands, and the request succeeds after all).
 */
async function store(
  deps: SendEmailDeps,
  emails: readonly EmailRecord[],
  scheduled: readonly SendflowEvent[],
  batchId: string | undefined,
  queued: boolean,
): Promise<PendingEvents[]> {
  if (!batchId) return deps.emails.createMany(emails, scheduled, { queued });
  try {
    await deps.emails.createMany(emails);
    const decided = await deps.emails.decideBatch(batchId, 'committed', scheduled);
    if (decided.state !== 'committed') throw new Error(`batch ${batchId} was aborted while being stored`);
    return decided.pending ? [decided.pending] : [];
  } catch (error) {
    const decided = await deps.emails.decideBatch(batchId, 'aborted').catch(() => null);
    if (decided?.state === 'committed') return [];
    throw error;
  }
}

/**
 * The send worker's job, for every accepted email (now, or at scheduled_at), safe to run again at any point:
 * every recipient ends with exactly one of sent (the provider took it; its events follow), failed or
 * suppressed (each recorded with its event). Recipients are claimed before their copy goes to the provider,
 * so a redelivered message never sends to a recipient twice; a claim that lapsed with no outcome recorded
 * (its worker died between the provider call and the record) becomes email.failed `send_outcome_unknown`,
 * never a second copy. Retryable outcomes (throttling, an outage) go back to pending and the call throws
 * SendIncompleteError, so SQS receives the message again after its visibility time-out (the backoff); after
 * `maxSendTries` claims they are email.failed. `deadline` (epoch ms): no new claims from then on.
 */
export async function sendQueuedEmail(
  deps: SendEmailDeps,
  emailId: string,
  options: { deadline?: number; redelivered?: boolean } = {},
): Promise<'sent' | 'skipped'> {
  // Received again (its handling failed, timed out or was cut short): the email waits in the schedule index
  // before anything else is tried, so should this message dead-letter, the reconciler still queues it again.
  if (options.redelivered) await deps.emails.deferSend(emailId, retryAt(deps));
  return sendStored(deps, emailId, options);
}

async function sendStored(
  deps: SendEmailDeps,
  emailId: string,
  options: { deadline?: number; redelivered?: boolean },
): Promise<'sent' | 'skipped'> {
  // Whether to start at all needs the email's item only; startSending reads it whole. This read may be stale
  // (eventually consistent): it only decides what a stale value cannot get wrong (cancelled and batch are final;
  // whether it was scheduled never changes). Whether it is due is decided by startSending's conditional write.
  const found = await storedEmail(deps, emailId, options.redelivered === true);
  if (!found || found.canceledAt) return 'skipped';
  if (found.batchId && !(await batchCommitted(deps, found))) return 'skipped';
  // An email sent now cannot be cancelled: starting it needs no write. A scheduled one starts only if its stored
  // time is due now: the old firing of a send moved later (PATCH) is skipped, and the firing of one moved earlier
  // sends it even if the read above still showed the old time.
  const email = await deps.emails.startSending(emailId, new Date(deps.clock.now()).toISOString(), {
    scheduled: found.scheduledAt !== undefined,
    ...(found.scheduledAt !== undefined ? { dueBy: new Date(deps.clock.now() + EARLY_FIRING_MS).toISOString() } : {}),
  });
  if (!email) return 'skipped';
  // How long after it was due a message's first receive starts it (a handed-back one's too: its wait counts).
  if (!options.redelivered) {
    const due = Date.parse(email.scheduledAt ?? email.createdAt);
    (deps.telemetry ?? noTelemetry).sendStarted(deps.clock.now() - due);
  }
  const all = recipients(email);
  const reopened = new Map<number, RecipientState>();
  const stored = await withHistory(deps, email, email.recipientStates ?? {});
  const stateOf = (i: number): RecipientState => reopened.get(i) ?? stored[String(i)] ?? { state: 'pending', tries: 0 };
  if (all.every((_, i) => FINAL_STATES.includes(stateOf(i).state))) {
    // Sent before (a message received again): at most an index entry left to clear.
    if (email.indexed) await deps.emails.finishSending(emailId);
    return 'skipped';
  }
  const outbox: PendingEvents[] = [];
  const settled = new Set<number>();
  const settle = (i: number, state: RecipientState['state']) => {
    // Counted where the outcome is stored (or its claim held): a redelivered message cannot count a copy twice.
    if (state === 'sent' || state === 'failed') (deps.telemetry ?? noTelemetry).emails(state, 1);
    if (FINAL_STATES.includes(state)) settled.add(i);
  };
  const record = async (i: number, expect: RecipientExpectation, to: RecipientState, events: SendflowEvent[]) => {
    const pending = await deps.emails.setRecipient(emailId, i, expect, to, events);
    if (pending) outbox.push(pending);
    if (pending) settle(i, to.state);
    return pending !== null;
  };
  const now = deps.clock.now();

  // Settled before, or lapsed: a claim whose worker is gone, outcome unknown. At most once: failed.
  for (const [i, to] of all.entries()) {
    const state = stateOf(i);
    const epoch = deps.claimEpoch ?? 0;
    if (FINAL_STATES.includes(state.state)) settled.add(i);
    else if (state.state === 'claimed' && state.epoch !== undefined && state.epoch < epoch) {
      // Sent again with the same email.sent (its id and time come from `since`): the dead runtime may have told it.
      const pending = { state: 'pending', tries: state.tries, since: claimedSince(deps, state) } as const;
      if (await record(i, { state: 'orphaned', epoch }, pending, [])) reopened.set(i, pending);
    } else if (state.state === 'claimed' && state.until < now) {
      const failed = failedEvents(deps, email, [to], OUTCOME_UNKNOWN);
      await record(
        i,
        { state: 'lapsed', now },
        { state: 'failed', tries: state.tries, reason: OUTCOME_UNKNOWN },
        failed,
      );
    }
  }
  // Suppressed by now: email.suppressed, nothing sent.
  const pendingIdx = all.flatMap((_, i) => (stateOf(i).state === 'pending' ? [i] : []));
  const suppressions = await deps.suppressions.find(
    email,
    pendingIdx.map((i) => bareAddress(all[i] as string)),
  );
  const toSend: number[] = [];
  for (const i of pendingIdx) {
    const to = all[i] as string;
    const suppression = suppressions.get(bareAddress(to));
    if (!suppression) {
      toSend.push(i);
      continue;
    }
    const event = emailEvents(deps, email, [to], 'email.suppressed', { reason: suppression.reason });
    await record(i, { state: 'pending' }, { state: 'suppressed', tries: stateOf(i).tries }, event);
  }
  // Paused since it was accepted (its tenant's, or its domain's, bounce or complaint rate): no copy goes out.
  if (toSend.length && deps.reputation && (await pauseFor(deps.reputation, email, [senderDomain(email.from)]))) {
    for (const i of toSend.splice(0)) {
      const failed = failedEvents(deps, email, [all[i] as string], SENDING_PAUSED);
      const tries = stateOf(i).tries;
      await record(i, { state: 'pending' }, { state: 'failed', tries, reason: SENDING_PAUSED }, failed);
    }
  }
  // Its attachments, read once for every chunk (null: one is no longer stored, so no copy can be sent).
  const attachments: OutgoingAttachment[] | null =
    toSend.length && email.attachments?.length ? await readAttachments(deps, email) : [];
  // The rest, a chunk at a time: claim, hand over, record each outcome.
  let retry = 0;
  for (let start = 0; start < toSend.length; start += SEND_CHUNK) {
    if (options.deadline !== undefined && deps.clock.now() >= options.deadline) {
      retry += toSend.length - start;
      break;
    }
    const chunk = toSend.slice(start, start + SEND_CHUNK);
    retry += await sendChunk(deps, email, chunk, { stateOf, record, settle }, options.deadline, attachments);
    for (const pending of outbox.splice(0)) await relay(deps, deps.emails.outbox, pending);
  }
  for (const pending of outbox.splice(0)) await relay(deps, deps.emails.outbox, pending);
  // Settled by this worker or, meanwhile, by another: the last to see every recipient settled ends the wait.
  if (settled.size === all.length || (retry === 0 && (await allSettled(deps, email)))) {
    if (email.indexed) await deps.emails.finishSending(emailId);
    return 'sent';
  }
  // Left for later: retryable outcomes or the deadline (receive again); the email waits in the index meanwhile.
  if (retry > 0) {
    await deps.emails.deferSend(emailId, retryAt(deps));
    throw new SendIncompleteError(emailId, retry);
  }
  // Claims another worker still holds are that worker's. Should it die, they lapse: the email waits in the index
  // until then, and the reconciler queues it again.
  await deps.emails.deferSend(emailId, deps.clock.now() + (deps.sendClaimMs ?? DEFAULT_CLAIM_MS));
  return 'skipped';
}

const retryAt = (deps: SendEmailDeps) => deps.clock.now() + (deps.sendRetryMs ?? DEFAULT_RETRY_MS);

/** How long after its acceptance a single email's message may come before the email is stored: its request's time. */
export const STORE_GRACE_MS = BATCH_DECISION_MS;
/** An id a first receive abandons when its email is missing: far past any request's time, whatever the clocks. */
const ABANDON_FIRST_RECEIVE_MS = 10 * STORE_GRACE_MS;
/** The send worker's waits for an email queued before it was stored, before it leaves the message to the queue. */
const STORE_WAITS_MS = [20, 80, 300, 600, 1000];

/** The email was queued before it was stored, and is not stored yet: its message is to be received again. */
export class EmailNotStoredError extends Error {
  constructor(emailId: string) {
    super(`${emailId} is not stored yet; the sends message is to be received again`);
    this.name = 'EmailNotStoredError';
  }
}

/**
 * The email's item, waiting a moment (strongly consistent reads) for one whose message came before it was
 * stored; still missing within its request's time, the message is received again (EmailNotStoredError). Missing
 * after it on a message received again (a first receive only past ABANDON_FIRST_RECEIVE_MS), its request failed:
 * the id is abandoned (a store of it still under way then fails) and the message dropped (null), unless the email
 * is there after all.
 */
async function storedEmail(deps: SendEmailDeps, emailId: string, redelivered: boolean): Promise<EmailRecord | null> {
  const found = await deps.emails.get(emailId, { metadataOnly: true });
  if (found) return found;
  const read = () => deps.emails.get(emailId, { metadataOnly: true, consistent: true });
  const acceptedAt = timeOfId(emailId, 'email') ?? 0;
  const age = () => deps.clock.now() - acceptedAt;
  for (const wait of age() < STORE_GRACE_MS ? STORE_WAITS_MS : []) {
    await (deps.sleep ?? sleepFor)(wait);
    const stored = await read();
    if (stored) return stored;
  }
  // A worker's clock ahead of the API's must not abandon an email still being stored: a first receive abandons
  // only an id far past its request's time.
  if (age() < (redelivered ? STORE_GRACE_MS : ABANDON_FIRST_RECEIVE_MS)) throw new EmailNotStoredError(emailId);
  return (await deps.emails.abandon(emailId)) ? null : read();
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Whether the email's batch was committed. Undecided past BATCH_DECISION_MS, its request is gone: the batch
 * is aborted here (unless it commits first). An aborted batch's emails are cancelled, never sent.
 */
async function batchCommitted(deps: SendEmailDeps, email: EmailRecord): Promise<boolean> {
  const batchId = email.batchId as string;
  let state = await deps.emails.batchState(batchId);
  if (state === null && deps.clock.now() - Date.parse(email.createdAt) > BATCH_DECISION_MS) {
    state = (await deps.emails.decideBatch(batchId, 'aborted')).state;
  }
  if (state === 'aborted') await deps.emails.cancel(email.id, new Date(deps.clock.now()).toISOString());
  return state === 'committed';
}

async function allSettled(
  deps: Pick<SendEmailDeps, 'emails' | 'emailHistory' | 'sendClaimMs'>,
  email: EmailRecord,
): Promise<boolean> {
  const read = await deps.emails.recipientStates(email.id);
  if (read === null) return false;
  const states = await withHistory(deps, email, read);
  return recipients(email).every((_, i) => FINAL_STATES.includes(states[String(i)]?.state ?? 'pending'));
}

/**
 * The recipients' states with the history's word on claimed ones: a claimed copy whose own email.sent (its id
 * derives from the email, the recipient's index and address, and the claim's `since`) the history holds was sent
 * (its worker processed the event and, that being its record, wrote nothing more). One strongly consistent read
 * by key of those events, only when some copy is claimed.
 */
async function withHistory(
  deps: Pick<SendEmailDeps, 'emailHistory' | 'sendClaimMs'>,
  email: EmailRecord,
  states: Readonly<Record<string, RecipientState>>,
): Promise<Readonly<Record<string, RecipientState>>> {
  const all = recipients(email);
  const claimed = Object.entries(states).flatMap(([i, state]) =>
    state.state === 'claimed'
      ? [{ i, tries: state.tries, id: sentEvent(email, Number(i), all[Number(i)] ?? '', claimedSince(deps, state)).id }]
      : [],
  );
  if (claimed.length === 0 || !deps.emailHistory) return states;
  const recorded = await deps.emailHistory.recorded(
    email.id,
    claimed.map((c) => c.id),
  );
  const sent = claimed.filter((c) => recorded.has(c.id));
  if (sent.length === 0) return states;
  return { ...states, ...Object.fromEntries(sent.map((c) => [c.i, { state: 'sent', tries: c.tries }])) };
}

/** sendStored's view of its recipients: their states, and how it records an outcome (or notes one recorded). */
interface Recipients {
  readonly stateOf: (i: number) => RecipientState;
  readonly record: (
    i: number,
    expect: RecipientExpectation,
    to: RecipientState,
    events: SendflowEvent[],
  ) => Promise<boolean>;
  /** An outcome whose record is elsewhere (a sent copy's email.sent in the history). */
  readonly settle: (i: number, state: RecipientState['state']) => void;
}

/** Claims, hands over and records one chunk of recipients; returns how many are left to retry. */
async function sendChunk(
  deps: SendEmailDeps,
  email: EmailRecord,
  chunk: readonly number[],
  { stateOf, record, settle }: Recipients,
  deadline: number | undefined,
  attachments: readonly OutgoingAttachment[] | null,
): Promise<number> {
  const all = recipients(email);
  const now = deps.clock.now();
  const until = now + (deps.sendClaimMs ?? DEFAULT_CLAIM_MS);
  const claimed = (
    await Promise.all(
      chunk.map(async (i) => {
        const current = stateOf(i);
        const tries = current.tries + 1;
        const epoch = deps.claimEpoch ?? 0;
        const since = (current.state === 'pending' && current.since) || now;
        const ok = await record(i, { state: 'pending' }, { state: 'claimed', tries, until, epoch, since }, []);
        return ok ? { i, tries, since } : null;
      }),
    )
  ).filter((claim): claim is { i: number; tries: number; since: number } => claim !== null);
  if (claimed.length === 0) return 0;
  const copies = claimed.map(({ i, since }) => {
    const to = all[i] as string;
    return { to, headers: listUnsubscribeHeaders(email.unsubscribeUrls[to] ?? ''), at: since };
  });
  const sentOf = (n: number) => {
    const { i, since } = claimed[n] as (typeof claimed)[number];
    return sentEvent(email, i, all[i] as string, since);
  };
  // Before the provider can tell anything of a copy, its email.sent is in its ordered webhooks' lanes.
  const reservations = await reserveOrder(
    deps,
    claimed.map((_, n) => sentOf(n)),
    until,
  );
  // Paced copies wait their turn up to the deadline at most; those left over go back to pending (retry). They go
  // out over seconds, so each one's email.sent is processed as soon as it is taken, before SES's next events.
  const provider = deps.providerFor(email.mode);
  const early = new Map<number, Promise<ReadonlySet<string>>>();
  const paced =
    email.mode === 'live' && deps.livePacer
      ? pacedProvider(provider, deps.livePacer, deadline, (n) => early.set(n, processWhereArisen(deps, [sentOf(n)])))
      : provider;
  let outcomes: CopyOutcome[];
  try {
    outcomes =
      attachments === null
        ? copies.map(() => ({ status: 'refused', reason: ATTACHMENT_UNAVAILABLE }))
        : await paced.send(email, copies, attachments.length ? attachments : undefined);
  } catch (error) {
    // Nothing known to have gone out (an outage before the provider took anything), but the copies it said it
    // took (paced, their email.sent already told).
    const reason = `provider_error: ${error instanceof Error ? error.name : 'unknown'}`;
    outcomes = copies.map((_, n) => (early.has(n) ? { status: 'sent' } : { status: 'retry', reason }));
  }
  // The copies taken: their email.sent is processed (the rest of them now, together) before they are recorded
  // sent, so a worker stopped between the two leaves a claim that lapses (send_outcome_unknown), never a sent copy
  // whose event nothing tells.
  const sentEvents = new Map<number, SendflowEvent>();
  const rest: SendflowEvent[] = [];
  for (const [n, { i }] of claimed.entries()) {
    if (outcomes[n]?.status !== 'sent') continue;
    const event = sentOf(n);
    sentEvents.set(i, event);
    if (!early.has(n)) rest.push(event);
  }
  // SES's denominator: every copy the provider took, whatever becomes of its event.
  deps.sentCopies?.add(email, { domain: sendingDomain(email.from), copies: sentEvents.size, emailId: email.id });
  const unprocessed = new Set<string>();
  for (const ids of await Promise.all([...early.values(), processWhereArisen(deps, rest)])) {
    for (const id of ids) unprocessed.add(id);
  }
  const maxTries = deps.maxSendTries ?? DEFAULT_MAX_TRIES;
  let retry = 0;
  await Promise.all(
    claimed.map(async ({ i, tries }, n) => {
      const outcome = outcomes[n] ?? { status: 'retry', reason: 'provider_error: no outcome' };
      const held = { state: 'claimed', tries } as const;
      const to = all[i] as string;
      if (outcome.status === 'sent') {
        const sent = sentEvents.get(i) as SendflowEvent;
        // Processed, its email.sent is in the history, which is the copy's record: its claim needs no second write.
        if (!unprocessed.has(sent.id) && deps.emailHistory) return settle(i, 'sent');
        return record(i, held, { state: 'sent', tries }, unprocessed.has(sent.id) ? [sent] : []);
      }
      if (outcome.status === 'retry' && tries < maxTries) {
        retry += 1;
        return record(i, held, { state: 'pending', tries }, []);
      }
      const failed = failedEvents(deps, email, [to], outcome.reason);
      return record(i, held, { state: 'failed', tries, reason: outcome.reason }, failed);
    }),
  );
  const notTaken = new Set(claimed.flatMap((_, n) => (outcomes[n]?.status === 'sent' ? [] : [sentOf(n).id])));
  await releaseOrder(deps, reservations, notTaken);
  return retry;
}

/**
 * reserveSent, best effort: a store error leaves the copies unreserved (sent at once, their email.sent ordered as
 * it is fanned out), never holds the email back. Nothing without `sentOrdering`.
 */
async function reserveOrder(
  deps: SendEmailDeps,
  events: readonly SendflowEvent[],
  untilMs: number,
): Promise<Reservation[]> {
  if (!deps.sentOrdering || events.length === 0) return [];
  return reserveSent(deps.sentOrdering, events, untilMs).catch(() => []);
}

/** releaseReserved, best effort: a reservation left behind lapses at its claim's end (LaneEntry.rowBy). */
async function releaseOrder(deps: SendEmailDeps, reservations: readonly Reservation[], notTaken: ReadonlySet<string>) {
  if (!deps.sentOrdering || reservations.length === 0 || notTaken.size === 0) return;
  await releaseReserved(deps.sentOrdering, reservations, notTaken).catch(() => undefined);
}

/**
 * A copy's email.sent: at its claim's time, with an id derived from the email, the recipient (index and address)
 * and that time, so a copy handed over again after a dead local runtime's claim (the same `since`) tells the same
 * event, and a reader finds a claim's own event by key.
 */
function sentEvent(email: EmailRecord, index: number, to: string, at: number): SendflowEvent {
  const seed = `sent\n${email.id}\n${index}\n${bareAddress(to)}\n${at}`;
  const digest = createHash('sha256').update(seed).digest();
  return emailEvent(email, to, 'email.sent', {}, { at }, (n) => digest.subarray(0, n));
}

/** When a claim's copy was handed over: its `since`, or for a claim made before that was kept, its start. */
function claimedSince(deps: Pick<SendEmailDeps, 'sendClaimMs'>, claim: { until: number; since?: number }): number {
  return claim.since ?? claim.until - (deps.sendClaimMs ?? DEFAULT_CLAIM_MS);
}

/** The ids of the events processEvents did not finish (all of them without it, or when it throws). */
async function processWhereArisen(
  deps: Pick<SendEmailDeps, 'processEvents'>,
  events: readonly SendflowEvent[],
): Promise<ReadonlySet<string>> {
  const all = () => new Set(events.map((event) => event.id));
  if (events.length === 0 || !deps.processEvents) return all();
  try {
    return new Set((await deps.processEvents(events)).map((event) => event.id));
  } catch {
    return all();
  }
}

/** The reason of email.failed for a copy whose attachment was no longer stored (it expired before the send). */
export const ATTACHMENT_UNAVAILABLE = 'attachment_unavailable';

/**
 * The email's attachments for its provider, null when one is no longer stored. A provider that reads no bytes (the
 * simulator: every test-mode send) is handed none, and its files are only checked (no 10 MB read for nothing).
 */
async function readAttachments(deps: SendEmailDeps, email: EmailRecord): Promise<OutgoingAttachment[] | null> {
  if (!deps.files) throw new Error('No file store is wired for attachments (see runtime/).');
  if (deps.providerFor(email.mode).readsAttachments === false) {
    return (await attachmentsStored({ files: deps.files }, email)) ? [] : null;
  }
  return loadAttachments({ files: deps.files }, email);
}

function failedEvents(
  deps: Pick<SendEmailDeps, 'clock' | 'random'>,
  email: EmailRecord,
  to: readonly string[],
  reason: string,
): SendflowEvent[] {
  return emailEvents(deps, email, to, 'email.failed', { reason });
}

/**
 * How early a firing may come and still send: timers and queues fire at or after their time, so this only
 * absorbs clock differences between the machine that armed the send and the one that runs it.
 */
export const EARLY_FIRING_MS = 1000;

/**
 * PATCH /v1/emails/:id: a scheduled email still waiting moves to `scheduledAt` (validated as on send by the
 * handler), then its send is re-armed. One conditional write decides against the send and cancel: 409 once it
 * is sent (or being sent) or cancelled. No event fires again (email.scheduled told the first time; GET shows the
 * new one). 422 when the email's storage ends too soon after the new time.
 */
export async function rescheduleEmail(
  deps: SendEmailDeps,
  caller: Actor,
  id: string,
  scheduledAt: string,
): Promise<void> {
  const email = await getActionableEmail(deps, caller, id);
  const conflict = new ConflictError(
    'Only a scheduled email that has not been sent or cancelled can be rescheduled.',
    'not_reschedulable',
  );
  if (!email.scheduledAt) throw conflict;
  const result = await deps.emails.reschedule(id, scheduledAt);
  if (result.kind === 'not_waiting') throw conflict;
  if (result.kind === 'beyond_retention') {
    throw invalidRequest([
      problem(
        ['scheduled_at'],
        `must be before ${result.latest}: this email is kept until then at the latest (the retention after its first send time).`,
      ),
    ]);
  }
  await armAsStored(deps, id, scheduledAt, email.accountId);
}

/** Times the send is re-armed when concurrent PATCHes keep moving it; past that, the reconciler sends it. */
const REARM_ROUNDS = 3;

/**
 * Arms the send at `scheduledAt`, then reads the email again (strongly consistent): if another PATCH moved it
 * meanwhile, arms it at the stored time instead. Concurrent PATCHes may write the table in one order and
 * Scheduler in the other; whoever armed last reads after every write that preceded its arming, so the
 * schedule ends at the table's time.
 */
async function armAsStored(deps: SendEmailDeps, id: string, scheduledAt: string, accountId: string): Promise<void> {
  let armed = scheduledAt;
  for (let round = 0; round < REARM_ROUNDS; round++) {
    await deps.sendScheduler.reschedule(id, Date.parse(armed), accountId);
    const stored = await deps.emails.get(id, { metadataOnly: true, consistent: true });
    if (!stored?.scheduledAt || stored.sentAt || stored.canceledAt || stored.scheduledAt === armed) return;
    armed = stored.scheduledAt;
  }
}

/** POST /v1/emails/:id/cancel: only a scheduled email still waiting; a sent (or cancelled) one is 409. */
export async function cancelEmail(deps: SendEmailDeps, caller: Actor, id: string): Promise<EmailRecord> {
  const email = await getActionableEmail(deps, caller, id);
  const conflict = new ConflictError(
    'Only a scheduled email that has not been sent can be cancelled.',
    'not_cancelable',
  );
  if (!email.scheduledAt) throw conflict;
  const canceled = await deps.emails.cancel(id, new Date(deps.clock.now()).toISOString());
  if (!canceled) throw conflict;
  await deps.emailHistory?.noteStatus(tenantOfActor(caller), id, CANCELED_STATUS);
  await deps.sendScheduler.cancel(id);
  return canceled;
}

/** Who acts on an email: its tenant, and the one domain a restricted sending key is limited to (if any). */
export type Actor = Tenant & { readonly sendingDomain?: string };

const tenantOfActor = (caller: Actor): Tenant => ({ accountId: caller.accountId, mode: caller.mode });

/**
 * An email the caller may act on (reschedule, cancel): of its account and mode and, for a key restricted to a
 * domain, sent from that domain. Anything else is 404, as an unknown id: a restricted key learns nothing of
 * another domain's emails, not even that they exist.
 */
async function getActionableEmail(deps: Pick<SendEmailDeps, 'emails'>, caller: Actor, id: string) {
  const email = await getEmail(deps, tenantOfActor(caller), id, { metadataOnly: true });
  if (caller.sendingDomain !== undefined && senderDomain(email.from) !== caller.sendingDomain.toLowerCase()) {
    throw new NotFoundError(`No email with id ${id}.`);
  }
  return email;
}

const senderDomain = (from: string) => (bareAddress(from).split('@')[1] ?? '').toLowerCase();

/** An email of the caller's account and mode; anything else is 404. */
export async function getEmail(
  deps: Pick<SendEmailDeps, 'emails'>,
  tenant: Tenant,
  id: string,
  options: { readonly metadataOnly?: boolean } = {},
): Promise<EmailRecord> {
  const email = await deps.emails.get(id, options);
  if (!email || email.accountId !== tenant.accountId || email.mode !== tenant.mode) {
    throw new NotFoundError(`No email with id ${id}.`);
  }
  return email;
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
function unsubscribeUrl(links: LinkSigner, secret: string, tenant: Tenant, emailId: string, recipient: string): string {
  const token = signToken(
    'unsubscribe',
    { a: tenant.accountId, m: tenant.mode, e: emailId, r: bareAddress(recipient) },
    secret,
  );
  return `${links.baseUrl()}/unsubscribe/${token}`;
}

/** A sending key restricted to one domain (Resend's `domain_id`) sends from that domain only: 403 otherwise. */
function assertKeyDomain(caller: Principal, drafts: readonly EmailDraft[], batch: boolean): void {
  const only = caller.sendingDomain;
  if (!only) return;
  for (const [i, draft] of drafts.entries()) {
    const domain = bareAddress(draft.from).split('@')[1] ?? '';
    if (domain !== only) {
      throw new InsufficientScopeError(
        `This API key may send only from the domain ${only}; ${batch ? `email ${i} is` : 'this email is'} from ${domain}.`,
      );
    }
  }
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
      details.push(
        problem(
          batch ? [i, 'from'] : ['from'],
          `is not at a verified sending domain of this account: ${domain}. Live-mode email must come from one (a test key sends from any).`,
        ),
      );
    }
  }
  if (details.length) throw invalidRequest(details);
}

/** Each email as it will be stored (unsubscribe links included) within EMAIL_LIMITS.storedBytes, else 422. */
function assertStorable(emails: readonly EmailRecord[], batch: boolean): void {
  const limitKb = EMAIL_LIMITS.storedBytes / 1024;
  const details = emails.flatMap((email, i) => {
    const bytes = storedBytes(email);
    if (bytes <= EMAIL_LIMITS.storedBytes) return [];
    const message = `The email as stored (html, text, headers, addresses, tags and one unsubscribe link per recipient) is ${Math.ceil(bytes / 1024)} KB; at most ${limitKb} KB.`;
    return [problem(batch ? [i] : [], message)];
  });
  if (details.length) throw invalidRequest(details);
}
