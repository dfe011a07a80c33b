// Ports of inbound mail: where received emails are kept (one small item each, listable newest first per tenant,
// expiring with the email retention) and where their bytes go (the raw message, the parsed body, attachments).
import type { Email } from 'postal-mime';
import type { SendflowEvent } from '../../domain/events';
import type { MimeLimitBreach } from '../../domain/mime-scan';
import type { Omitted } from '../../domain/received-fields';
import type { Outbox, PendingEvents } from '../outbox';
import type { Tenant } from '../webhooks/ports';

export type Verdict = 'pass' | 'fail' | 'gray' | 'processing_failed';

/** SES's receipt verdicts, passed through as they are; null where nothing judged the message (locally). */
export interface InboundVerdicts {
  readonly spam: Verdict;
  readonly virus: Verdict;
  readonly spf: Verdict;
  readonly dkim: Verdict;
  readonly dmarc: Verdict;
}

/** An attachment's metadata; its bytes are in the file store under `key`. */
export interface ReceivedAttachment {
  readonly id: string;
  readonly filename: string | null;
  readonly contentType: string;
  readonly contentDisposition: 'inline' | 'attachment';
  readonly contentId: string | null;
  readonly size: number;
  readonly key: string;
}

/**
 * `received`: parsed and listed whole. `partial`: stored, but something is only in the raw message (a limit was
 * reached, the body was not parsed, a list was cut): `notes` say what. `failed`: it arrived and could not be
 * stored (its envelope is all there is; the operator has the message).
 */
export type ReceivedStatus = 'received' | 'partial' | 'failed';

export type ReceivedNoteCode =
  | 'mime_limit'
  | 'parse_timeout'
  | 'parse_failed'
  | 'fields_cut'
  | 'headers_cut'
  | 'storage_failed';

/** Why a received email is partial or failed, in a code and a sentence. */
export interface ReceivedNote {
  readonly code: ReceivedNoteCode;
  readonly message: string;
}

/** A received email as stored for one tenant: what lists and events show; the body is in the file store. */
export interface ReceivedEmail extends Tenant {
  readonly id: string;
  /** When it arrived (ISO 8601). */
  readonly createdAt: string;
  readonly from: string;
  readonly to: readonly string[];
  readonly cc: readonly string[];
  readonly bcc: readonly string[];
  readonly replyTo: readonly string[];
  /** The envelope recipients this account received it for. */
  readonly receivedFor: readonly string[];
  readonly subject: string;
  readonly messageId: string;
  readonly attachments: readonly ReceivedAttachment[];
  readonly verdicts: InboundVerdicts | null;
  /** The raw message (RFC 5322 bytes) in the file store, and its size. */
  readonly rawKey: string;
  readonly rawSize: number;
  /** The parsed body (ReceivedBody as JSON) in the file store. */
  readonly bodyKey: string;
  /** The arrival it came from (a spool entry, an SES message id). */
  readonly sourceId: string;
  /** Epoch seconds: gone from then on (DynamoDB TTL; reads skip it before). */
  readonly expiresAt: number;
  /**
   * Absent on items written before these fields existed and on complete ones (read as `received`, no notes,
   * nothing omitted): a release that does not know them reads the item as it always did.
   */
  readonly status?: ReceivedStatus;
  readonly notes?: readonly ReceivedNote[];
  readonly omitted?: Omitted;
}

/** What GET /v1/emails/receiving/:id adds to the listed fields. */
export interface ReceivedBody {
  readonly html: string | null;
  readonly text: string | null;
  /** Header name (lower-case) → value; repeated headers joined by newlines. */
  readonly headers: Readonly<Record<string, string>>;
}

export interface ReceivedPage {
  readonly emails: ReceivedEmail[];
  readonly hasMore: boolean;
}

/** One page of a tenant's received emails, newest first: `after` an id gives older ones, `before` newer ones. */
export interface ReceivedPageQuery {
  readonly limit: number;
  readonly after?: string;
  readonly before?: string;
}

export interface ReceivedEmailRepository {
  readonly outbox: Outbox;
  /**
   * Stores the email with its events (email.received); null when it is stored already (a replay). An email
   * that is not `failed` replaces a `failed` one of the same id (its arrival, retried by the operator, stored at
   * last); a `failed` one never replaces anything.
   */
  create(email: ReceivedEmail, events: readonly SendflowEvent[]): Promise<PendingEvents | null>;
  /** The email, or null (unknown, another tenant's, or expired). */
  get(tenant: Tenant, id: string): Promise<ReceivedEmail | null>;
  list(tenant: Tenant, query: ReceivedPageQuery): Promise<ReceivedPage>;
}

/** Why a message was not parsed whole. */
export type ParseProblem =
  | { readonly kind: 'limit'; readonly breach: MimeLimitBreach }
  | { readonly kind: 'timeout'; readonly budgetMs: number }
  | { readonly kind: 'failed'; readonly reason: string };

/** What the parser made of a message: all of it, its header block only, or nothing (the raw bytes are all). */
export interface ParsedMessage {
  readonly scope: 'whole' | 'headers' | 'none';
  /** The parse (postal-mime's shape); an empty one when scope is `none`. */
  readonly email: Email;
  /** Why not whole; null when whole. */
  readonly problem: ParseProblem | null;
}

/**
 * Parses received messages within the MIME limits and a time budget, off the caller's event loop where the
 * runtime has one to protect. Never throws for what a message holds: a message over a limit is parsed for its
 * header block only, one that takes too long or breaks the parser gives what could be parsed and the problem.
 */
export interface MimeParser {
  parse(raw: Uint8Array): Promise<ParsedMessage>;
}

/** The file store as inbound mail uses it (app/files: FileStore). */
export interface InboundFiles {
  put(key: string, bytes: Uint8Array, options: { contentType: string; expiresAt: number }): Promise<void>;
}
