// Response shaping shared by every HTTP handler: JSON bodies and the one error shape (DESIGN §7).
import type { APIGatewayProxyResult } from 'aws-lambda';
import { AppError, MethodNotAllowedError, RateLimitedError } from '../../domain/errors';

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return {
    statusCode,
    headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(body),
  };
}

/** Any thrown value → the JSON error response. Unknown errors become a 500 that reveals nothing. */
export function errorResponse(error: unknown): APIGatewayProxyResult {
  if (!(error instanceof AppError)) {
    return json(500, { error: 'Internal server error.', status: 500, code: 'internal_error' });
  }
  const headers: Record<string, string> = {};
  const body: Record<string, unknown> = { error: error.message, status: error.status, code: error.code };
  if (error.details) body.details = error.details;
  if (error instanceof RateLimitedError) {
    body.retry_after = error.retryAfterSeconds;
    headers['Retry-After'] = String(error.retryAfterSeconds);
  }
  if (error instanceof MethodNotAllowedError) headers.Allow = error.allow.join(', ');
  return json(error.status, body, headers);
}
