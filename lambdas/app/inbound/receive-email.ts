// receiveEmail: one arrival of inbound mail (the local SMTP server's spool entry, SES's receipt) becomes one
// received email per account that receives at a recipient's domain: raw bytes, parsed body and attachments in
// the file store (emails/<id>/...), a small item with an email.received event in its outbox (relayed at once, else by the
// reconciler's sweep). Idempotent on (sourceId, account): the id is derived from both, the item is created once.
// The parse is the MimeParser port's (bounded, off the event loop); what it could not do, and what did not fit
// the item's budget (domain/received-fields), makes the email `partial` with notes saying so. recordFailedArrival
// is the end of an arrival that could not be stored at all: an envelope-only `failed` email, so the account sees it.
import type { Address, Email } from 'postal-mime';
import { newEvent, type SendflowEvent } from '../../domain/events';
import {
  bounded,
  breachText,
  domainOf,
  MAX_KEPT_HEADERS,
  receivedEmailId,
  safeContentType,
} from '../../domain/inbound';
import { fitReceivedFields, type Omitted, omittedOf } from '../../domain/received-fields';
import { derivedId } from '../../domain/resources';
import { receivingDomain } from '../domains/domains';
import type { DomainRepository } from '../domains/ports';
import { relay } from '../outbox';
import type { Clock, RandomBytes } from '../ports';
import type { EventPublisher, Tenant } from '../webhooks/ports';
import type {
  InboundFiles,
  InboundVerdicts,
  MimeParser,
  ParsedMessage,
  ReceivedAttachment,
  ReceivedBody,
  ReceivedEmail,
  ReceivedEmailRepository,
  ReceivedNote,
  ReceivedStatus,
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
  /** The bounded, time-boxed parser (a worker thread in both runtimes). */
  readonly parser: MimeParser;
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
}

/** Receives one arrival for every account it is addressed to. Throws only when storage fails (retry it). */
export async function receiveEmail(deps: InboundDeps, message: InboundMessage): Promise<ReceiveOutcome> {
  const { byAccount, dropped } = await receivingAccounts(deps, message);
  if (byAccount.size === 0) return { stored: [], dropped };
  const parsed = await deps.parser.parse(message.raw);
  const stored = [];
  for (const [accountId, receivedFor] of byAccount) {
    stored.push(await storeFor(deps, message, parsed, { accountId, mode: 'live' }, receivedFor));
  }
  return { stored, dropped };
}

/**
 * The end of an arrival that could not be stored after `attempts` tries: for each receiving account, a `failed`
 * email with the envelope only (MAIL FROM, the recipients), its raw bytes kept if the file store takes them, and
 * email.received announcing it. An account for which the arrival was stored meanwhile keeps that email.
 */
export async function recordFailedArrival(
  deps: Omit<InboundDeps, 'parser'>,
  message: InboundMessage,
  attempts: number,
): Promise<ReceiveOutcome> {
  const { byAccount, dropped } = await receivingAccounts(deps, message);
  const stored = [];
  for (const [accountId, receivedFor] of byAccount) {
    const tenant: Tenant = { accountId, mode: 'live' };
    const place = placeOf(deps, message, tenant);
    // Best effort: the bytes may be what could not be stored.
    const rawKept = await deps.files
      .put(place.rawKey, message.raw, { contentType: 'message/rfc822', expiresAt: place.expiresAt })
      .then(
        () => true,
        () => false,
      );
    const { fields, omitted } = fitReceivedFields({
      from: message.mailFrom,
      subject: '',
      messageId: '',
      to: [],
      cc: [],
      bcc: [],
      replyTo: [],
      receivedFor,
      attachments: [],
    });
    const note: ReceivedNote = {
      code: 'storage_failed',
      message:
        `This message arrived but could not be stored (${attempts} tries): only its envelope is listed. ` +
        (rawKept ? 'The raw message is kept. ' : '') +
        'The operator holds the message and can retry it.',
    };
    const email: ReceivedEmail = {
      ...tenant,
      ...place,
      ...fields,
      verdicts: message.verdicts,
      rawSize: message.raw.length,
      sourceId: message.sourceId,
      status: 'failed',
      notes: [note],
      ...(Object.keys(omitted).length ? { omitted } : {}),
    };
    const recorded = await deps.received.create(email, [receivedEvent(deps, email)]);
    if (recorded) await relay(deps, deps.received.outbox, recorded);
    stored.push({ accountId, emailId: email.id, created: recorded !== null, status: 'failed' as const });
  }
  return { stored, dropped };
}

/** Recipients by the account that receives at their domain; the rest dropped. */
async function receivingAccounts(
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
function placeOf(deps: Pick<InboundDeps, 'retentionSeconds'>, message: InboundMessage, tenant: Tenant) {
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

async function storeFor(
  deps: InboundDeps,
  message: InboundMessage,
  parsed: ParsedMessage,
  tenant: Tenant,
  receivedFor: readonly string[],
): Promise<ReceiveOutcome['stored'][number]> {
  const { folder, ...place } = placeOf(deps, message, tenant);
  const { id, expiresAt } = place;
  const { email: mail } = parsed;
  const listedAttachments: ReceivedAttachment[] = mail.attachments.map((attachment, index) => {
    const attachmentId = derivedId('att', id, String(index));
    return {
      id: attachmentId,
      filename: attachment.filename,
      contentType: safeContentType(attachment.mimeType),
      contentDisposition:
        attachment.disposition ?? (attachment.related || attachment.contentId ? 'inline' : 'attachment'),
      contentId: attachment.contentId ? attachment.contentId.replace(/^<|>$/g, '') : null,
      size: bytesOf(attachment.content).length,
      key: `${folder}/attachments/${attachmentId}`,
    };
  });
  // Bounded by construction: the item and its event's copy fit whatever the message holds (the raw has it all).
  const { fields, omitted } = fitReceivedFields({
    from: mail.from ? formatAddress(mail.from) : message.mailFrom,
    subject: mail.subject ?? '',
    messageId: mail.messageId ?? '',
    to: addresses(mail.to),
    cc: addresses(mail.cc),
    bcc: addresses(mail.bcc),
    replyTo: addresses(mail.replyTo),
    receivedFor,
    attachments: listedAttachments,
  });
  const notes = notesOf(parsed, omitted, mail.headers.length);
  const status: ReceivedStatus = notes.length ? 'partial' : 'received';
  const body: ReceivedBody = { html: mail.html ?? null, text: mail.text ?? null, headers: headersOf(mail) };
  // The bytes first, the item last: a replay after a crash in between writes the same keys again.
  const keep = { expiresAt };
  await deps.files.put(place.rawKey, message.raw, { contentType: 'message/rfc822', ...keep });
  await deps.files.put(place.bodyKey, new TextEncoder().encode(JSON.stringify(body)), {
    contentType: 'application/json',
    ...keep,
  });
  // The listed attachments are the first ones (fitting leaves out from the end): their bytes, one file each.
  for (const [index, attachment] of fields.attachments.entries()) {
    const content = mail.attachments[index]?.content ?? new Uint8Array();
    await deps.files.put(attachment.key, bytesOf(content), { contentType: attachment.contentType, ...keep });
  }
  const email: ReceivedEmail = {
    ...tenant,
    ...place,
    ...fields,
    verdicts: message.verdicts,
    rawSize: message.raw.length,
    sourceId: message.sourceId,
    // Written only when there is something to say: a complete email's item is what earlier releases wrote.
    ...(status === 'received' ? {} : { status, notes }),
    ...(Object.keys(omitted).length ? { omitted } : {}),
  };
  const recorded = await deps.received.create(email, [receivedEvent(deps, email)]);
  if (recorded) await relay(deps, deps.received.outbox, recorded);
  return { accountId: tenant.accountId, emailId: id, created: recorded !== null, status };
}

/** What a reader of a partial email must know, one note per cause. */
function notesOf(parsed: ParsedMessage, omitted: Omitted, headerCount: number): ReceivedNote[] {
  const notes: ReceivedNote[] = [];
  const read =
    parsed.scope === 'headers'
      ? 'only its header fields were read; its body and attachments are in the raw message'
      : 'it was not parsed; the raw message is all there is';
  const problem = parsed.problem;
  if (problem?.kind === 'limit') {
    notes.push({ code: 'mime_limit', message: `This message has ${breachText(problem.breach)}: ${read}.` });
  } else if (problem?.kind === 'timeout') {
    const seconds = Math.round(problem.budgetMs / 100) / 10;
    notes.push({ code: 'parse_timeout', message: `Parsing took longer than ${seconds} s and was stopped: ${read}.` });
  } else if (problem?.kind === 'failed') {
    notes.push({ code: 'parse_failed', message: `This message could not be parsed whole: ${read}.` });
  }
  if (Object.keys(omitted).length) {
    const counts = Object.entries(omittedOf({ omitted }))
      .map(([list, count]) => `${count} ${list}`)
      .join(', ');
    notes.push({
      code: 'fields_cut',
      message: `Too long to list whole, left out (see omitted): ${counts}; the raw message has them all.`,
    });
  }
  if (headerCount > MAX_KEPT_HEADERS) {
    notes.push({
      code: 'headers_cut',
      message: `${headerCount} header fields: the first ${MAX_KEPT_HEADERS} are in headers, the raw message has them all.`,
    });
  }
  return notes;
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

function headersOf(parsed: Pick<Email, 'headers'>): Record<string, string> {
  const headers: Record<string, string> = Object.create(null);
  for (const header of parsed.headers.slice(0, MAX_KEPT_HEADERS)) {
    const name = bounded(header.key, 255);
    const value = bounded(header.value, 64 * 1024);
    headers[name] = name in headers ? `${headers[name]}\n${value}` : value;
  }
  return { ...headers };
}

/** Every mailbox of a list (groups opened); cut and counted later (fitReceivedFields). */
function addresses(list: readonly Address[] | undefined): string[] {
  const flat = (list ?? []).flatMap((address) => (address.group ? address.group : [address]));
  return flat.map((mailbox) => mailbox.address ?? '').filter((address) => address !== '');
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
