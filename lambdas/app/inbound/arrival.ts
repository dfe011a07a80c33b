// What receiving an arrival and recording one that failed share: the arrival and its deps (the contract of
// both runtimes), which accounts receive it, where each account's copy lives (its id derived from the arrival,
// so a replay lands on the same email), and email.received, created with the item and relayed at once.

import { newEvent, type SendflowEvent } from '../../domain/events';
import { domainOf, receivedEmailId } from '../../domain/inbound';
import { omittedOf } from '../../domain/received-fields';
import { receivingDomain } from '../domains/domains';
import type { DomainRepository } from '../domains/ports';
import { relay } from '../outbox';
import type { Clock, RandomBytes } from '../ports';
import type { EventPublisher, Tenant } from '../webhooks/ports';
import type { INBOUND_QUOTA_EXCEEDED, InboundQuotaDeps } from './inbound-quota';
import type {
  InboundFiles,
  InboundVerdicts,
  MimeParser,
  ReceivedEmail,
  ReceivedEmailRepository,
  ReceivedStatus,
} from './ports';

/** One arrival, as the local SMTP server and SES's receipt hand it over (the contract of both runtimes). */
export interface InboundMessage {
  /** The message as received (RFC 5322 bytes). */
  readonly raw: Uint8Array;
  /** Envelope MAIL FROM ('' for a bounce). */
  readonly mailFrom: string;
  /** Envelope RCPT TO addresses (lower-cased domain). */
  readonly recipients: readonly string[];
  /** SES's receipt verdicts; null locally. */
  readonly verdicts: InboundVerdicts | null;
  /** ISO 8601. */
  readonly receivedAt: string;
  /** Stable id of this arrival (local spool entry id / SES mail.messageId): replays are idempotent. */
  readonly sourceId: string;
}

export interface InboundDeps {
  readonly domains: Pick<DomainRepository, 'nameHolder' | 'get'>;
  readonly received: ReceivedEmailRepository;
  readonly files: InboundFiles;
  readonly events: EventPublisher;
  readonly clock: Clock;
  readonly random: RandomBytes;
  /** How long a received email is kept (the stage's email retention), seconds. */
  readonly retentionSeconds: number;
  /** The bounded, time-boxed parser (a worker thread in both runtimes). */
  readonly parser: MimeParser;
  /** Counts the bytes stored for each receiving account against its plan's day (absent: not metered). */
  readonly inboundQuota?: InboundQuotaDeps;
}

export interface ReceiveOutcome {
  /** One per receiving account: the email's id, and whether this call stored it (false: a replay found it). */
  readonly stored: readonly {
    readonly accountId: string;
    readonly emailId: string;
    readonly created: boolean;
    readonly status: ReceivedStatus;
  }[];
  /** Recipients no account receives at (refused at RCPT locally; SES may still hand them over). */
  readonly dropped: readonly string[];
  /** Accounts it was not stored for, and why (their daily inbound bytes used up); absent when none. */
  readonly refused?: readonly { readonly accountId: string; readonly reason: typeof INBOUND_QUOTA_EXCEEDED }[];
}

/** Recipients by the account that receives at their domain; the rest dropped. */
export async function receivingAccounts(
  deps: Pick<InboundDeps, 'domains'>,
  message: InboundMessage,
): Promise<{ byAccount: Map<string, string[]>; dropped: string[] }> {
  const byAccount = new Map<string, string[]>();
  const dropped: string[] = [];
  const receivers = new Map<string, Promise<string | null>>();
  for (const recipient of new Set(message.recipients.map(normalizeRecipient))) {
    const domain = domainOf(recipient);
    if (!receivers.has(domain)) {
      receivers.set(
        domain,
        receivingDomain(deps, domain).then((found) => found?.accountId ?? null),
      );
    }
    const accountId = await receivers.get(domain);
    if (accountId) byAccount.set(accountId, [...(byAccount.get(accountId) ?? []), recipient]);
    else dropped.push(recipient);
  }
  return { byAccount, dropped };
}

/** An address with its domain lower-cased (the local part is the receiver's business). */
function normalizeRecipient(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? address : `${address.slice(0, at)}@${address.slice(at + 1).toLowerCase()}`;
}

/** Where one account's copy of an arrival lives: its id (derived: replays land on it), keys and expiry. */
export function placeOf(deps: Pick<InboundDeps, 'retentionSeconds'>, message: InboundMessage, tenant: Tenant) {
  const receivedAtMs = Date.parse(message.receivedAt);
  const id = receivedEmailId(receivedAtMs, message.sourceId, tenant.accountId);
  // Under emails/<id>/ like sent emails' bodies and attachments: the same bucket prefix, grants and lifecycle.
  const folder = `emails/${id}`;
  return {
    id,
    createdAt: new Date(receivedAtMs).toISOString(),
    expiresAt: Math.floor(receivedAtMs / 1000) + deps.retentionSeconds,
    folder,
    rawKey: `${folder}/raw.eml`,
    bodyKey: `${folder}/body.json`,
  };
}

/** Creates the email with its email.received; false when it was stored already (a replay). */
export async function recordReceived(
  deps: Pick<InboundDeps, 'received' | 'events' | 'clock' | 'random'>,
  email: ReceivedEmail,
): Promise<boolean> {
  const recorded = await deps.received.create(email, [receivedEvent(deps, email)]);
  if (recorded) await relay(deps, deps.received.outbox, recorded);
  return recorded !== null;
}

/** email.received: metadata only (Resend's fields), never the body. */
function receivedEvent(deps: Pick<InboundDeps, 'random'>, email: ReceivedEmail): SendflowEvent {
  return newEvent(
    {
      type: 'email.received',
      accountId: email.accountId,
      mode: email.mode,
      at: Date.parse(email.createdAt),
      data: receivedEventData(email),
    },
    deps.random,
  );
}

export function receivedEventData(email: ReceivedEmail): Record<string, unknown> {
  return {
    email_id: email.id,
    created_at: email.createdAt,
    from: email.from,
    to: email.to,
    cc: email.cc,
    bcc: email.bcc,
    received_for: email.receivedFor,
    subject: email.subject,
    message_id: email.messageId,
    attachments: email.attachments.map((attachment) => ({
      id: attachment.id,
      filename: attachment.filename,
      content_type: attachment.contentType,
      content_disposition: attachment.contentDisposition,
      content_id: attachment.contentId,
      size: attachment.size,
    })),
    status: email.status ?? 'received',
    notes: (email.notes ?? []).map((note) => ({ ...note })),
    omitted: omittedOf(email),
  };
}
