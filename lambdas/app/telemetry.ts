// Port: what the use cases and handlers report about the work they did, for operators (metrics and one
// structured log line per attempt and per API request). Adapters decide where it goes; reporting never fails
// the work and never carries secrets, URLs or bodies.
import type { Mode } from '../domain/api-keys';
import type { AttemptKind, DeliveryStatus } from '../domain/webhooks/delivery';
import type { ErrorClass } from '../domain/webhooks/error-class';

/** One attempt of a delivery, as recorded (or not, when its claim was lost meanwhile). */
export interface AttemptReport {
  readonly deliveryId: string;
  readonly webhookId: string;
  readonly accountId: string;
  readonly mode: Mode;
  /** Event type, or `test`. */
  readonly eventType: string;
  readonly attempt: number;
  readonly kind: AttemptKind;
  /** Whether a request went out (false for a paused or deleted webhook). */
  readonly requested: boolean;
  readonly statusCode: number | null;
  readonly durationMs: number;
  /** The recorded error text, null on success. */
  readonly error: string | null;
  /** The recorded error class, null on success. */
  readonly errorClass: ErrorClass | null;
  /** The delivery's status after this attempt (pending: a retry is scheduled). */
  readonly deliveryStatus: DeliveryStatus;
  /** Whether the result was stored (false: the claim had lapsed and another attempt took over). */
  readonly recorded: boolean;
  /** First automatic attempts only: ms from the event's time to this attempt's start. */
  readonly firstAttemptLagMs?: number;
}

/** One API request, as answered. */
export interface RequestReport {
  /** The manifest route id (the OpenAPI operation id), or `unmatched` for the gateway's catch-all. */
  readonly route: string;
  readonly method: string;
  readonly status: number;
  readonly durationMs: number;
  readonly requestId: string;
  /** The authenticated caller's account, when there is one. */
  readonly accountId?: string;
}

export type EmailOutcome = 'accepted' | 'sent' | 'failed';

/** Operators' view of the work done; every method is synchronous and must not throw. */
export interface Telemetry {
  attempted(report: AttemptReport): void;
  requested(report: RequestReport): void;
  /** `count` emails (accepted) or recipients (sent, failed) reached that outcome. */
  emails(outcome: EmailOutcome, count: number): void;
  /**
   * A send worker started an email on its message's first receive, `lagMs` after the email was due (accepted, or
   * its scheduled time): what a queue's oldest-message age cannot show once messages are handed back.
   */
  sendStarted(lagMs: number): void;
  /** Publishes what was recorded and not yet published: the end of an invocation. */
  flush(): void;
}

/** Reports nothing: for use cases wired without telemetry (unit tests, tools). */
export const noTelemetry: Telemetry = {
  attempted: () => {},
  requested: () => {},
  emails: () => {},
  sendStarted: () => {},
  flush: () => {},
};
