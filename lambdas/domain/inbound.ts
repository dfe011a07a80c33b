// Inbound mail's rules: what one message may do (size, recipients, headers, attachments, nesting), how its
// parsed fields are bounded before they are stored, and the id a message gets per receiving account (derived
// from its arrival, so a replay of the same arrival lands on the same email).

import { idTime } from './ids';
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
