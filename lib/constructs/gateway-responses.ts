// API Gateway's own answers (authorizer refusals, usage-plan throttling, unknown routes, size limits) in
// the one JSON error shape of DESIGN §7, so a client parses every error the same way whoever produced it.
// Gateway response templates are not VTL: static text plus $context variables, no arithmetic, so the
// rate-limit values here are constants.
import { ResponseType, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { errorBody as bodyOf } from '../../lambdas/domain/error-names';

interface GatewayError {
  readonly type: ResponseType;
  readonly status: number;
  readonly code: string;
  /** Resend's name when the code's default (error-names.ts) is not precise enough. */
  readonly name?: string;
  readonly message: string;
  readonly retryAfterSeconds?: number;
  /** Extra headers, literal values. */
  readonly headers?: Readonly<Record<string, string>>;
}

const UNAUTHORIZED = 'Missing or invalid API key: send the header Authorization: Bearer <API_KEY>.';

export const gatewayErrors: readonly GatewayError[] = [
  // No Authorization header: API Gateway refuses before calling the authorizer.
  {
    type: ResponseType.UNAUTHORIZED,
    status: 401,
    code: 'unauthorized',
    name: 'missing_api_key',
    message: UNAUTHORIZED,
  },
  // The authorizer's Deny (unknown, malformed or revoked key): for the caller that is a 401, not a 403.
  { type: ResponseType.ACCESS_DENIED, status: 401, code: 'unauthorized', message: UNAUTHORIZED },
  // The key is valid but its account has no usage-plan key (not enrolled, or being moved between plans).
  {
    type: ResponseType.INVALID_API_KEY,
    status: 403,
    code: 'forbidden',
    message: 'This account has no API access plan yet; contact support.',
  },
  { type: ResponseType.MISSING_AUTHENTICATION_TOKEN, status: 404, code: 'not_found', message: 'No such route.' },
  { type: ResponseType.RESOURCE_NOT_FOUND, status: 404, code: 'not_found', message: 'No such route.' },
  // The usage plan's token bucket (the outer, best-effort shield; the API Lambda's window is the precise one).
  {
    type: ResponseType.THROTTLED,
    status: 429,
    code: 'rate_limited',
    message: 'Rate limit exceeded; retry after 1 s.',
    retryAfterSeconds: 1,
    headers: { 'X-RateLimit-Remaining': '0' },
  },
  // No usage plan sets a request quota today; should one be added, the client still gets our shape.
  {
    type: ResponseType.QUOTA_EXCEEDED,
    status: 429,
    code: 'rate_limited',
    message: 'Request quota exceeded; retry later.',
    retryAfterSeconds: 60,
    headers: { 'X-RateLimit-Remaining': '0' },
  },
  { type: ResponseType.REQUEST_TOO_LARGE, status: 413, code: 'payload_too_large', message: 'Request body too large.' },
  // Resend's security_error: "we may have found a security issue with the request" (a managed rule matched).
  {
    type: ResponseType.WAF_FILTERED,
    status: 403,
    code: 'forbidden',
    name: 'security_error',
    message: 'Request blocked.',
  },
  // Changing DEFAULT_4XX's status changes every 4xx type not listed above; what is left (request
  // validation, SigV4 signatures, media types) this API does not use, so 400 is the honest catch-all.
  { type: ResponseType.DEFAULT_4XX, status: 400, code: 'bad_request', message: 'Bad request.' },
  // Authorizer crashes, integration time-outs, malformed Lambda answers: nothing internal leaks.
  { type: ResponseType.DEFAULT_5XX, status: 500, code: 'internal_error', message: 'Internal server error.' },
];

/** The response body, exactly as the API Lambda's error mapper would write it. */
export function errorBody(error: GatewayError): string {
  return JSON.stringify(
    bodyOf({
      message: error.message,
      status: error.status,
      code: error.code,
      ...(error.name === undefined ? {} : { name: error.name }),
      ...(error.retryAfterSeconds === undefined ? {} : { retryAfter: error.retryAfterSeconds }),
    }),
  );
}

export function addGatewayResponses(api: RestApi): void {
  for (const error of gatewayErrors) {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', ...error.headers };
    if (error.retryAfterSeconds !== undefined) headers['Retry-After'] = String(error.retryAfterSeconds);
    api.addGatewayResponse(error.type.responseType, {
      type: error.type,
      statusCode: String(error.status),
      // Header values are mapping expressions: a literal is written in single quotes.
      responseHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, `'${value}'`])),
      templates: { 'application/json': errorBody(error) },
    });
  }
}
