// Ports of the email side: storage and the sending provider (the simulator; SES for live mode on AWS).
import type { EmailMessage } from '../../domain/email/email';
import type { SendflowEvent } from '../../domain/events';
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

export interface EmailRecord extends EmailMessage {
  /** Every event seen for the email, in arrival order (providers do not guarantee order). */
  readonly events: readonly EmailEventEntry[];
  /** Recipients skipped because they are on the suppression list. */
  readonly suppressed: readonly string[];
  /** Each recipient's one-click unsubscribe URL (its List-Unsubscribe header). */
  readonly unsubscribeUrls: Readonly<Record<string, string>>;
  /** ISO 8601: when a scheduled email is to be sent. */
  readonly scheduledAt?: string;
  /** Set when a scheduled email was handed to the provider, or cancelled. */
  readonly sentAt?: string;
  readonly canceledAt?: string;
}

export interface EmailRepository {
  createMany(emails: readonly EmailRecord[]): Promise<void>;
  get(id: string): Promise<EmailRecord | null>;
  /**
   * Ends an email's wait, once: `sent` when it goes to the provider (with the recipients skipped as
   * suppressed), `canceled` when cancelled. Returns the email, or null when it is not waiting any more.
   */
  releaseScheduled(
    id: string,
    outcome: 'sent' | 'canceled',
    at: string,
    suppressed?: readonly string[],
  ): Promise<EmailRecord | null>;
  /** Emails still waiting to be sent (scheduled, or queued now), due before `dueBefore` (epoch ms), oldest first. */
  listScheduled(dueBefore: number, limit: number): Promise<{ id: string; sendAt: number }[]>;
  /** Appends an event once: a redelivered event is recorded only the first time. */
  appendEvent(id: string, entry: EmailEventEntry): Promise<void>;
}

/** Fires a scheduled email's send at its time (a one-shot schedule on AWS, a timer locally). */
export interface SendScheduler {
  schedule(emailId: string, atMs: number): Promise<void>;
  /** Best effort: a cancelled email is skipped when its schedule fires anyway. */
  cancel(emailId: string): Promise<void>;
}

/** One recipient's copy: each carries its own List-Unsubscribe headers. */
export interface OutgoingCopy {
  readonly to: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** Sends (or simulates) one email, one copy per recipient; what happens next arrives as events. */
export interface EmailProvider {
  send(email: EmailMessage, copies: readonly OutgoingCopy[]): Promise<void>;
}

/** Where public links point and how they are signed. */
export interface LinkSigner {
  readonly secret: string;
  /** Base URL including /v1 (resolved late: the local runtime learns its port when it listens). */
  baseUrl(): string;
}

export type SuppressionReason = 'hard_bounce' | 'complaint' | 'unsubscribe';

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
}
