// Inbound mail's rules: what one message may do (size, recipients, headers, attachments, nesting), how its
// parsed fields are bounded before they are stored, and the id a message gets per receiving account (derived
// from its arrival, so a replay of the same arrival lands on the same email).

import { idTime } from './ids';
import type { MimeLimitBreach, MimeLimits } from './mime-scan';
import { derivedId } from './resources';

/** Largest message accepted (SMTP SIZE; 552 above): Resend's and SES's order of size, far below DynamoDB's items. */
export const MAX_INBOUND_BYTES = 30 * 1024 * 1024;
/** Envelope recipients per message (RFC 5321 asks servers to take at least 100; 452 4.5.3 above). */
export const MAX_INBOUND_RECIPIENTS = 100;
/** Headers kept in a received email's `headers` (the raw message keeps them all). */
export const MAX_KEPT_HEADERS = 200;
/** Bytes of the header block the parser reads at most (postal-mime's maxHeadersSize). */
export const MAX_HEADER_BYTES = 256 * 1024;
/** Attachments stored one by one (the raw message keeps the rest). */
export const MAX_INBOUND_ATTACHMENTS = 100;
/** MIME nesting the parser follows (a deeper part is left in the raw message). */
export const MAX_MIME_DEPTH = 20;
/** Addresses kept per list (to, cc, bcc, reply_to) on the stored email and its event. */
export const MAX_LISTED_ADDRESSES = 100;
/** Characters kept of a subject, a name or an address (RFC 5322's line limit). */
export const MAX_FIELD_CHARS = 998;
/** Characters kept of an attachment's file name. */
export const MAX_FILENAME_CHARS = 255;
/** Characters kept of one listed address (RFC 5321's longest path is 256; anything longer is cut). */
export const MAX_ADDRESS_CHARS = 320;
/** MIME parts one message may open (nested messages' included): parsers' time grows with their square. */
export const MAX_MIME_PARTS = 1_000;
/** Fields of any one header block (the message's or a part's). */
export const MAX_HEADER_FIELDS = 1_000;
/**
 * Bytes of a received email's listed fields (addresses, subject, attachment metadata) as JSON: the stored item
 * holds them twice (the email, and email.received in its outbox), far below DynamoDB's 400 KB item, SQS's 256 KB
 * message and, 100 to a page, Lambda's 6 MB response. What does not fit is cut and counted (fitReceivedFields).
 */
export const MAX_RECEIVED_FIELDS_BYTES = 48 * 1024;

/** What one message may hold before its body is left unparsed (or, locally, it is refused at DATA). */
export const INBOUND_MIME_LIMITS: MimeLimits = Object.freeze({
  maxParts: MAX_MIME_PARTS,
  maxDepth: MAX_MIME_DEPTH,
  maxHeaderFields: MAX_HEADER_FIELDS,
  maxHeaderBytes: MAX_HEADER_BYTES,
});

/** A limit passed, in words (an SMTP reply's text, a received email's note). */
export function breachText(breach: MimeLimitBreach): string {
  const max = breach.max.toLocaleString('en');
  switch (breach.limit) {
    case 'parts':
      return `more than ${max} MIME parts`;
    case 'depth':
      return `MIME parts nested more than ${max} levels deep`;
    case 'header_fields':
      return `a header block of more than ${max} fields`;
    case 'header_bytes':
      return `a header block larger than ${Math.round(breach.max / 1024)} KB`;
  }
}

/**
 * The SMTP reply to a message over a MIME limit: 554 5.6.0 (RFC 3463: other or undefined media error), what
 * Postfix answers to a message whose MIME structure it will not take. Permanent: the sender's MTA bounces it
 * rather than trying again.
 */
export function breachReply(breach: MimeLimitBreach): { readonly code: 554; readonly message: string } {
  return { code: 554, message: `Message refused: ${breachText(breach)}` };
}

/** Where a received email's id comes from: time first, so a tenant's emails list newest first by key. */
export function receivedEmailId(receivedAtMs: number, sourceId: string, accountId: string): string {
  const tail = derivedId('x', sourceId, accountId).slice(2, 18);
  return `rcv_${idTime(receivedAtMs)}${tail}`;
}

export const RECEIVED_EMAIL_ID = /^rcv_[0-9a-z]{26}$/;

/** The domain of an address, lower-cased; '' when there is none. */
export function domainOf(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? '' : address.slice(at + 1).toLowerCase();
}

/** A field as stored: cut to `max` characters, NUL removed (it ends strings in too many readers). */
export function bounded(value: string | undefined | null, max = MAX_FIELD_CHARS): string {
  return (value ?? '').replaceAll('\0', '').slice(0, max);
}

/**
 * A file name safe to put in a Content-Disposition header and a file system: no control characters (a CR or
 * LF would start a new header), no path separators, no quotes; null when nothing is left.
 */
export function safeFilename(name: string | null | undefined): string | null {
  const cleaned = (name ?? '')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
    .replace(/[\u0000-\u001f\u007f"\\/]/g, '_')
    .trim()
    .slice(0, MAX_FILENAME_CHARS);
  return cleaned === '' ? null : cleaned;
}

/** A MIME type as the sender gave it, if it is one (type/subtype, no parameters); else application/octet-stream. */
export function safeContentType(value: string | null | undefined): string {
  const type = (value ?? '').trim().toLowerCase();
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/.test(type)
    ? type
    : 'application/octet-stream';
}
