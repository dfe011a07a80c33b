// receiveEmail: one arrival of inbound mail (the local SMTP server's spool entry, SES's receipt) becomes one
// received email per account that receives at a recipient's domain: raw bytes, parsed body and attachments in
// the file store (emails/<id>/...), a small item with an email.received event in its outbox (relayed at once, else by the
// reconciler's sweep). Idempotent on (sourceId, account): the id is derived from both, the item is created once.
// The parse is the MimeParser port's (bounded, off the event loop); what it could not do, and what did not fit
// the item's budget (domain/received-fields), makes the email `partial` with notes saying so.

import type { Address, Email } from 'postal-mime';
import { bounded, breachText, MAX_KEPT_HEADERS, safeContentType } from '../../domain/inbound';
import { fitReceivedFields, type Omitted, omittedOf } from '../../domain/received-fields';
import { derivedId } from '../../domain/resources';
import type { Tenant } from '../webhooks/ports';
import {
  type InboundDeps,
  type InboundMessage,
  placeOf,
  type ReceiveOutcome,
  receivingAccounts,
  recordReceived,
} from './arrival';
import { INBOUND_QUOTA_EXCEEDED, meterInboundBytes } from './inbound-quota';
import type {
  ParsedMessage,
  ReceivedAttachment,
  ReceivedBody,
  ReceivedEmail,
  ReceivedNote,
  ReceivedStatus,
} from './ports';

export type { InboundDeps, InboundMessage, ReceiveOutcome } from './arrival';
export { receivedEventData } from './arrival';
export type { InboundVerdicts, Verdict } from './ports';

/** Receives one arrival for every account it is addressed to. Throws only when storage fails (retry it). */
export async function receiveEmail(deps: InboundDeps, message: InboundMessage): Promise<ReceiveOutcome> {
  const { byAccount, dropped } = await receivingAccounts(deps, message);
  if (byAccount.size === 0) return { stored: [], dropped };
  const parsed = await deps.parser.parse(message.raw);
  const stored = [];
  const refused = [];
  for (const [accountId, receivedFor] of byAccount) {
    const outcome = await storeFor(deps, message, parsed, { accountId, mode: 'live' }, receivedFor);
    if (outcome) stored.push(outcome);
    else refused.push({ accountId, reason: INBOUND_QUOTA_EXCEEDED } as const);
  }
  return { stored, dropped, ...(refused.length ? { refused } : {}) };
}

async function storeFor(
  deps: InboundDeps,
  message: InboundMessage,
  parsed: ParsedMessage,
  tenant: Tenant,
  receivedFor: readonly string[],
): Promise<ReceiveOutcome['stored'][number] | null> {
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
  const bodyBytes = new TextEncoder().encode(JSON.stringify(body));
  // Counted on the receiving account before anything is written; no room: nothing of it is stored for it.
  const bytes =
    message.raw.length + bodyBytes.length + fields.attachments.reduce((sum, attachment) => sum + attachment.size, 0);
  const counted = deps.inboundQuota
    ? await meterInboundBytes(deps.inboundQuota, tenant.accountId, bytes, deps.clock.now())
    : undefined;
  if (counted === null) return null;
  const giveBack = async () => {
    if (counted) await deps.inboundQuota?.quotas.release(tenant.accountId, counted, bytes).catch(() => {});
  };
  let created: boolean;
  try {
    // The bytes first, the item last: a replay after a crash in between writes the same keys again.
    const keep = { expiresAt };
    await deps.files.put(place.rawKey, message.raw, { contentType: 'message/rfc822', ...keep });
    await deps.files.put(place.bodyKey, bodyBytes, { contentType: 'application/json', ...keep });
    // The listed attachments are the first ones (fitting leaves out from the end): their bytes, one file each.
    for (const [index, attachment] of fields.attachments.entries()) {
      const content = mail.attachments[index]?.content ?? new Uint8Array();
      await deps.files.put(attachment.key, bytesOf(content), { contentType: attachment.contentType, ...keep });
    }
    created = await recordReceived(deps, email);
  } catch (error) {
    await giveBack();
    throw error;
  }
  // A replay finds it stored, and counted the first time.
  if (!created) await giveBack();
  return { accountId: tenant.accountId, emailId: id, created, status };
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
