// Unit tests for the one JSON error shape (lambdas/handlers/http/response.ts, DESIGN §7).
import { describe, expect, it } from 'vitest';
import {
  type AppError,
  ConflictError,
  InsufficientScopeError,
  InvalidJsonError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  UnauthorizedError,
  ValidationError,
} from '../../lambdas/domain/errors';
import { errorResponse, json } from '../../lambdas/handlers/http/response';

function parse(body: string): Record<string, unknown> {
  return JSON.parse(body) as Record<string, unknown>;
}

describe('json', () => {
  it('serializes the body with a JSON content type and merges extra headers', () => {
    // Act
    const response = json(201, { id: 'key_1' }, { 'X-Extra': 'yes' });

    // Assert
    expect(response.statusCode).toBe(201);
    expect(response.headers).toEqual({ 'Content-Type': 'application/json; charset=utf-8', 'X-Extra': 'yes' });
    expect(parse(response.body)).toEqual({ id: 'key_1' });
  });
});

describe('errorResponse', () => {
  it.each<[AppError, number, string]>([
    [new InvalidJsonError('The request body is not valid JSON.'), 400, 'invalid_json'],
    [new UnauthorizedError('Invalid API key.'), 401, 'unauthorized'],
    [new InsufficientScopeError('Needs webhook:write.'), 403, 'insufficient_scope'],
    [new NotFoundError('No webhook wh_1.'), 404, 'not_found'],
    [new MethodNotAllowedError('PATCH not allowed.', ['GET', 'POST']), 405, 'method_not_allowed'],
    [new ConflictError('Exists.'), 409, 'conflict'],
    [new ConflictError('A retry is scheduled.', 'retry_conflict'), 409, 'retry_conflict'],
    [new PayloadTooLargeError('Too big.'), 413, 'payload_too_large'],
    [
      new ValidationError('Invalid body.', { details: [{ path: 'url', message: 'Required' }] }),
      422,
      'validation_error',
    ],
    [new RateLimitedError('Slow down.', 1), 429, 'rate_limited'],
    [new RateLimitedError('Quota used.', 86_400, 'monthly_quota_exceeded'), 429, 'monthly_quota_exceeded'],
  ])('%s → %i %s', (error, status, code) => {
    // Act
    const response = errorResponse(error);

    // Assert
    expect(response.statusCode).toBe(status);
    expect(response.headers?.['Content-Type']).toBe('application/json; charset=utf-8');
    const body = parse(response.body);
    expect(body).toMatchObject({ error: error.message, status, code, message: error.message, statusCode: status });
    expect(body.name).toMatch(/^[a-z]+(_[a-z]+)*$/);
    const allowedKeys = new Set(['error', 'status', 'code', 'details', 'retry_after', 'name', 'message', 'statusCode']);
    expect(Object.keys(body).filter((key) => !allowedKeys.has(key))).toEqual([]);
  });

  it('adds details to a validation error, and nothing else', () => {
    // Arrange
    const details = [
      { path: 'url', message: 'Must be https' },
      { path: 'events.0', message: 'Unknown event' },
    ];

    // Act
    const response = errorResponse(new ValidationError('The request body is invalid.', { details }));

    // Assert
    expect(parse(response.body)).toEqual({
      error: 'The request body is invalid.',
      status: 422,
      code: 'validation_error',
      name: 'validation_error',
      message: 'The request body is invalid.',
      statusCode: 422,
      details,
    });
    expect(response.headers).not.toHaveProperty('Retry-After');
  });

  it('adds retry_after and a Retry-After header to a 429', () => {
    // Act
    const response = errorResponse(new RateLimitedError('Rate limit exceeded.', 3));

    // Assert
    expect(parse(response.body)).toEqual({
      error: 'Rate limit exceeded.',
      status: 429,
      code: 'rate_limited',
      name: 'rate_limit_exceeded',
      message: 'Rate limit exceeded.',
      statusCode: 429,
      retry_after: 3,
    });
    expect(response.headers?.['Retry-After']).toBe('3');
  });

  it('carries retry_after for the monthly quota too', () => {
    const response = errorResponse(new RateLimitedError('Monthly quota exceeded.', 3600, 'monthly_quota_exceeded'));
    expect(parse(response.body)).toMatchObject({ status: 429, code: 'monthly_quota_exceeded', retry_after: 3600 });
    expect(response.headers?.['Retry-After']).toBe('3600');
  });

  it('adds an Allow header to a 405', () => {
    // Act
    const response = errorResponse(new MethodNotAllowedError('Method PUT is not allowed.', ['GET', 'POST']));

    // Assert
    expect(response.statusCode).toBe(405);
    expect(response.headers?.Allow).toBe('GET, POST');
    expect(parse(response.body)).toEqual({
      error: 'Method PUT is not allowed.',
      status: 405,
      code: 'method_not_allowed',
      name: 'method_not_allowed',
      message: 'Method PUT is not allowed.',
      statusCode: 405,
    });
  });

  it.each([
    ['a plain Error', new Error('connect ECONNREFUSED 10.0.3.7:8000 table sendflow-apiKeys')],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'secret_internal')")],
    ['a thrown string', 'secret_internal string'],
    ['undefined', undefined],
  ])('turns %s into a 500 internal_error that leaks nothing', (_, thrown) => {
    // Act
    const response = errorResponse(thrown);

    // Assert
    expect(response.statusCode).toBe(500);
    const body = parse(response.body);
    expect(body).toEqual({
      error: expect.any(String),
      status: 500,
      code: 'internal_error',
      name: 'internal_server_error',
      message: body.error,
      statusCode: 500,
    });
    for (const leak of ['ECONNREFUSED', '10.0.3.7', 'sendflow-apiKeys', 'secret_internal', 'TypeError', 'stack']) {
      expect(response.body).not.toContain(leak);
    }
    expect(response.headers).not.toHaveProperty('Retry-After');
    expect(response.headers).not.toHaveProperty('Allow');
  });

  it('does not put the cause of an AppError in the body', () => {
    // Arrange
    const error = new NotFoundError('No API key with id key_1.');
    Object.defineProperty(error, 'cause', { value: new Error('internal dynamo detail') });

    // Act
    const response = errorResponse(error);

    // Assert
    expect(response.body).not.toContain('internal dynamo detail');
  });
});
