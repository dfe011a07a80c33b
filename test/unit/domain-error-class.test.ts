// Unit tests of the attempt error classes (lambdas/domain/webhooks/error-class.ts): every text the attempt
// makers write maps to its class, status codes win over texts, a success has no class, and anything unknown
// is `other` (the DeliveriesFailed dimension stays a small fixed set).
import { describe, expect, it } from 'vitest';
import { ATTEMPT_ERRORS, ERROR_CLASSES, errorClassOf } from '../../lambdas/domain/webhooks/error-class';

const failed = (error: string, statusCode: number | null = null) => ({ statusCode, error });

describe('errorClassOf', () => {
  it('gives a 2xx without error no class', () => {
    expect(errorClassOf({ statusCode: 200, error: null })).toBeNull();
    expect(errorClassOf({ statusCode: 299, error: null })).toBeNull();
  });

  it.each([
    [301, 'redirect not followed (HTTP 301 to https://elsewhere.example/)', 'redirect'],
    [399, 'HTTP 399', 'redirect'],
    [400, 'HTTP 400', 'http_4xx'],
    [404, 'HTTP 404', 'http_4xx'],
    [429, 'HTTP 429', 'http_4xx'],
    [499, 'HTTP 499', 'http_4xx'],
    [500, 'HTTP 500', 'http_5xx'],
    [503, 'HTTP 503', 'http_5xx'],
    [599, 'HTTP 599', 'http_5xx'],
    [101, 'HTTP 101', 'other'],
    [600, 'HTTP 600', 'other'],
  ])('classes HTTP %i by its status', (status, error, expected) => {
    expect(errorClassOf(failed(error, status))).toBe(expected);
  });

  it.each([
    [ATTEMPT_ERRORS.timedOut(10_000), 'timeout'],
    ['Headers Timeout Error', 'timeout'],
    ['Connect Timeout Error', 'timeout'],
    [ATTEMPT_ERRORS.connectionRefused, 'connection'],
    [ATTEMPT_ERRORS.connectionClosed, 'connection'],
    ['read ECONNRESET', 'connection'],
    ['connect EHOSTUNREACH 203.0.113.9:443', 'connection'],
    ['other side closed', 'connection'],
    ['unable to verify the first certificate', 'connection'],
    [ATTEMPT_ERRORS.dnsFailed('ENOTFOUND'), 'dns'],
    [ATTEMPT_ERRORS.dnsFailed('EAI_AGAIN'), 'dns'],
    ['no address for hooks.example.com', 'dns'],
    [ATTEMPT_ERRORS.urlRefused('must not point to a private, loopback or reserved address'), 'blocked_address'],
    [ATTEMPT_ERRORS.urlRefused('must use https'), 'blocked_address'],
    [ATTEMPT_ERRORS.addressNotAllowed('evil.example', '169.254.169.254'), 'blocked_address'],
    [ATTEMPT_ERRORS.webhookPaused, 'webhook_paused'],
    [ATTEMPT_ERRORS.webhookDeleted, 'webhook_deleted'],
    ['request failed', 'other'],
    ['something nobody foresaw', 'other'],
  ])('classes "%s" (no response) as %s', (error, expected) => {
    expect(errorClassOf(failed(error))).toBe(expected);
  });

  it('classes a status code before any text: a 502 whose text mentions a timeout is http_5xx', () => {
    expect(errorClassOf(failed('upstream timed out', 502))).toBe('http_5xx');
  });

  it('classes odd outcomes as other: a 2xx with an error, no status and no error', () => {
    expect(errorClassOf({ statusCode: 204, error: 'response cut' })).toBe('other');
    expect(errorClassOf({ statusCode: null, error: null })).toBe('other');
  });

  it('only ever answers one of the fixed classes', () => {
    const samples = [
      failed('x'),
      failed('x', 302),
      failed('x', 418),
      failed('x', 504),
      failed(ATTEMPT_ERRORS.timedOut(1)),
      failed(ATTEMPT_ERRORS.webhookPaused),
    ];
    for (const sample of samples) expect(ERROR_CLASSES).toContain(errorClassOf(sample));
  });
});
