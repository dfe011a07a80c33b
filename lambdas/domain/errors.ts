// The one error family. Each error knows its HTTP status and code (DESIGN §7); one middleware maps them.
import { errorNameOf } from './error-names';

export interface ErrorDetail {
  readonly path: string;
  readonly message: string;
}

export abstract class AppError extends Error {
  abstract readonly status: number;
  abstract readonly code: string;
  readonly details?: readonly ErrorDetail[];
  /** A more precise Resend-compatible name than the code's (e.g. missing_required_field for a validation error). */
  private readonly preciseName?: string;

  constructor(message: string, options?: { cause?: unknown; details?: readonly ErrorDetail[]; errorName?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    if (options?.details) this.details = options.details;
    if (options?.errorName) this.preciseName = options.errorName;
  }

  /** The body's `name` (error-names.ts): what a Resend client switches on. */
  get errorName(): string {
    return this.preciseName ?? errorNameOf(this.code);
  }
}

export class InvalidJsonError extends AppError {
  readonly status = 400;
  readonly code = 'invalid_json';
}

export class UnauthorizedError extends AppError {
  readonly status = 401;
  readonly code = 'unauthorized';
}

export class InsufficientScopeError extends AppError {
  readonly status = 403;
  readonly code = 'insufficient_scope';
}

/**
 * Sending is paused for the account (or the sending domain) because its bounce or complaint rate passed the
 * stage's pause threshold (docs/sending.md, "Sending reputation"); an operator lifts it.
 */
export class SendingPausedError extends AppError {
  readonly status = 403;
  readonly code = 'sending_paused';
}

export class NotFoundError extends AppError {
  readonly status = 404;
  readonly code = 'not_found';
}

export class MethodNotAllowedError extends AppError {
  readonly status = 405;
  readonly code = 'method_not_allowed';
  constructor(
    message: string,
    readonly allow: readonly string[],
  ) {
    super(message);
  }
}

export class ConflictError extends AppError {
  readonly status = 409;
  readonly code: string;
  constructor(message: string, code = 'conflict') {
    super(message);
    this.code = code;
  }
}

/** A public link that was genuine but is no longer valid (expired, or what it named is gone). */
export class GoneError extends AppError {
  readonly status = 410;
  readonly code: string;
  constructor(message: string, code: 'link_expired' | 'link_revoked') {
    super(message);
    this.code = code;
  }
}

export class PayloadTooLargeError extends AppError {
  readonly status = 413;
  readonly code = 'payload_too_large';
}

export class ValidationError extends AppError {
  readonly status = 422;
  readonly code = 'validation_error';
}

/** An attachment that cannot be sent as given (both or neither of content/path, a URL that cannot be fetched, …). */
export class InvalidAttachmentError extends AppError {
  readonly status = 422;
  readonly code = 'invalid_attachment';
}

/** A per-account limit on stored resources (webhooks, domains) is reached: 422, as the request cannot succeed. */
export class LimitExceededError extends AppError {
  readonly status = 422;
  readonly code = 'limit_exceeded';
}

/**
 * A dependency the request needs is failing right now (e.g. the signing secret could not be read): 503, and
 * the next request tries again. The message is the caller's; what failed is in `cause`, for the log only.
 */
export class ServiceUnavailableError extends AppError {
  readonly status = 503;
  readonly code = 'service_unavailable';
}

/** The 429 codes: the request rate, the email quotas, open listen polls, the daily byte quotas. */
export type RateLimitCode =
  | 'rate_limited'
  | 'monthly_quota_exceeded'
  | 'test_quota_exceeded'
  | 'listen_polls_exceeded'
  | 'attachment_bytes_quota_exceeded'
  | 'inbound_bytes_quota_exceeded';

export class RateLimitedError extends AppError {
  readonly status = 429;
  readonly code: string;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    code: RateLimitCode = 'rate_limited',
  ) {
    super(message);
    this.code = code;
  }
}
