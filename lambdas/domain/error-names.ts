// The one error body (DESIGN §7) and its Resend-compatible `name`: Resend's SDK returns the parsed body as
// `error` and reads `name`, `message` and `statusCode`, so every producer (the API Lambda, the local gateway,
// API Gateway's own answers) builds its body here and a Resend integration's error handling works unchanged.

/**
 * Our `code` → Resend's `name` where Resend has a name for the same thing (research/email.md §3.4); any other
 * code is its own name (stable snake_case either way).
 */
const RESEND_NAMES: Readonly<Record<string, string>> = {
  invalid_json: 'validation_error',
  unauthorized: 'invalid_api_key',
  insufficient_scope: 'restricted_api_key',
  idempotency_key_reused: 'invalid_idempotent_request',
  idempotency_in_progress: 'concurrent_idempotent_requests',
  rate_limited: 'rate_limit_exceeded',
  test_quota_exceeded: 'daily_quota_exceeded',
  internal_error: 'internal_server_error',
};

/** The `name` a body with this `code` carries unless its producer names it more precisely. */
export function errorNameOf(code: string): string {
  return Object.hasOwn(RESEND_NAMES, code) ? (RESEND_NAMES[code] as string) : code;
}

export interface ErrorFields {
  readonly message: string;
  readonly status: number;
  readonly code: string;
  /** Overrides errorNameOf(code), e.g. missing_api_key or missing_required_field. */
  readonly name?: string;
  readonly details?: readonly { readonly path: string; readonly message: string }[];
  readonly retryAfter?: number;
}

export interface ErrorBody {
  readonly error: string;
  readonly status: number;
  readonly code: string;
  readonly name: string;
  readonly message: string;
  readonly statusCode: number;
  readonly details?: readonly { readonly path: string; readonly message: string }[];
  readonly retry_after?: number;
}

/** The body: the spec's fields (`error`, `status`, `code`, …) and Resend's (`name`, `message`, `statusCode`). */
export function errorBody(fields: ErrorFields): ErrorBody {
  return {
    error: fields.message,
    status: fields.status,
    code: fields.code,
    name: fields.name ?? errorNameOf(fields.code),
    message: fields.message,
    statusCode: fields.status,
    ...(fields.details ? { details: fields.details } : {}),
    ...(fields.retryAfter !== undefined ? { retry_after: fields.retryAfter } : {}),
  };
}
