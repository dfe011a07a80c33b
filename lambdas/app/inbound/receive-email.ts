// receiveEmail: one arrival of inbound mail (the local SMTP server's spool entry, SES's receipt) becomes one
// received email per account that receives at a recipient's domain: raw bytes, parsed body and attachments in
// the file store (emails/<id>/...), a small item with an email.received event in its outbox (relayed at once, else by the
// reconciler's sweep). Idempotent on (sourceId, account): the id is derived from both, the item is created once.
import PostalMime, { type Address, type Email } from 'postal-mime';
import { newEvent, type SendflowEvent } from '../../domain/events';
import {
  bounded,
  domainOf,
  MAX_FILENAME_CHARS,
  MAX_HEADER_BYTES,
  MAX_INBOUND_ATTACHMENTS,
  MAX_KEPT_HEADERS,
  MAX_LISTED_ADDRESSES,
  MAX_MIME_DEPTH,
  receivedEmailId,
  safeContentType,
} from '../../domain/inbound';
import { derivedId } from '../../domain/resources';
import { receivingDomain } from '../domains/domains';
import type { DomainRepository } from '../domains/ports';
import { relay } from '../outbox';
import type { Clock, RandomBytes } from '../ports';
import type { EventPublisher, Tenant } from '../webhooks/ports';
import { INBOUND_QUOTA_EXCEEDED, type InboundQuotaDeps, meterInboundBytes } from './inbound-quota';
import type {
  InboundFiles,
  InboundVerdicts,
  ReceivedAttachment,
  ReceivedBody,
  ReceivedEmail,
  ReceivedEmailRepository,
} from './ports';

export type { InboundVerdicts, Verdict } from './ports';

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
  /** Counts the bytes stored for each receiving account against its plan's day (absent: not metered). */
  readonly inboundQuota?: InboundQuotaDeps;
}

export interface ReceiveOutcome {
  /** One per receiving account: the email's id, and whether this call stored it (false: a replay found it). */
  readonly stored: readonly { readonly accountId: string; readonly emailId: string; readonly created: boolean }[];
  /** Recipients no account receives at (refused at RCPT locally; SES may still hand them over). */
  readonly dropped: readonly string[];
  /** Accounts it was not stored for, and why (their daily inbound bytes used up); absent when none. */
  readonly refused?: readonly { readonly accountId: string; readonly reason: typeof INBOUND_QUOTA_EXCEEDED }[];
}

/** Receives one arrival for every account it is addressed to. Throws only when storage fails (retry it). */
export async function receiveEmail(deps: InboundDeps, message: InboundMessage): Promise<ReceiveOutcome> {
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
  if (byAccount.size === 0) return { stored: [], dropped };
  const parsed = await parse(message.raw);
  const stored = [];
  const refused = [];
  for (const [accountId, receivedFor] of byAccount) {
    const outcome = await storeFor(deps, message, parsed, { accountId, mode: 'live' }, receivedFor);
    if (outcome) stored.push(outcome);
    else refused.push({ accountId, reason: INBOUND_QUOTA_EXCEEDED } as const);
  }
  return { stored, dropped, ...(refused.length ? { refused } : {}) };
}

/** An address with its domain lower-cased (the local part is the receiver's business). */
function normalizeRecipient(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? address : `${address.slice(0, at)}@${address.slice(at + 1).toLowerCase()}`;
}

/** The parser, bounded; a message it cannot parse is kept with its raw bytes and empty fields. */
async function parse(raw: Uint8Array): Promise<Email> {
  try {
    return await PostalMime.parse(raw, {
      maxNestingDepth: MAX_MIME_DEPTH,
      maxHeadersSize: MAX_HEADER_BYTES,
      attachmentEncoding: 'arraybuffer',
    });
  } catch {
    return { headers: [], headerLines: [], attachments: [] };
  }
}

async function storeFor(
  deps: InboundDeps,
  message: InboundMessage,
  parsed: Email,
  tenant: Tenant,
  receivedFor: readonly string[],
): Promise<ReceiveOutcome['stored'][number] | null> {
  const receivedAtMs = Date.parse(message.receivedAt);
  const id = receivedEmailId(receivedAtMs, message.sourceId, tenant.accountId);
  const expiresAt = Math.floor(receivedAtMs / 1000) + deps.retentionSeconds;
  // Under emails/<id>/ like sent emails' bodies and attachments: the same bucket prefix, grants and lifecycle.
  const folder = `emails/${id}`;
  const attachments: ReceivedAttachment[] = parsed.attachments
    .slice(0, MAX_INBOUND_ATTACHMENTS)
    .map((attachment, index) => {
      const attachmentId = derivedId('att', id, String(index));
      return {
        id: attachmentId,
        filename: attachment.filename === null ? null : bounded(attachment.filename, MAX_FILENAME_CHARS),
        contentType: safeContentType(attachment.mimeType),
        contentDisposition:
          attachment.disposition ?? (attachment.related || attachment.contentId ? 'inline' : 'attachment'),
        contentId: attachment.contentId ? bounded(attachment.contentId.replace(/^<|>$/g, ''), 255) : null,
        size: bytesOf(attachment.content).length,
        key: `${folder}/attachments/${attachmentId}`,
      };
    });
  const body: ReceivedBody = { html: parsed.html ?? null, text: parsed.text ?? null, headers: headersOf(parsed) };
  const bodyBytes = new TextEncoder().encode(JSON.stringify(body));
  const email: ReceivedEmail = {
    ...tenant,
    id,
    createdAt: new Date(receivedAtMs).toISOString(),
    from: parsed.from ? formatAddress(parsed.from) : bounded(message.mailFrom),
    to: addresses(parsed.to),
    cc: addresses(parsed.cc),
    bcc: addresses(parsed.bcc),
    replyTo: addresses(parsed.replyTo),
    receivedFor: receivedFor.slice(0, MAX_LISTED_ADDRESSES),
    subject: bounded(parsed.subject),
    messageId: bounded(parsed.messageId),
    attachments,
    verdicts: message.verdicts,
    rawKey: `${folder}/raw.eml`,
    rawSize: message.raw.length,
    bodyKey: `${folder}/body.json`,
    sourceId: message.sourceId,
    expiresAt,
  };
  // Counted on the receiving account before anything is written; no room: nothing of it is stored for it.
  const bytes = message.raw.length + bodyBytes.length + attachments.reduce((sum, a) => sum + a.size, 0);
  const counted = deps.inboundQuota
    ? await meterInboundBytes(deps.inboundQuota, tenant.accountId, bytes, deps.clock.now())
    : undefined;
  if (counted === null) return null;
  const giveBack = async () => {
    if (counted) await deps.inboundQuota?.quotas.release(tenant.accountId, counted, bytes).catch(() => {});
  };
  // The bytes first, the item last: a replay after a crash in between writes the same keys again.
  const keep = { expiresAt };
  let recorded: Awaited<ReturnType<typeof deps.received.create>>;
  try {
    await deps.files.put(`${folder}/raw.eml`, message.raw, { contentType: 'message/rfc822', ...keep });
    await deps.files.put(`${folder}/body.json`, bodyBytes, { contentType: 'application/json', ...keep });
    for (const [index, attachment] of attachments.entries()) {
      const content = parsed.attachments[index]?.content ?? new Uint8Array();
      await deps.files.put(attachment.key, bytesOf(content), { contentType: attachment.contentType, ...keep });
    }
    recorded = await deps.received.create(email, [receivedEvent(deps, email)]);
  } catch (error) {
    await giveBack();
    throw error;
  }
  // A replay finds it stored, and counted the first time.
  if (recorded) await relay(deps, deps.received.outbox, recorded);
  else await giveBack();
  return { accountId: tenant.accountId, emailId: id, created: recorded !== null };
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
  };
}

function headersOf(parsed: Email): Record<string, string> {
  const headers: Record<string, string> = Object.create(null);
  for (const header of parsed.headers.slice(0, MAX_KEPT_HEADERS)) {
    const name = bounded(header.key, 255);
    const value = bounded(header.value, 64 * 1024);
    headers[name] = name in headers ? `${headers[name]}\n${value}` : value;
  }
  return { ...headers };
}

function addresses(list: readonly Address[] | undefined): string[] {
  const flat = (list ?? []).flatMap((address) => (address.group ? address.group : [address]));
  return flat
    .map((mailbox) => bounded(mailbox.address))
    .filter((address) => address !== '')
    .slice(0, MAX_LISTED_ADDRESSES);
}

function formatAddress(address: Address): string {
  const mailbox = address.group ? address.group[0] : address;
  if (!mailbox) return bounded(address.name);
  return bounded(mailbox.name ? `${mailbox.name} <${mailbox.address}>` : mailbox.address);
}

function bytesOf(content: ArrayBuffer | Uint8Array | string): Uint8Array {
  if (typeof content === 'string') return new TextEncoder().encode(content);
  return content instanceof Uint8Array ? content : new Uint8Array(content);
}
