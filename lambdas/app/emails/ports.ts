// Ports of the email side: storage and the sending provider (simulator now; SES for live mode on AWS later).
import type { EmailMessage } from '../../domain/email/email';

export interface EmailRecord extends EmailMessage {
  /** The latest event type for the email (its status). */
  readonly lastEvent: string;
}

export interface EmailRepository {
  createMany(emails: readonly EmailRecord[]): Promise<void>;
}

/** Sends (or simulates) one email; what happens next arrives as events. */
export interface EmailProvider {
  send(email: EmailMessage): Promise<void>;
}
