// Every error body carries Resend's fields (name, message, statusCode) beside the spec's (error, status, code):
// over every AppError subclass the errors module exports, so a new one cannot be left out.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { errorBody, errorNameOf } from '../../lambdas/domain/error-names';
import * as errors from '../../lambdas/domain/errors';
import { AppError } from '../../lambdas/domain/errors';
import { errorResponse } from '../../lambdas/handlers/http/response';
import { validate } from '../../lambdas/handlers/http/validate';

/** One instance of each exported AppError subclass, built with arguments its constructor accepts. */
function everySubclass(): AppError[] {
  const made: AppError[] = [];
  for (const value of Object.values(errors)) {
    if (typeof value !== 'function' || value === AppError || !(value.prototype instanceof AppError)) continue;
    const Make = value as unknown as new (...args: unknown[]) => AppError;
    const extra =
      Make === errors.MethodNotAllowedError
        ? [['GET']]
        : Make === errors.RateLimitedError
          ? [2]
          : Make === errors.GoneError
            ? ['link_expired']
            : [];
    made.push(new Make(`A ${Make.name} happened.`, ...extra));
  }
  return made;
}

describe('error bodies', () => {
  const all = everySubclass();

  it('finds every subclass', () => {
    expect(all.length).toBeGreaterThanOrEqual(12);
  });

  it.each(all.map((error) => [error.constructor.name, error] as const))(
    '%s carries name, message and statusCode consistent with code, error and status',
    (_, error) => {
      const response = errorResponse(error);
      const body = JSON.parse(response.body) as Record<string, unknown>;
      expect(response.statusCode).toBe(error.status);
      expect(body).toMatchObject({
        error: error.message,
        message: error.message,
        status: error.status,
        statusCode: error.status,
        code: error.code,
        name: errorNameOf(error.code),
      });
      expect(body.name).toMatch(/^[a-z]+(_[a-z]+)*$/);
    },
  );

  it.each([
    ['invalid_json', 'validation_error'],
    ['unauthorized', 'invalid_api_key'],
    ['insufficient_scope', 'restricted_api_key'],
    ['not_found', 'not_found'],
    ['method_not_allowed', 'method_not_allowed'],
    ['idempotency_key_reused', 'invalid_idempotent_request'],
    ['idempotency_in_progress', 'concurrent_idempotent_requests'],
    ['rate_limited', 'rate_limit_exceeded'],
    ['monthly_quota_exceeded', 'monthly_quota_exceeded'],
    ['test_quota_exceeded', 'daily_quota_exceeded'],
    ['internal_error', 'internal_server_error'],
    ['domain_exists', 'domain_exists'],
    ['constructor', 'constructor'],
  ])('code %s is named %s (Resend vocabulary where it has one)', (code, name) => {
    expect(errorNameOf(code)).toBe(name);
  });

  it('a precise name given by the thrower wins over the code default', () => {
    const error = new errors.UnauthorizedError('No key.', { errorName: 'missing_api_key' });
    expect(JSON.parse(errorResponse(error).body)).toMatchObject({ code: 'unauthorized', name: 'missing_api_key' });
  });

  it('errorBody keeps details and retry_after', () => {
    expect(
      errorBody({
        message: 'm',
        status: 429,
        code: 'rate_limited',
        retryAfter: 3,
        details: [{ path: 'a', message: 'b' }],
      }),
    ).toEqual({
      error: 'm',
      message: 'm',
      status: 429,
      statusCode: 429,
      code: 'rate_limited',
      name: 'rate_limit_exceeded',
      retry_after: 3,
      details: [{ path: 'a', message: 'b' }],
    });
  });
});

describe('validation names', () => {
  const schema = z.strictObject({ from: z.email(), to: z.string(), subject: z.string().optional() });
  const nameOf = (input: unknown) => {
    try {
      validate(schema, input);
    } catch (error) {
      return (error as AppError).errorName;
    }
    return null;
  };

  it('missing_required_field when every problem is a missing field', () => {
    expect(nameOf({ subject: 'x' })).toBe('missing_required_field');
  });

  it('invalid_from_address when every problem is about from', () => {
    expect(nameOf({ from: 'nope', to: 'a@b.co' })).toBe('invalid_from_address');
  });

  it('validation_error otherwise', () => {
    expect(nameOf({ from: 'a@b.co', to: 5 })).toBe('validation_error');
  });
});
