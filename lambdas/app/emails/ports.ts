// Ports of the email side: storage and the sending provider (the simulator; SES for live mode on AWS).
import type { EmailMessage } from '../../domain/email/email';

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
}

export interface EmailRepository {
  createMany(emails: readonly EmailRecord[]): Promise<void>;
  get(id: string): Promise<EmailRecord | null>;
  /** Appends an event once: a redelivered event is recorded only the first time. */
  appendEvent(id: string, entry: EmailEventEntry): Promise<void>;
}

/** Sends (or simulates) one email; what happens next arrives as events. */
export interface EmailProvider {
  send(email: EmailMessage): Promise<void>;
}
